//===- VJPUtils.h - Helpers for vector-Jacobian rules -----------*- C++ -*-===//
//
// Part of Kiln. Private to lib/Autodiff: how rules attach to ops, and the
// emitter of kt ops (kt::KTBuilder plus extras) that keeps each rule close to
// its formula.
//
// A rule of a single-result op is a free function
//   LogicalResult vjpFoo(FooOp op, GradEmitter &e, Value grad,
//                        SmallVectorImpl<Value> &operandGrads);
// attached with `attachVJP<FooOp, vjpFoo>(ctx)`. `grad` is never null.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_AUTODIFF_VJPUTILS_H
#define KILN_LIB_AUTODIFF_VJPUTILS_H

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Autodiff/VJPInterface.h"
#include "kiln/Dialect/KT/IR/KTBuilder.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln::autodiff {

/// Emits kt ops at a builder's insertion point, at one location (the shared
/// kt::KTBuilder), plus what vector-Jacobian rules need on top. Its `cast`
/// always emits a kt.cast.
class GradEmitter : public kt::KTBuilder {
public:
  using KTBuilder::KTBuilder;

  /// Sums over `dims` (always passed, even when empty).
  mlir::Value sum(mlir::Value x, llvm::ArrayRef<int64_t> dims, bool keepdim) {
    return KTBuilder::sum(x, dims, keepdim);
  }
  /// x * v for a constant v.
  mlir::Value scale(mlir::Value x, double v) {
    return mul(x, scalarLike(v, x));
  }
  mlir::Value zerosLike(mlir::Value like) {
    return buildFullLike(b, loc, like, 0);
  }
  mlir::Value onesLike(mlir::Value like) {
    return buildFullLike(b, loc, like, 1);
  }
  /// `g` where `c` holds, else 0 (broadcasting a rank-0 zero).
  mlir::Value maskGrad(mlir::Value c, mlir::Value g) {
    return where(c, g, scalarLike(0, g));
  }
  /// Pads (or, negative, crops) dim `dim` of `x` by `lo` before and `hi`
  /// after, with zeros; a crop only (both <= 0) is a kt.slice (a view).
  mlir::Value padDim(mlir::Value x, int64_t dim, int64_t lo, int64_t hi);
  /// `x` with new dims of size 1 inserted so that it has `rank` dims, at the
  /// (normalized) positions `dims` of the result (reverses a reduction
  /// without keepdim).
  mlir::Value unsqueezeDims(mlir::Value x, llvm::ArrayRef<int64_t> dims);
  /// `x` (with keepdim shape) broadcast to the shape of `like`.
  mlir::Value expandLike(mlir::Value x, mlir::Value like);
  /// One-hot over the last dim: `(unsqueeze(index, -1) == arange(n))` as
  /// `elementType` (shape index.shape + [n]).
  mlir::Value oneHot(mlir::Value index, int64_t n, mlir::Type elementType);
  /// unbroadcast(g, type)
  mlir::Value unbroadcastTo(mlir::Value g, mlir::Type t) {
    return unbroadcast(b, loc, g, t);
  }
};

/// True for a ranked tensor (or scalar) of a float element type.
bool isFloatValue(mlir::Value v);

/// Dims of a reduction op over `rank` dims (an absent list is all dims),
/// normalized and sorted.
llvm::SmallVector<int64_t> reductionDims(std::optional<mlir::ArrayAttr> dim,
                                         int64_t rank);

/// Number of elements of `shape` at `dims`; -1 when one is `?`.
int64_t countAt(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> dims);

/// The external model that runs `Fn` for the single-result op `OpT`.
template <typename OpT, auto Fn>
struct VJPModel
    : public DifferentiableOpInterface::ExternalModel<VJPModel<OpT, Fn>, OpT> {
  llvm::LogicalResult
  buildVJP(mlir::Operation *op, mlir::OpBuilder &b,
           llvm::ArrayRef<mlir::Value> resultGrads,
           llvm::SmallVectorImpl<mlir::Value> &operandGrads) const {
    operandGrads.assign(op->getNumOperands(), mlir::Value());
    if (resultGrads.empty() || !resultGrads[0])
      return mlir::success();
    GradEmitter e(b, op->getLoc());
    return Fn(mlir::cast<OpT>(op), e, resultGrads[0], operandGrads);
  }
};

template <typename OpT, auto Fn> void attachVJP(mlir::MLIRContext *ctx) {
  OpT::template attachInterface<VJPModel<OpT, Fn>>(*ctx);
}

/// The rule of an op without differentiable operands, or whose derivative is
/// zero almost everywhere (floor, sign, comparisons, ...): no gradient.
template <typename OpT>
llvm::LogicalResult vjpNone(OpT, GradEmitter &, mlir::Value,
                            llvm::SmallVectorImpl<mlir::Value> &) {
  return mlir::success();
}

// Registration hooks, one per family (called by Registration.cpp).
void registerElementwiseVJPs(mlir::MLIRContext *ctx);
void registerReductionVJPs(mlir::MLIRContext *ctx);
void registerNNVJPs(mlir::MLIRContext *ctx);
void registerNormVJPs(mlir::MLIRContext *ctx);
void registerShapeVJPs(mlir::MLIRContext *ctx);
void registerCreationVJPs(mlir::MLIRContext *ctx);
void registerConvVJPs(mlir::MLIRContext *ctx);

} // namespace kiln::autodiff

#endif // KILN_LIB_AUTODIFF_VJPUTILS_H
