//===- Norm.cpp - Decompositions of softmax and normalizations ------------===//
//
// Part of Kiln. softmax, log_softmax, layer_norm, batch_norm (inference
// form), as PyTorch's decompositions: the max is subtracted before exp;
// statistics are computed in the input dtype, f32 for f16/bf16 inputs, and
// the result is rounded once to the input dtype.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace kiln::decompose {
namespace {

/// True when `x` has a static dim of size 0 (no elements): `amax` over an
/// empty dim is an error, so the max is not subtracted then (as PyTorch's
/// decomposition does for `numel() == 0`).
bool isStaticallyEmpty(Value x) {
  return llvm::is_contained(Emitter::shapeOf(x), 0);
}

/// softmax: e = exp(x - amax(x)); e / sum(e).
FailureOr<Values> decomposeSoftmax(kt::SoftmaxOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  int64_t dim = op.getDim();
  Value shifted = isStaticallyEmpty(x)
                      ? x
                      : e.sub(x, e.amax(x, ArrayRef<int64_t>{dim}, true));
  Value ex = e.exp(shifted);
  Value r = e.div(ex, e.sum(ex, ArrayRef<int64_t>{dim}, true));
  return Values{e.cast(r, Emitter::elementTypeOf(op.getSelf()))};
}

/// log_softmax: (x - amax(x)) - log(sum(exp(x - amax(x)))).
FailureOr<Values> decomposeLogSoftmax(kt::LogSoftmaxOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  int64_t dim = op.getDim();
  Value shifted = isStaticallyEmpty(x)
                      ? x
                      : e.sub(x, e.amax(x, ArrayRef<int64_t>{dim}, true));
  Value lse = e.log(e.sum(e.exp(shifted), ArrayRef<int64_t>{dim}, true));
  return Values{e.cast(e.sub(shifted, lse),
                       Emitter::elementTypeOf(op.getSelf()))};
}

/// layer_norm: mean and biased variance over the trailing dims (two passes),
/// (x - mean) * rsqrt(var + eps) * weight + bias.
FailureOr<Values> decomposeLayerNorm(kt::LayerNormOp op, Emitter &e) {
  Value x = op.getInput();
  int64_t k = op.getNormalizedShape().size();
  // `?` trailing dims must equal normalized_shape: a tensor.cast to the
  // static sizes is checked when it runs (the composite checks it itself).
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> refined(xType.getShape());
  for (auto [i, a] : llvm::enumerate(op.getNormalizedShape()))
    refined[refined.size() - k + i] = cast<IntegerAttr>(a).getInt();
  if (ArrayRef<int64_t>(refined) != xType.getShape())
    x = tensor::CastOp::create(e.builder(), e.getLoc(),
                               xType.clone(refined), x);
  x = e.upcast(x);
  SmallVector<int64_t> dims;
  for (int64_t d = -k; d < 0; ++d)
    dims.push_back(d);
  Value centered = e.sub(x, e.mean(x, ArrayRef<int64_t>(dims), true));
  Value var = e.mean(e.mul(centered, centered), ArrayRef<int64_t>(dims), true);
  if (!Emitter::elementTypeOf(var).isF64()) {
    // PyTorch's CPU layer_norm sums the squared deviations in float: past
    // float's range the variance is inf (and the output 0), as the kernel
    // and the lowering model it (docs/debugging.md).
    Value m2 = e.mul(var, e.countAt(x, ArrayRef<int64_t>(dims),
                                    Emitter::elementTypeOf(var)));
    Value inf = e.scalarLike(std::numeric_limits<double>::infinity(), var);
    var = e.where(e.eq(m2, inf), inf, var);
  }
  Value eps = e.scalarLike(op.getEps().convertToDouble(), var);
  Value y = e.mul(centered, e.rsqrt(e.add(var, eps)));
  if (Value w = op.getWeight())
    y = e.mul(y, e.upcast(w));
  if (Value b = op.getBias())
    y = e.add(y, e.upcast(b));
  return Values{e.cast(y, Emitter::elementTypeOf(op.getInput()))};
}

/// batch_norm (inference): per channel (dim 1),
/// (x - running_mean) * rsqrt(running_var + eps) * weight + bias.
FailureOr<Values> decomposeBatchNorm(kt::BatchNormOp op, Emitter &e) {
  Value x = e.upcast(op.getInput());
  int64_t trailing = Emitter::rankOf(x) - 2;
  // [C] -> [C, 1, ..., 1], which broadcasts against [N, C, ...].
  auto perChannel = [&](Value v) {
    v = e.upcast(v);
    for (int64_t i = 0; i < trailing; ++i)
      v = e.unsqueeze(v, -1);
    return v;
  };
  Value mean = perChannel(op.getRunningMean());
  Value var = perChannel(op.getRunningVar());
  Value eps = e.scalarLike(op.getEps().convertToDouble(), var);
  Value y = e.mul(e.sub(x, mean), e.rsqrt(e.add(var, eps)));
  if (Value w = op.getWeight())
    y = e.mul(y, perChannel(w));
  if (Value b = op.getBias())
    y = e.add(y, perChannel(b));
  return Values{e.cast(y, Emitter::elementTypeOf(op.getInput()))};
}

} // namespace

void registerNormDecompositions(MLIRContext *ctx) {
  attachDecomposition<kt::SoftmaxOp, decomposeSoftmax>(ctx);
  attachDecomposition<kt::LogSoftmaxOp, decomposeLogSoftmax>(ctx);
  attachDecomposition<kt::LayerNormOp, decomposeLayerNorm>(ctx);
  attachDecomposition<kt::BatchNormOp, decomposeBatchNorm>(ctx);
}

} // namespace kiln::decompose
