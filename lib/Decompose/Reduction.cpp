//===- Reduction.cpp - Decompositions of var and logsumexp ----------------===//
//
// Part of Kiln. var: two passes (mean, then the sum of squared deviations)
// divided by max(0, N - correction); logsumexp: m + log(sum(exp(x - m)))
// with m the max, replaced by 0 where infinite (PyTorch's rule). var is
// computed in f64, as PyTorch's CPU kernels accumulate it (WelfordOps over
// double: torch.var(randn(3, 888) * 1e19, 1) is ~1e38, not inf);
// logsumexp in the input dtype, f32 for f16/bf16.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

#include <limits>

using namespace mlir;

namespace kiln::decompose {
namespace {

FailureOr<Values> decomposeVar(kt::VarOp op, Emitter &e) {
  Value x = e.cast(op.getSelf(), Float64Type::get(op.getContext()));
  Type f = Emitter::elementTypeOf(x);
  std::optional<SmallVector<int64_t>> dims = dimsOf(op.getDim());
  std::optional<ArrayRef<int64_t>> dimRef;
  if (dims)
    dimRef = ArrayRef<int64_t>(*dims);
  Value centered = e.sub(x, e.mean(x, dimRef, true));
  Value ss = e.sum(e.mul(centered, centered), dimRef, op.getKeepdim());
  double correction = op.getCorrection().convertToDouble();
  // N - correction, clamped at 0 (a constant when the reduced dims are
  // static).
  Value count = e.countAt(x, dimRef, f);
  Value denom = e.maximum(e.sub(count, e.scalar(correction, f)),
                          e.scalar(0.0, f));
  return Values{
      e.cast(e.div(ss, denom), Emitter::elementTypeOf(op.getSelf()))};
}

FailureOr<Values> decomposeLogsumexp(kt::LogsumexpOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  Type f = Emitter::elementTypeOf(x);
  std::optional<SmallVector<int64_t>> dims = dimsOf(op.getDim());
  std::optional<ArrayRef<int64_t>> dimRef;
  if (dims)
    dimRef = ArrayRef<int64_t>(*dims);
  // `amax` over an empty dim is an error: with a static 0 in the shape
  // there is nothing to shift (an empty reduction gives log(0) = -inf).
  if (llvm::is_contained(Emitter::shapeOf(x), 0))
    return Values{e.cast(e.log(e.sum(e.exp(x), dimRef, op.getKeepdim())),
                         Emitter::elementTypeOf(op.getSelf()))};
  Value m = e.amax(x, dimRef, true);
  Value finite =
      e.lt(e.abs(m), e.scalar(std::numeric_limits<double>::infinity(), f));
  m = e.where(finite, m, e.scalar(0.0, f));
  Value lse = e.log(e.sum(e.exp(e.sub(x, m)), dimRef, op.getKeepdim()));
  if (!op.getKeepdim()) {
    // m has the keepdim shape: drop the reduced (size-1) dims.
    SmallVector<int64_t> all;
    if (!dims || dims->empty())
      for (int64_t d = 0; d < Emitter::rankOf(m); ++d)
        all.push_back(d);
    m = e.squeeze(m, (dims && !dims->empty()) ? ArrayRef<int64_t>(*dims)
                                              : ArrayRef<int64_t>(all));
  }
  return Values{
      e.cast(e.add(lse, m), Emitter::elementTypeOf(op.getSelf()))};
}

} // namespace

void registerReductionDecompositions(MLIRContext *ctx) {
  attachDecomposition<kt::VarOp, decomposeVar>(ctx);
  attachDecomposition<kt::LogsumexpOp, decomposeLogsumexp>(ctx);
}

} // namespace kiln::decompose
