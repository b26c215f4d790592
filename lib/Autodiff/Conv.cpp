//===- Conv.cpp - VJP rules of conv2d, conv_transpose2d and the 2-D pools -===//
//
// Part of Kiln. Each rule emits whole ops, as PyTorch's
// convolution_backward / max_pool2d_with_indices_backward /
// avg_pool2d_backward:
// * conv2d and conv_transpose2d: each one's input gradient is the other op,
//   its weight gradient one conv2d over transposed operands
//   (convWeightGrad), its bias gradient a sum;
// * max_pool2d / avg_pool2d: one kt.max_pool2d_backward /
//   kt.avg_pool2d_backward with the forward's attributes.
// Unbatched ([C, H, W]) operands get a batch dim of 1 (the convolutions;
// the pool backward ops take them as they are). The convolutions' rules
// take a dynamic batch dim (the input's and result's dim 0, as a dynamic
// batch under kiln.mark_dynamic or automatic dynamic shapes gives them);
// channels, spatial dims and the weight must be static (output_padding and
// the weight gradient's crop are computed from them).
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"


using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

/// Every dim of `vals` is static except, for batched ([N, C, H, W])
/// activations, the batch dim N; `weight` is wholly static.
LogicalResult needStaticButBatch(Operation *op, ArrayRef<Value> acts,
                                 Value weight) {
  auto bad = [&](StringRef what) {
    return op->emitError("no gradient for '")
           << op->getName() << "' with a dynamic " << what
           << " (only the batch dim may be dynamic)";
  };
  if (!cast<ShapedType>(weight.getType()).hasStaticShape())
    return bad("weight shape");
  for (Value v : acts) {
    auto t = cast<ShapedType>(v.getType());
    for (int64_t d = t.getRank() == 4 ? 1 : 0; d < t.getRank(); ++d)
      if (t.isDynamicDim(d))
        return bad("channel or spatial dim");
  }
  return success();
}

/// The attributes of a pool `op` that its backward op `BwdOp` takes (the
/// same names; discardable attributes such as kg.* stay behind).
template <typename BwdOp>
SmallVector<NamedAttribute> poolAttrs(Operation *op) {
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : BwdOp::getAttributeNames())
    if (Attribute a = op->getAttr(name))
      attrs.push_back(NamedAttribute(name, a));
  return attrs;
}

/// max_pool2d: one kt.max_pool2d_backward (PyTorch's argmax rule: the first
/// maximum of each window, or its last NaN).
LogicalResult vjpMaxPool2d(kt::MaxPool2dOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  grads[0] = e.op<kt::MaxPool2dBackwardOp>(
      {g, op.getSelf()}, poolAttrs<kt::MaxPool2dBackwardOp>(op));
  return success();
}

/// avg_pool2d: one kt.avg_pool2d_backward (the forward's divisors).
LogicalResult vjpAvgPool2d(kt::AvgPool2dOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return op.emitError("no gradient for '")
           << op->getName() << "' of a non-float tensor";
  grads[0] = e.op<kt::AvgPool2dBackwardOp>(
      {g, op.getSelf()}, poolAttrs<kt::AvgPool2dBackwardOp>(op));
  return success();
}

/// The weight gradient of a convolution y = conv2d(x, w) (x [N, C, H, W],
/// w [O, C / G, kH, kW], gy [N, O, OH, OW]) as one convolution, as PyTorch
/// and oneDNN compute it: gw[o, c, i, j] = sum_{n, p, q} gy[n, o, p, q] *
/// xpad[n, g C/G + c, p s + i d, q s + j d] is conv2d of x with the channel
/// and batch dims swapped ([C/G, G N, H, W]) by gy as the weight
/// ([O, N, OH, OW]), stride and dilation exchanged, groups G. Its result
/// [C/G, O, kH', kW'] has kH' >= kH (rows past the last window): cropped,
/// then permuted to [O, C/G, kH, kW].
Value convWeightGrad(GradEmitter &e, Value x4, Value gy4, int64_t kH,
                     int64_t kW, ArrayRef<int64_t> st, ArrayRef<int64_t> pd,
                     ArrayRef<int64_t> dl, int64_t G) {
  auto xs = GradEmitter::shapeOf(x4);
  int64_t N = xs[0], C = xs[1], Cg = C / G;
  // A dynamic batch is the one size kt.reshape infers (-1).
  bool dynN = ShapedType::isDynamic(N);
  Value xt = x4;
  if (G == 1) {
    xt = e.permute(x4, {1, 0, 2, 3});
  } else {
    xt = e.reshape(x4, {dynN ? -1 : N, G, Cg, xs[2], xs[3]});
    xt = e.permute(xt, {2, 1, 0, 3, 4});
    xt = e.reshape(xt, {Cg, dynN ? -1 : G * N, xs[2], xs[3]});
  }
  Value gt = e.permute(gy4, {1, 0, 2, 3});
  auto &b = e.builder();
  Value r = e.op<kt::Conv2dOp>(
      {xt, gt}, {e.attr("stride", e.i64s({dl[0], dl[1]})),
                 e.attr("padding", e.i64s({pd[0], pd[1]})),
                 e.attr("dilation", e.i64s({st[0], st[1]})),
                 e.attr("groups", b.getI64IntegerAttr(G))});
  auto rs = GradEmitter::shapeOf(r);
  if (rs[2] != kH)
    r = e.padDim(r, 2, 0, kH - rs[2]);
  if (rs[3] != kW)
    r = e.padDim(r, 3, 0, kW - rs[3]);
  return e.permute(r, {1, 0, 2, 3});
}

/// conv2d: the input gradient is conv_transpose2d of gy with the same
/// weight and parameters (output_padding = the rows/columns past the last
/// window, so the result has x's shape exactly), the weight gradient one
/// convolution (convWeightGrad), the bias gradient a sum.
LogicalResult vjpConv2d(kt::Conv2dOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  Value x = op.getInput(), wt = op.getWeight(), r = op.getResult();
  if (failed(needStaticButBatch(op, {x, r}, wt)))
    return failure();
  bool unbatched = GradEmitter::rankOf(x) == 3;
  Value x4 = unbatched ? e.unsqueeze(x, 0) : x;
  Value g4 = unbatched ? e.unsqueeze(g, 0) : g;
  auto ws = GradEmitter::shapeOf(wt);
  auto xs = GradEmitter::shapeOf(x4), gs = GradEmitter::shapeOf(g4);
  int64_t G = op.getGroups();
  SmallVector<int64_t, 2> st = op.getStrideHW(), pd = op.getPaddingHW(),
                          dl = op.getDilationHW();
  SmallVector<int64_t, 2> outPad;
  for (int i = 0; i < 2; ++i)
    outPad.push_back(xs[2 + i] - ((gs[2 + i] - 1) * st[i] - 2 * pd[i] +
                                  dl[i] * (ws[2 + i] - 1) + 1));
  auto &b = e.builder();
  Value gx = e.op<kt::ConvTranspose2dOp>(
      {g4, wt}, {e.attr("stride", e.i64s({st[0], st[1]})),
                 e.attr("padding", e.i64s({pd[0], pd[1]})),
                 e.attr("output_padding", e.i64s({outPad[0], outPad[1]})),
                 e.attr("dilation", e.i64s({dl[0], dl[1]})),
                 e.attr("groups", b.getI64IntegerAttr(G))});
  grads[0] = unbatched ? e.squeeze(gx, {0}) : gx;
  grads[1] = convWeightGrad(e, x4, g4, ws[2], ws[3], st, pd, dl, G);
  if (op.getBias())
    grads[2] = e.sum(g4, {0, 2, 3}, /*keepdim=*/false);
  return success();
}

/// conv_transpose2d (the adjoint of conv2d in its input): the input
/// gradient is conv2d of gy with the same weight and parameters (cropped to
/// x's size where output_padding >= stride added a partial window), the
/// weight gradient convWeightGrad with the roles of input and output
/// exchanged (gy is the convolution's input, x its output), the bias
/// gradient a sum.
LogicalResult vjpConvTranspose2d(kt::ConvTranspose2dOp op, GradEmitter &e,
                                 Value g, Grads &grads) {
  Value x = op.getInput(), wt = op.getWeight(), r = op.getResult();
  if (failed(needStaticButBatch(op, {x, r}, wt)))
    return failure();
  bool unbatched = GradEmitter::rankOf(x) == 3;
  Value x4 = unbatched ? e.unsqueeze(x, 0) : x;
  Value g4 = unbatched ? e.unsqueeze(g, 0) : g;
  auto ws = GradEmitter::shapeOf(wt);
  auto xs = GradEmitter::shapeOf(x4);
  int64_t G = op.getGroups();
  SmallVector<int64_t, 2> st = op.getStrideHW(), pd = op.getPaddingHW(),
                          dl = op.getDilationHW();
  auto &b = e.builder();
  Value gx = e.op<kt::Conv2dOp>(
      {g4, wt}, {e.attr("stride", e.i64s({st[0], st[1]})),
                 e.attr("padding", e.i64s({pd[0], pd[1]})),
                 e.attr("dilation", e.i64s({dl[0], dl[1]})),
                 e.attr("groups", b.getI64IntegerAttr(G))});
  auto gxs = GradEmitter::shapeOf(gx);
  for (int i = 0; i < 2; ++i)
    if (gxs[2 + i] != xs[2 + i])
      gx = e.padDim(gx, 2 + i, 0, xs[2 + i] - gxs[2 + i]);
  grads[0] = unbatched ? e.squeeze(gx, {0}) : gx;
  grads[1] = convWeightGrad(e, g4, x4, ws[2], ws[3], st, pd, dl, G);
  if (op.getBias())
    grads[2] = e.sum(g4, {0, 2, 3}, /*keepdim=*/false);
  return success();
}

} // namespace

void autodiff::registerConvVJPs(MLIRContext *ctx) {
  attachVJP<kt::Conv2dOp, vjpConv2d>(ctx);
  attachVJP<kt::ConvTranspose2dOp, vjpConvTranspose2d>(ctx);
  attachVJP<kt::MaxPool2dOp, vjpMaxPool2d>(ctx);
  attachVJP<kt::AvgPool2dOp, vjpAvgPool2d>(ctx);
}
