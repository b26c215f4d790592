//===- DecomposeInterface.td - Decompositions of kt ops ----*- tablegen -*-===//
//
// Part of Kiln. `kiln-decompose` asks each composite op for its expansion
// into simpler kt ops through this interface. The decompositions are
// attached to kt ops as external models by lib/Decompose
// (registerDecompositions), one file per op family, so the dialect knows
// nothing of them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DECOMPOSE_DECOMPOSEINTERFACE_TD
#define KILN_DECOMPOSE_DECOMPOSEINTERFACE_TD

include "mlir/IR/OpBase.td"

def KT_DecomposableOpInterface : OpInterface<"DecomposableOpInterface"> {
  let cppNamespace = "::kiln::decompose";
  let description = [{
    An op that can be expressed with other kt ops, as PyTorch's
    decompositions (`torch/_decomp/decompositions.py`, `torch/_refs`) do:
    softmax subtracts the max, norms compute their statistics in the input
    dtype (f32 for f16/bf16 inputs), losses follow PyTorch's formulas for
    weights, `ignore_index`, reductions and label smoothing. The expansion may
    use other decomposable ops (cross_entropy emits log_softmax and
    nll_loss); the driver expands those in turn.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point and at the op's location, kt
        ops (and `tensor.dim`/`arith` ops for `?` sizes) computing the op's
        results, and returns one value per result, of the result's element
        type and shape (a `?` of the value may be static in the result type:
        the driver inserts a `tensor.cast`). Does not erase or replace the
        op. Returns failure, with an error at the op, for a case the
        decomposition does not cover.
      }],
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "decompose",
      (ins "::mlir::OpBuilder &":$builder)>,
  ];
}

#endif // KILN_DECOMPOSE_DECOMPOSEINTERFACE_TD
