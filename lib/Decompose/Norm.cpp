//===- Norm.cpp - Decompositions of softmax and normalizations ------------===//
//
// Part of Kiln. softmax, log_softmax, layer_norm, batch_norm (inference
// form), as PyTorch's decompositions: the max is subtracted before exp;
// statistics are computed in the input dtype, f32 for f16/bf16 inputs, and
// the result is rounded once to the input dtype.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

using namespace mlir;

namespace kiln::decompose {
namespace {

/// softmax: e = exp(x - amax(x)); e / sum(e).
FailureOr<Values> decomposeSoftmax(kt::SoftmaxOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  int64_t dim = op.getDim();
  Value shifted = e.sub(x, e.amax(x, ArrayRef<int64_t>{dim}, true));
  Value ex = e.exp(shifted);
  Value r = e.div(ex, e.sum(ex, ArrayRef<int64_t>{dim}, true));
  return Values{e.cast(r, Emitter::elementTypeOf(op.getSelf()))};
}

/// log_softmax: (x - amax(x)) - log(sum(exp(x - amax(x)))).
FailureOr<Values> decomposeLogSoftmax(kt::LogSoftmaxOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  int64_t dim = op.getDim();
  Value shifted = e.sub(x, e.amax(x, ArrayRef<int64_t>{dim}, true));
  Value lse = e.log(e.sum(e.exp(shifted), ArrayRef<int64_t>{dim}, true));
  return Values{e.cast(e.sub(shifted, lse),
                       Emitter::elementTypeOf(op.getSelf()))};
}

/// layer_norm: mean and biased variance over the trailing dims (two passes),
/// (x - mean) * rsqrt(var + eps) * weight + bias.
FailureOr<Values> decomposeLayerNorm(kt::LayerNormOp op, Emitter &e) {
  Value x = e.upcast(op.getInput());
  int64_t k = op.getNormalizedShape().size();
  SmallVector<int64_t> dims;
  for (int64_t d = -k; d < 0; ++d)
    dims.push_back(d);
  Value centered = e.sub(x, e.mean(x, ArrayRef<int64_t>(dims), true));
  Value var = e.mean(e.mul(centered, centered), ArrayRef<int64_t>(dims), true);
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
