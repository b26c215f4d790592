//===- VJPInterface.td - Vector-Jacobian rules of kt ops ---*- tablegen -*-===//
//
// Part of Kiln. Reverse-mode differentiation asks each op for its
// vector-Jacobian product through this interface. The rules are attached to
// kt ops as external models by lib/Autodiff (registerVJPInterfaces), so the
// dialect knows nothing of autodiff.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_AUTODIFF_VJPINTERFACE_TD
#define KILN_AUTODIFF_VJPINTERFACE_TD

include "mlir/IR/OpBase.td"

def KT_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::kiln::autodiff";
  let description = [{
    An op with a vector-Jacobian (reverse-mode) rule. Given cotangents of its
    results it emits kt ops, at the builder's insertion point, computing the
    cotangents of its operands, exactly as PyTorch's derivative formulas
    (`tools/autograd/derivatives.yaml`) do, ties and edge cases included.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the vector-Jacobian product of this op. `resultGrads` has one
        entry per result: the cotangent of that result, or a null value for a
        zero cotangent (at least one is non-null). `operandGrads` is resized
        by the caller to the number of operands, all null; the rule sets the
        cotangent of each operand it differentiates, with the operand's type
        (broadcasting undone). A null entry means no gradient flows to that
        operand (a zero cotangent, an integer operand, or a
        non-differentiable position such as an index). Returns failure, with
        an error at the op, for a case the rule does not cover.
      }],
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // KILN_AUTODIFF_VJPINTERFACE_TD
