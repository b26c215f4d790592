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

LogicalResult vjpEmbedding(kt::EmbeddingOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  Value w = op.getWeight();
  if (!isFloatValue(w))
    return success();
  auto ws = GradEmitter::shapeOf(w);
  if (ShapedType::isDynamic(ws[0]) || ShapedType::isDynamic(ws[1]))
    return op.emitError("no gradient for kt.embedding with a dynamic weight");
  // gw = onehot(indices)^T @ g, over all index positions.
  Value oh =
      e.reshape(e.oneHot(op.getIndices(), ws[0], GradEmitter::elementTypeOf(w)),
                {-1, ws[0]});
  Value g2 = e.reshape(g, {-1, ws[1]});
  grads[0] = e.matmul(e.transpose(oh, 0, 1), g2);
  return success();
}

} // namespace

void autodiff::registerNNVJPs(MLIRContext *ctx) {
  attachVJP<kt::MatmulOp, vjpMatmul>(ctx);
  attachVJP<kt::LinearOp, vjpLinear>(ctx);
  attachVJP<kt::EmbeddingOp, vjpEmbedding>(ctx);
}
