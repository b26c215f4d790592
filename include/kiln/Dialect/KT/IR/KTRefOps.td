//===- KTRefOps.td - kt ops on refs (mutation, aliasing) ----*- tablegen -*-===//
//
// Part of Kiln. Ops on `!kt.ref` values: load/store, fresh buffers, views that
// alias their base, and in-place ops. These are the only kt ops with memory
// effects; `kiln-functionalize` removes them (docs/functionalization.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTREFOPS_TD
#define KILN_DIALECT_KT_IR_KTREFOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"
include "kiln/Dialect/KT/IR/KTTypes.td"

// A ref op: no kind trait and no Pure (each op lists its memory effects).
// Same uniform assembly form as every kt op.
class KT_RefOpBase<string mnemonic, list<Trait> traits = []>
    : Op<KT_Dialect, mnemonic, !listconcat(traits, [KT_KnownAttributesOnly])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// load / store / alloc_ref
//===----------------------------------------------------------------------===//

def KT_LoadOp : KT_RefOpBase<"load",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "read the current value of a ref (a copy)";
  let description = [{
    The current contents of `ref` as a tensor value. Later writes to `ref` (or
    any alias of it) do not change the loaded value.

    1. The result type is the ref's tensor type: same shape and element type.

    ```mlir
    %v = kt.load %r : (!kt.ref<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "the ref read", [MemRead]>:$ref);
  let results = (outs KT_Tensor:$result);
  let hasVerifier = 1;
}

def KT_StoreOp : KT_RefOpBase<"store"> {
  let summary = "overwrite the contents of a ref with a tensor value";
  let description = [{
    Writes `value` into `ref` (and so into every alias of it).

    1. `value` and `ref` have the same element type.
    2. They have the same rank and each dim is equal; a `?` on either side is
       checked when the op runs.

    ```mlir
    kt.store %v, %r : (tensor<4xf32>, !kt.ref<4xf32>) -> ()
    ```
  }];
  let arguments = (ins KT_Tensor:$value,
                   Arg<KT_RefType, "the ref written", [MemWrite]>:$ref);
  let hasVerifier = 1;
}

def KT_AllocRefOp : KT_RefOpBase<"alloc_ref",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a fresh mutable buffer initialized with a copy of a value";
  let description = [{
    A new ref that owns its own buffer, initialized with `value` (a copy: no
    alias of any other ref). It lets a graph create local mutable tensors,
    like `x.clone()` followed by in-place ops in PyTorch.

    1. The result type is `!kt.ref` of `value`'s shape and element type.

    ```mlir
    %r = kt.alloc_ref %v : (tensor<4xf32>) -> !kt.ref<4xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$value);
  let results = (outs Res<KT_RefType, "the new buffer",
                          [MemAlloc, MemWrite]>:$result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

// A view: a ref aliasing `self` with the attributes of the value op named by
// `valueOp`; its result type is inferred with that op's shape rule
// (`inferView<ValueOp>` in KTRefOps.cpp), so it is verified exactly like it.
class KT_ViewOp<string mnemonic, string valueOp, string torchName>
    : KT_RefOpBase<"view_" # mnemonic,
                   [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "view of a ref, aliasing it (" # torchName # ")";
  let results = (outs KT_RefType:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferView<::kiln::kt::}] # valueOp # [{, $cppClass>(
          ctx, loc, getOperationName(), adaptor, types);
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::kiln::kt::isCompatibleRefTypes(l, r);
    }
  }];
}

def KT_ViewReshapeOp : KT_ViewOp<"reshape", "ReshapeOp", "torch.Tensor.view"> {
  let description = [{
    A ref with shape `shape` aliasing the elements of `self` in row-major
    order. Attributes and shape rules are those of `kt.reshape`.

    When the layout of `self` does not allow a view with that shape (a
    transposed base, for instance) the op fails when it runs, as
    `torch.Tensor.view` does ("view size is not compatible with input tensor's
    size and stride").

    ```mlir
    %v = kt.view_reshape %r {shape = [3, -1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x8xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, Variadic<Index>:$sizes,
                       I64ArrayAttr:$shape);
}

def KT_ViewTransposeOp : KT_ViewOp<"transpose", "TransposeOp", "torch.transpose"> {
  let description = [{
    A ref aliasing `self` with dims `dim0` and `dim1` swapped. Attributes and
    rules are those of `kt.transpose`.

    ```mlir
    %v = kt.view_transpose %r {dim0 = 0, dim1 = 1} : (!kt.ref<2x3xf32>) -> !kt.ref<3x2xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, I64Attr:$dim0, I64Attr:$dim1);
}

def KT_ViewPermuteOp : KT_ViewOp<"permute", "PermuteOp", "torch.permute"> {
  let description = [{
    A ref aliasing `self` whose dim `i` is dim `dims[i]` of `self`. Attributes
    and rules are those of `kt.permute`.

    ```mlir
    %v = kt.view_permute %r {dims = [2, 0, 1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x2x3xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, I64ArrayAttr:$dims);
}

def KT_ViewSliceOp : KT_ViewOp<"slice", "SliceOp", "x[start:end:step]"> {
  let description = [{
    A ref aliasing elements `start, start+step, ...` of `self` along `dim`.
    Attributes and rules are those of `kt.slice`. Slice assignment
    `x[a:b] = v` is `kt.copy_` into this view.

    ```mlir
    %v = kt.view_slice %r {dim = 0, start = 1, end = 3} : (!kt.ref<4x5xf32>) -> !kt.ref<2x5xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self,
                   DefaultValuedAttr<I64Attr, "0">:$dim,
                   OptionalAttr<I64Attr>:$start,
                   OptionalAttr<I64Attr>:$end,
                   DefaultValuedAttr<I64Attr, "1">:$step);
}

def KT_ViewSelectOp : KT_ViewOp<"select", "SelectOp", "torch.select, x[i]"> {
  let description = [{
    A ref aliasing `self` at position `index` of `dim` (the dim is removed).
    Attributes and rules are those of `kt.select`.

    ```mlir
    %v = kt.view_select %r {dim = 0, index = -1} : (!kt.ref<2x3xf32>) -> !kt.ref<3xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, I64Attr:$dim, I64Attr:$index);
}

def KT_ViewExpandOp : KT_ViewOp<"expand", "ExpandOp", "torch.Tensor.expand"> {
  let description = [{
    A ref aliasing `self` broadcast to `size` (expanded dims have stride 0, so
    several positions share one element). Attributes and rules are those of
    `kt.expand`. As in PyTorch, it can be read; writing to it (a store or an
    in-place op whose destination overlaps itself) fails when the op runs,
    and `kiln-functionalize` rejects it.

    ```mlir
    %v = kt.view_expand %r {size = [2, -1, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<2x3x4xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, I64ArrayAttr:$size);
}

def KT_ViewSqueezeOp : KT_ViewOp<"squeeze", "SqueezeOp", "torch.squeeze"> {
  let description = [{
    A ref aliasing `self` without the listed size-1 dims (all size-1 dims
    without `dim`). Attributes and rules are those of `kt.squeeze`.

    ```mlir
    %v = kt.view_squeeze %r {dim = [0]} : (!kt.ref<1x3xf32>) -> !kt.ref<3xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, OptionalAttr<I64ArrayAttr>:$dim);
}

def KT_ViewUnsqueezeOp : KT_ViewOp<"unsqueeze", "UnsqueezeOp", "torch.unsqueeze"> {
  let description = [{
    A ref aliasing `self` with a size-1 dim inserted at `dim`. Attributes and
    rules are those of `kt.unsqueeze`.

    ```mlir
    %v = kt.view_unsqueeze %r {dim = 0} : (!kt.ref<3xf32>) -> !kt.ref<1x3xf32>
    ```
  }];
  let arguments = (ins KT_RefType:$self, I64Attr:$dim);
}

//===----------------------------------------------------------------------===//
// In-place ops
//===----------------------------------------------------------------------===//

// An in-place op: reads and writes its destination ref `self` (first operand)
// and returns nothing. Verified in KTRefOps.cpp.
class KT_InPlaceOp<string mnemonic, list<Trait> traits = []>
    : KT_RefOpBase<mnemonic # "_", traits> {
  let hasVerifier = 1;
}

class KT_InPlaceBinaryOp<string mnemonic, string op>
    : KT_InPlaceOp<mnemonic> {
  let summary = "in-place " # mnemonic # " (torch.Tensor." # mnemonic # "_)";
  let description = [{
    `self = self }] # op # [{ other`, written into `self` (and its aliases).

    1. `self` and `other` share a numeric element type (not `i1`).
    2. `other` broadcasts to the shape of `self` (NumPy rules, in one
       direction only: `self`'s shape is not changed). A `?` is checked when
       the op runs.

    ```mlir
    kt.}] # mnemonic # [{_ %r, %b : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemRead, MemWrite]>:$self,
                   KT_NumericTensor:$other);
}

def KT_AddInPlaceOp : KT_InPlaceBinaryOp<"add", "+">;
def KT_SubInPlaceOp : KT_InPlaceBinaryOp<"sub", "-">;
def KT_MulInPlaceOp : KT_InPlaceBinaryOp<"mul", "*">;

def KT_DivInPlaceOp : KT_InPlaceOp<"div"> {
  let summary = "in-place division (torch.Tensor.div_)";
  let description = [{
    `self = self / other` with the rules of `kt.div`, written into `self`.

    1. `self` and `other` share a numeric element type (not `i1`).
    2. `other` broadcasts to the shape of `self`.
    3. Integer element types require `rounding_mode`.

    ```mlir
    kt.div_ %r, %b {rounding_mode = #kt.rounding_mode<floor>} : (!kt.ref<2x3xi64>, tensor<3xi64>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemRead, MemWrite]>:$self,
                   KT_NumericTensor:$other,
                   OptionalAttr<KT_RoundingModeAttr>:$rounding_mode);
}

def KT_CopyInPlaceOp : KT_InPlaceOp<"copy"> {
  let summary = "copy a value into a ref (torch.Tensor.copy_)";
  let description = [{
    Writes `src` broadcast to the shape of `self` into `self`. Slice
    assignment `x[a:b] = v` is `kt.copy_` into a `kt.view_slice` of `x`.

    1. `self` and `src` share an element type (unlike PyTorch, no implicit
       conversion: insert `kt.cast`).
    2. `src` broadcasts to the shape of `self`.

    ```mlir
    kt.copy_ %r, %v : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemWrite]>:$self,
                   KT_Tensor:$src);
}

def KT_ZeroInPlaceOp : KT_InPlaceOp<"zero"> {
  let summary = "fill a ref with zeros (torch.Tensor.zero_)";
  let description = [{
    Sets every element of `self` to 0 (`false` for `i1`).

    ```mlir
    kt.zero_ %r : (!kt.ref<2x3xf32>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemWrite]>:$self);
}

def KT_FillInPlaceOp : KT_InPlaceOp<"fill"> {
  let summary = "fill a ref with a scalar (torch.Tensor.fill_)";
  let description = [{
    Sets every element of `self` to the single element of `value`, a rank-0
    tensor (PyTorch's `fill_(Tensor value)`; a constant scalar is a
    `kt.constant` of rank 0).

    1. `value` has rank 0 and the element type of `self`.

    ```mlir
    kt.fill_ %r, %s : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemWrite]>:$self,
                   KT_Tensor:$value);
}

def KT_ReluInPlaceOp : KT_InPlaceOp<"relu"> {
  let summary = "in-place rectified linear unit (torch.relu_)";
  let description = [{
    `self = relu(self)` with the rules of `kt.relu`.

    1. `self` has a numeric element type (not `i1`).

    ```mlir
    kt.relu_ %r : (!kt.ref<2x3xf32>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemRead, MemWrite]>:$self);
}

def KT_IndexPutInPlaceOp : KT_InPlaceOp<"index_put"> {
  let summary = "write values at indexed positions (torch.Tensor.index_put_)";
  let description = [{
    `self[indices[0], ..., indices[k-1]] = values` (or `+=` with
    `accumulate = true`): the PyTorch form with k integer index tensors that
    index the leading k dims of `self`.

    The index tensors broadcast together to a shape `B`; position `b` of `B`
    addresses `self[indices[0][b], ..., indices[k-1][b], :, ..., :]`. `values`
    broadcasts to `B` followed by the remaining dims of `self`
    (`self.shape[k:]`). Negative indices count from the end of their dim;
    an index out of range is a runtime error. Without `accumulate`, when an
    index repeats, the last write in row-major order of `B` wins (PyTorch
    leaves it unspecified); with `accumulate`, every write adds.

    Supported forms (limits): integer (`i64`/`i32`) index tensors for leading
    dims only; no boolean masks, no `None`/slice entries between index
    tensors (write those through a `kt.view_*` first).

    1. There is at least one index tensor and at most rank(self).
    2. The index tensors are broadcast-compatible.
    3. `values` has the element type of `self` and broadcasts to
       `B ++ self.shape[k:]`.

    ```mlir
    kt.index_put_ %r, %i, %v {accumulate = true} : (!kt.ref<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> ()
    ```
  }];
  let arguments = (ins Arg<KT_RefType, "destination", [MemRead, MemWrite]>:$self,
                   Variadic<KT_IndexTensor>:$indices,
                   KT_Tensor:$values,
                   DefaultValuedAttr<BoolAttr, "false">:$accumulate);
}

#endif // KILN_DIALECT_KT_IR_KTREFOPS_TD
