//===- Attention.cpp - Decomposition of scaled_dot_product_attention ------===//
//
// Part of Kiln. PyTorch's math reference (`_scaled_dot_product_attention_math`):
// softmax(q @ k^T * scale + bias) @ v, with bias -inf above the diagonal for
// `is_causal`, -inf where a boolean mask is false, or a float mask added.
// Computed in the input dtype, f32 for f16/bf16.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::decompose {
namespace {

FailureOr<Values> decomposeSDPA(kt::ScaledDotProductAttentionOp op,
                                Emitter &e) {
  Type resultElem = Emitter::elementTypeOf(op.getQuery());
  Value q = e.upcast(op.getQuery());
  Value k = e.upcast(op.getKey());
  Value v = e.upcast(op.getValue());
  Type f = Emitter::elementTypeOf(q);
  const double inf = std::numeric_limits<double>::infinity();

  Value scale;
  if (std::optional<APFloat> s = op.getScale()) {
    scale = e.scalar(s->convertToDouble(), f);
  } else {
    int64_t embed = Emitter::shapeOf(q).back();
    scale = ShapedType::isDynamic(embed)
                ? e.rsqrt(e.countAt(q, ArrayRef<int64_t>{-1}, f))
                : e.scalar(1.0 / std::sqrt((double)embed), f);
  }
  Value scores = e.mul(e.matmul(q, e.transpose(k, -2, -1)), scale);

  if (op.getIsCausal()) {
    int64_t l = Emitter::shapeOf(q).drop_back().back();
    int64_t s = Emitter::shapeOf(k).drop_back().back();
    if (ShapedType::isDynamic(l) || ShapedType::isDynamic(s))
      return op.emitError()
             << "decomposition of is_causal needs static query and key "
                "lengths (got "
             << (ShapedType::isDynamic(l) ? "?" : std::to_string(l)) << " x "
             << (ShapedType::isDynamic(s) ? "?" : std::to_string(s)) << ")";
    // Position (i, j) is masked when j > i (tril(ones(L, S)) is kept).
    Type i64 = e.builder().getI64Type();
    Value above = e.gt(e.arange(s, i64), e.unsqueeze(e.arange(l, i64), -1));
    scores = e.where(above, e.scalar(-inf, f), scores);
  }
  if (Value mask = op.getAttnMask()) {
    if (Emitter::elementTypeOf(mask).isInteger(1))
      scores = e.where(mask, scores, e.scalar(-inf, f));
    else
      scores = e.add(scores, e.upcast(mask));
  }
  OpBuilder &b = e.builder();
  Value p = e.op<kt::SoftmaxOp>({scores},
                                {e.attr("dim", b.getI64IntegerAttr(-1))});
  return Values{e.cast(e.matmul(p, v), resultElem)};
}

} // namespace

void registerAttentionDecompositions(MLIRContext *ctx) {
  attachDecomposition<kt::ScaledDotProductAttentionOp, decomposeSDPA>(ctx);
}

} // namespace kiln::decompose
