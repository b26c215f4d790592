//===- KTElementwiseOps.td - kt pointwise ops --------------*- tablegen -*-===//
//
// Part of Kiln. Elementwise unary and binary ops (binary ops broadcast like
// NumPy), `where`, `clamp` and `cast`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTELEMENTWISEOPS_TD
#define KILN_DIALECT_KT_IR_KTELEMENTWISEOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

// A unary pointwise op; the result has the operand's type unless the op
// overrides `inferImpl`.
class KT_UnaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_PointwiseTrait])> {
  let arguments = (ins operandType:$self);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getSelf().getType());
      return ::mlir::success();
    }
  }];
}

// A binary pointwise op with NumPy broadcasting. The result element type is
// the operands' (shared) element type, or i1 for comparisons.
class KT_BinaryOp<string mnemonic, Type operandType, bit boolResult = 0,
                  list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_PointwiseTrait])> {
  let arguments = (ins operandType:$self, operandType:$other);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferBroadcastResult(
          ctx, loc, getOperationName(), adaptor.getOperands().getTypes(),
          /*boolResult=*/}] # !if(boolResult, "true", "false") # [{, types);
    }
  }];
}

def KT_AddOp : KT_BinaryOp<"add", KT_NumericTensor> {
  let summary = "elementwise addition with broadcasting (torch.add)";
  let description = [{
    `result = self + other`, broadcasting like NumPy.

    1. `self` and `other` share an element type (numeric, not `i1`).
    2. Their shapes are broadcast-compatible; the result has the broadcast
       shape.

    Integer addition wraps on overflow, as in PyTorch.

    ```mlir
    %r = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

def KT_ExpOp : KT_UnaryOp<"exp", KT_FloatTensor> {
  let summary = "elementwise exponential (torch.exp)";
  let description = [{
    `result = e^self`. Floating-point operands only (PyTorch promotes integer
    inputs to float; here insert `kt.cast`).

    ```mlir
    %r = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

#endif // KILN_DIALECT_KT_IR_KTELEMENTWISEOPS_TD
