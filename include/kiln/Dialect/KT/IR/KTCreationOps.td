//===- KTCreationOps.td - kt creation and type ops ---------*- tablegen -*-===//
//
// Part of Kiln. Ops that create tensors (constant, full, arange, random ops)
// and dropout.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTCREATIONOPS_TD
#define KILN_DIALECT_KT_IR_KTCREATIONOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

def KT_ConstantOp : KT_Op<"constant", [KT_CreationTrait, ConstantLike]> {
  let summary = "a tensor constant (torch.tensor)";
  let description = [{
    A tensor given by a dense elements attribute. The result type is the
    attribute's type.

    1. `value` is a dense elements attribute of a kt element type with a static
       shape equal to the result type.

    ```mlir
    %c = kt.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs KT_Tensor:$result);
  let hasVerifier = 1;
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$type, "::mlir::DenseElementsAttr":$value), [{
      build($_builder, $_state, type, ::llvm::cast<::mlir::ElementsAttr>(value));
    }]>];
}

#endif // KILN_DIALECT_KT_IR_KTCREATIONOPS_TD
