//===- Autodiff.h - Reverse-mode differentiation of kt graphs ---*- C++ -*-===//
//
// Part of Kiln. The library behind `kiln-autodiff`: builds the joint
// (forward + backward) function of a graph function of kt ops from the
// vector-Jacobian rules of DifferentiableOpInterface, plus the helpers the
// rules share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_AUTODIFF_AUTODIFF_H
#define KILN_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace kiln::autodiff {

/// Unit attribute on a func.func: `kiln-autodiff` builds its joint function.
inline constexpr llvm::StringLiteral kDifferentiateAttr = "kg.differentiate";
/// Bool argument attribute: whether the argument requires grad (default: true
/// for float tensor arguments, false otherwise).
inline constexpr llvm::StringLiteral kRequiresGradAttr = "kg.requires_grad";
/// Attribute on any op (its value is ignored): its results carry no
/// gradient, as values PyTorch computes under `torch.no_grad()` or returns
/// from `Tensor.detach()`. The activity analysis treats them as constants,
/// so no gradient flows back through the op to its operands (and the op
/// needs no vector-Jacobian rule). The Python frontend writes `detach` as a
/// same-type `kt.cast` carrying it.
inline constexpr llvm::StringLiteral kStopGradientAttr = "kg.stop_gradient";
/// Dictionary attribute on a joint function, making it self-describing:
/// `kg.joint = {num_primals = N : i64, num_outputs = M : i64, source = @f}`.
/// The joint takes N primals then one cotangent per float output, and
/// returns the M outputs then the gradients (read by kiln-partition).
inline constexpr llvm::StringLiteral kJointAttr = "kg.joint";

/// Builds, next to `fn` (a single-block func.func of kt ops), the joint
/// function `@<name>_joint(primals..., cotangents...) -> (outputs...,
/// gradients...)`:
///
/// * one cotangent argument per float tensor result of `fn`, with its type
///   (integer and bool results get none, as in PyTorch);
/// * the outputs of `fn`, then one gradient per argument `i` with
///   `requiresGrad[i]`, with the argument's type (zeros when no path leads
///   from the argument to a float output);
/// * the attribute `kg.joint = {num_primals, num_outputs, source = @fn}`.
///
/// The forward ops are cloned first, then the backward ops in reverse order,
/// each located at the forward op it differentiates. Gradients of values used
/// several times are summed with kt.add. Fails, with an error at the op, when
/// an op on a path from a required argument to an output has no rule (or its
/// rule fails), and when a non-float argument requires grad. `requiresGrad`
/// has one entry per argument.
mlir::FailureOr<mlir::func::FuncOp>
buildJointFunction(mlir::func::FuncOp fn, llvm::ArrayRef<bool> requiresGrad);

/// Folds into each kt.batch_norm_backward of `joint` the gradient mask of a
/// kt.relu or kt.clamp 0..6 that follows its kt.batch_norm_train: where its
/// grad_output is the `kt.where(mask, g0, 0)` of that activation's rule
/// (the forward's result used only by the activation), the op is rebuilt
/// on `g0` with `activation = relu / relu6` and the batch norm's bias, and
/// the mask ops left dead are erased. Returns the number folded.
/// kiln-autodiff's and kiln-aot-autograd's `fold-norm-activation` option
/// (on by default since docs/codegen.md "Convolution training, round 11").
unsigned foldNormActivationMasks(mlir::func::FuncOp joint);

/// Which arguments of `fn` require grad: the `kg.requires_grad` argument
/// attribute where present, else true exactly for float tensor arguments.
llvm::SmallVector<bool> getRequiresGrad(mlir::func::FuncOp fn);

//===----------------------------------------------------------------------===//
// Helpers shared by the rules
//===----------------------------------------------------------------------===//

/// A rank-0 tensor of element type `elementType` holding `value` (kt.full),
/// which broadcasts against any tensor.
mlir::Value buildScalar(mlir::OpBuilder &b, mlir::Location loc, double value,
                        mlir::Type elementType);

/// A tensor of the shape and element type of `like` filled with `value`
/// (kt.full; `?` dims are read with tensor.dim).
mlir::Value buildFullLike(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value like, double value);
inline mlir::Value buildZerosLike(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value like) {
  return buildFullLike(b, loc, like, 0.0);
}

/// Sums `grad` (of a broadcast shape) back to `targetType`'s shape, undoing
/// NumPy broadcasting: kt.sum over the leading dims the target lacks and over
/// the dims where the target has size 1, then kt.reshape when needed. A `?`
/// dim of the target is taken to be unbroadcast (the documented limitation:
/// a `?` dim that is 1 at run time and broadcast is not summed).
mlir::Value unbroadcast(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value grad, mlir::Type targetType);

} // namespace kiln::autodiff

#endif // KILN_AUTODIFF_AUTODIFF_H
