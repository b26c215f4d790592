//===- Reduction.cpp - Vector-Jacobian rules of kt reductions -------------===//
//
// Part of Kiln. The result gradient is restored to the input's rank (the
// reduced dims unsqueezed when keepdim is false) and broadcast back. amax and
// amin split the gradient evenly among tied maxima (PyTorch's
// scale_grad_by_count); prod handles zeros exactly (one zero: the product of
// the others; several: 0). Integer and bool reductions and arg-reductions
// have no gradient.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

/// The result gradient (or result) `v` of a reduction over `dims` of `x`
/// with `keepdim`, brought back to x's rank (keepdim shape).
Value restoreDims(GradEmitter &e, Value v, ArrayRef<int64_t> dims,
                  bool keepdim) {
  return keepdim ? v : e.unsqueezeDims(v, dims);
}

template <typename OpT> SmallVector<int64_t> dimsOf(OpT op) {
  return reductionDims(op.getDim(), GradEmitter::rankOf(op.getSelf()));
}

LogicalResult vjpSum(kt::SumOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  auto dims = dimsOf(op);
  grads[0] = e.expandLike(restoreDims(e, g, dims, op.getKeepdim()), x);
  return success();
}

LogicalResult vjpMean(kt::MeanOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  auto dims = dimsOf(op);
  Value gk = restoreDims(e, g, dims, op.getKeepdim());
  int64_t n = countAt(GradEmitter::shapeOf(x), dims);
  // Over `?` dims the count is read when the gradient runs.
  Value scaled = n >= 0 ? e.scale(gk, 1.0 / (double)n)
                        : e.div(gk, e.countAt(x, dims,
                                              GradEmitter::elementTypeOf(x)));
  grads[0] = e.expandLike(scaled, x);
  return success();
}

template <typename OpT>
LogicalResult vjpAmaxAmin(OpT op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  auto dims = dimsOf(op);
  bool keep = op.getKeepdim();
  Value r = restoreDims(e, op.getResult(), dims, keep);
  Value mask = e.cast(e.eq(x, r), GradEmitter::elementTypeOf(x));
  Value count = e.sum(mask, dims, /*keepdim=*/true);
  Value gk = restoreDims(e, g, dims, keep);
  grads[0] = e.mul(e.div(gk, count), mask);
  return success();
}

LogicalResult vjpProd(kt::ProdOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  auto dims = dimsOf(op);
  bool keep = op.getKeepdim();
  Value zero = e.scalarLike(0, x), one = e.scalarLike(1, x);
  Value r = restoreDims(e, op.getResult(), dims, keep);
  Value isZero = e.eq(x, zero);
  // Product of the nonzero elements, and the number of zeros.
  Value prodNonzero =
      e.op<kt::ProdOp>({e.where(isZero, one, x)},
                       {e.attr("dim", e.i64s(dims)),
                        e.attr("keepdim", e.builder().getBoolAttr(true))});
  Value zeros = e.sum(e.cast(isZero, GradEmitter::elementTypeOf(x)), dims,
                      /*keepdim=*/true);
  // d r / d x_i: r / x_i when x_i != 0; for a zero x_i, the product of the
  // others when it is the only zero, else 0.
  Value atZero = e.where(e.eq(zeros, one), prodNonzero, zero);
  Value d = e.where(isZero, atZero, e.div(r, x));
  grads[0] = e.mul(restoreDims(e, g, dims, keep), d);
  return success();
}

LogicalResult vjpVar(kt::VarOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  auto dims = dimsOf(op);
  double correction = op.getCorrection().convertToDouble();
  // 2 / (N - correction) * g * (x - mean(x))
  Value mean =
      e.op<kt::MeanOp>({x}, {e.attr("dim", e.i64s(dims)),
                             e.attr("keepdim", e.builder().getBoolAttr(true))});
  Value gk = restoreDims(e, g, dims, op.getKeepdim());
  // N - correction: a constant over static dims, else read at run time.
  int64_t n = countAt(GradEmitter::shapeOf(x), dims);
  Value denom =
      n >= 0 ? e.scalarLike((double)n - correction, x)
             : e.sub(e.countAt(x, dims, GradEmitter::elementTypeOf(x)),
                     e.scalarLike(correction, x));
  Value scaled = e.div(e.scale(gk, 2.0), denom);
  grads[0] = e.mul(scaled, e.sub(x, mean));
  return success();
}

LogicalResult vjpLogsumexp(kt::LogsumexpOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  Value x = op.getSelf();
  auto dims = dimsOf(op);
  bool keep = op.getKeepdim();
  Value r = restoreDims(e, op.getResult(), dims, keep);
  grads[0] = e.mul(restoreDims(e, g, dims, keep), e.exp(e.sub(x, r)));
  return success();
}


//===----------------------------------------------------------------------===//
// Cumulative scans
//===----------------------------------------------------------------------===//

/// `v` scanned by OpT along `dim` from the end: flip, scan, flip.
template <typename OpT>
Value reverseScan(GradEmitter &e, Value v, int64_t dim) {
  auto dims = e.attr("dims", e.i64s({dim}));
  Value f = e.op<kt::FlipOp>({v}, {dims});
  f = e.op<OpT>({f}, {e.attr("dim", e.builder().getI64IntegerAttr(dim))});
  return e.op<kt::FlipOp>({f}, {dims});
}

int64_t scanDim(Operation *op, int64_t dim) {
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  return kt::wrapDim(dim, rank);
}

bool isRank0(Value v) { return cast<RankedTensorType>(v.getType()).getRank() == 0; }

LogicalResult vjpCumsum(kt::CumsumOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  // The gradient of element i is the sum of g over j >= i.
  grads[0] = isRank0(g) ? g
                        : reverseScan<kt::CumsumOp>(e, g, scanDim(op, op.getDim()));
  return success();
}

LogicalResult vjpCumprod(kt::CumprodOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  if (isRank0(x)) {
    grads[0] = g;
    return success();
  }
  // PyTorch's cumprod_backward, zeros included: with z the first zero along
  // dim, d out_j / d x_i is out_j / x_i before z; at z the products of the
  // others (the cumprod with x_z = 1); after z, 0.
  int64_t d = scanDim(op, op.getDim());
  auto dimAttr = e.attr("dim", e.builder().getI64IntegerAttr(d));
  Value zero = e.scalarLike(0, x), one = e.scalarLike(1, x);
  Value isZero = e.eq(x, zero);
  Value zerosSoFar =
      e.op<kt::CumsumOp>({e.cast(isZero, GradEmitter::elementTypeOf(x))}, {dimAttr});
  Value before = e.eq(zerosSoFar, zero);
  Value first = e.op<kt::LogicalAndOp>({isZero, e.eq(zerosSoFar, one)});
  Value gBefore = e.div(reverseScan<kt::CumsumOp>(e, e.mul(g, op.getResult()), d),
                        e.where(isZero, one, x));
  Value outFirst = e.op<kt::CumprodOp>({e.where(first, one, x)}, {dimAttr});
  Value gFirst = reverseScan<kt::CumsumOp>(e, e.mul(g, outFirst), d);
  grads[0] = e.where(before, gBefore, e.where(first, gFirst, zero));
  return success();
}

LogicalResult vjpLogcumsumexp(kt::LogcumsumexpOp op, GradEmitter &e, Value g,
                              Grads &grads) {
  Value x = op.getSelf();
  if (isRank0(x)) {
    grads[0] = g;
    return success();
  }
  // PyTorch's logcumsumexp_backward: positive and negative parts of g in log
  // space (the lowest finite value standing for log 0), each through a
  // reverse logcumsumexp.
  int64_t d = scanDim(op, op.getDim());
  Value r = op.getResult();
  auto ft = cast<FloatType>(GradEmitter::elementTypeOf(x));
  double lowest =
      llvm::APFloat::getLargest(ft.getFloatSemantics(), /*Negative=*/true)
          .convertToDouble();
  Value lo = e.scalarLike(lowest, g), zero = e.scalarLike(0, g);
  Value logAbs = e.log(e.abs(g));
  Value logPos = e.where(e.gt(g, zero), logAbs, lo);
  Value logNeg = e.where(e.lt(g, zero), logAbs, lo);
  Value pos = e.exp(
      e.add(reverseScan<kt::LogcumsumexpOp>(e, e.sub(logPos, r), d), x));
  Value neg = e.exp(
      e.add(reverseScan<kt::LogcumsumexpOp>(e, e.sub(logNeg, r), d), x));
  grads[0] = e.sub(pos, neg);
  return success();
}

} // namespace

void autodiff::registerReductionVJPs(MLIRContext *ctx) {
  attachVJP<kt::CumsumOp, vjpCumsum>(ctx);
  attachVJP<kt::CumprodOp, vjpCumprod>(ctx);
  attachVJP<kt::LogcumsumexpOp, vjpLogcumsumexp>(ctx);
  attachVJP<kt::SumOp, vjpSum>(ctx);
  attachVJP<kt::MeanOp, vjpMean>(ctx);
  attachVJP<kt::AmaxOp, vjpAmaxAmin<kt::AmaxOp>>(ctx);
  attachVJP<kt::AminOp, vjpAmaxAmin<kt::AminOp>>(ctx);
  attachVJP<kt::ProdOp, vjpProd>(ctx);
  attachVJP<kt::VarOp, vjpVar>(ctx);
  attachVJP<kt::LogsumexpOp, vjpLogsumexp>(ctx);
  attachVJP<kt::AnyOp, vjpNone<kt::AnyOp>>(ctx);
  attachVJP<kt::AllOp, vjpNone<kt::AllOp>>(ctx);
  attachVJP<kt::ArgmaxOp, vjpNone<kt::ArgmaxOp>>(ctx);
  attachVJP<kt::ArgminOp, vjpNone<kt::ArgminOp>>(ctx);
  attachVJP<kt::ArgsortOp, vjpNone<kt::ArgsortOp>>(ctx);
  attachVJP<kt::SearchsortedOp, vjpNone<kt::SearchsortedOp>>(ctx);
  attachVJP<kt::NonzeroOp, vjpNone<kt::NonzeroOp>>(ctx);
}
