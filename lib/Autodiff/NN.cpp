//===- NN.cpp - Vector-Jacobian rules of kt matmul, linear, embedding -----===//
//
// Part of Kiln. matmul covers every rank case of torch.matmul: 1-D operands
// are promoted to matrices (a row for `self`, a column for `other`), the
// gradients are computed on the promoted shapes, broadcast batch dims are
// summed away (unbroadcast) and the promotion is undone. embedding's weight
// gradient is a one-hot contraction (duplicate indices accumulate).
// conv2d and the pools are in Conv.cpp.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

LogicalResult vjpMatmul(kt::MatmulOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  Value a = op.getSelf(), b = op.getOther();
  if (!isFloatValue(a))
    return success();
  int64_t ra = GradEmitter::rankOf(a), rb = GradEmitter::rankOf(b);
  Value a2 = ra == 1 ? e.unsqueeze(a, 0) : a;  // [1, k]
  Value b2 = rb == 1 ? e.unsqueeze(b, -1) : b; // [k, 1]
  Value g2 = g;
  if (ra == 1 && rb == 1)
    g2 = e.reshape(g, {1, 1});
  else if (ra == 1)
    g2 = e.unsqueeze(g, -2);
  else if (rb == 1)
    g2 = e.unsqueeze(g, -1);
  // ga = g @ b^T, gb = a^T @ g on the promoted shapes.
  Value ga =
      e.unbroadcastTo(e.matmul(g2, e.transpose(b2, -1, -2)), a2.getType());
  Value gb =
      e.unbroadcastTo(e.matmul(e.transpose(a2, -1, -2), g2), b2.getType());
  grads[0] = ra == 1 ? e.squeeze(ga, {0}) : ga;
  grads[1] = rb == 1 ? e.squeeze(gb, {1}) : gb;
  return success();
}

LogicalResult vjpLinear(kt::LinearOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  // y = x @ w^T + b, w: [out, in].
  Value x = op.getInput(), w = op.getWeight();
  int64_t rx = GradEmitter::rankOf(x);
  int64_t out = GradEmitter::shapeOf(w)[0], in = GradEmitter::shapeOf(w)[1];
  grads[0] = e.matmul(g, w); // [.., out] @ [out, in]
  if (ShapedType::isDynamic(out) || ShapedType::isDynamic(in))
    return op.emitError("no gradient for kt.linear with a dynamic weight dim");
  Value g2 = e.reshape(g, {-1, out});
  Value x2 = e.reshape(x, {-1, in});
  grads[1] = e.matmul(e.transpose(g2, 0, 1), x2);
  if (op.getBias()) {
    SmallVector<int64_t> lead;
    for (int64_t i = 0; i + 1 < rx; ++i)
      lead.push_back(i);
    grads[2] = lead.empty() ? g : e.sum(g, lead, /*keepdim=*/false);
  }
  return success();
}

/// PyTorch's embedding_backward (dense): the gradient rows summed into the
/// weight rows the indices name, `scatter(zeros_like(weight), index, g2, 0,
/// reduce = sum)` with the indices flattened and broadcast along the
/// embedding dim (g2 = g as [N, D]). Linear in the number of indices;
/// duplicate indices accumulate; a `?` row count is fine, the embedding
/// dim must be static (g is reshaped to [N, D]).
LogicalResult vjpEmbedding(kt::EmbeddingOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  Value w = op.getWeight();
  if (!isFloatValue(w))
    return success();
  auto ws = GradEmitter::shapeOf(w);
  if (ShapedType::isDynamic(ws[1]))
    return op.emitError(
        "no gradient for kt.embedding with a dynamic embedding dim");
  Value g2 = e.reshape(g, {-1, ws[1]});
  Value idx = e.unsqueeze(e.reshape(op.getIndices(), {-1}), 1); // [N, 1]
  auto gt = cast<RankedTensorType>(g2.getType());
  if (gt.hasStaticShape())
    idx = e.op<kt::ExpandOp>({idx}, {e.attr("size", e.i64s(gt.getShape()))});
  else
    idx = e.add(idx, e.cast(e.zerosLike(g2), GradEmitter::elementTypeOf(idx)));
  grads[0] = e.op<kt::ScatterOp>(
      {e.zerosLike(w), idx, g2},
      {e.attr("dim", e.builder().getI64IntegerAttr(0)),
       e.attr("reduce", kt::ScatterReduceAttr::get(op.getContext(),
                                                   kt::ScatterReduce::sum))});
  return success();
}

} // namespace

void autodiff::registerNNVJPs(MLIRContext *ctx) {
  attachVJP<kt::MatmulOp, vjpMatmul>(ctx);
  attachVJP<kt::LinearOp, vjpLinear>(ctx);
  attachVJP<kt::EmbeddingOp, vjpEmbedding>(ctx);
}
