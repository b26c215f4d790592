//===- KTTypes.td - Types of the kt dialect ----------------*- tablegen -*-===//
//
// Part of Kiln. `!kt.ref<...>`: a mutable, possibly aliased tensor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTTYPES_TD
#define KILN_DIALECT_KT_IR_KTTYPES_TD

include "kiln/Dialect/KT/IR/KTBase.td"

def KT_RefType : TypeDef<KT_Dialect, "Ref"> {
  let mnemonic = "ref";
  let summary = "a mutable, possibly aliased tensor (a PyTorch tensor with storage)";
  let description = [{
    `!kt.ref<4x?xf32>` is a handle to mutable tensor storage: the shape
    (static sizes or `?`) and element type are written like the body of a
    tensor type. A ref either owns a buffer (a function argument, or the
    result of `kt.alloc_ref`) or is a view (`kt.view_*`) that aliases the
    buffer of its base: a write through one alias is seen through all of them,
    as with PyTorch views. Values are read with `kt.load` (a copy) and written
    with `kt.store` or an in-place op (`kt.add_`, `kt.copy_`, ...).

    Refs exist so that a frontend can capture PyTorch's mutation and aliasing
    faithfully; `kiln-functionalize` removes them (see
    docs/functionalization.md), and no ref is left after that phase except
    mutated function arguments in the documented epilogue form.

    The element type is one of kt's element types.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$tensor), [{
      return $_get(tensor.getContext(), tensor.getShape(),
                   tensor.getElementType());
    }]>
  ];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getDimSize(unsigned i) const { return getShape()[i]; }
    bool hasStaticShape() const {
      return !::llvm::any_of(getShape(), ::mlir::ShapedType::isDynamic);
    }
    /// The tensor type of the ref's value (what `kt.load` returns).
    ::mlir::RankedTensorType getTensorType() const {
      return ::mlir::RankedTensorType::get(getShape(), getElementType());
    }
  }];
}

#endif // KILN_DIALECT_KT_IR_KTTYPES_TD
