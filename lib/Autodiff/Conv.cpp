//===- Conv.cpp - VJP rules of conv2d, conv_transpose2d and the 2-D pools -===//
//
// Part of Kiln. The pools' rules work on the windows of the padded input: for
// each kernel offset (i, j), the strided slice
//   win_ij = xpad[:, :, i*dH :: sH][:, :, :OH, j*dW :: sW][..., :OW]
// ([N, C, OH, OW]) is what the offset sees at every output position. The
// input gradient is the sum over offsets of each window gradient scattered
// back by the inverse of the strided slice (zeros interleaved, then padded),
// with the padding cropped at the end; this is col2im written with kt
// shape ops (kH * kW slices, matmuls and adds; no transposed convolution).
//
// * avg_pool2d: window gradient g / divisor (PyTorch's divisor per output
//   position, a constant; a window with no input element gets 0).
// * max_pool2d: the gradient goes to the first window position (row-major
//   over the kernel, as PyTorch's CPU kernel) whose value equals the output;
//   padding is -inf.
// * conv2d and conv_transpose2d do not use the windows: each one's input
//   gradient is the other op (one whole op), its weight gradient one conv2d
//   over transposed operands (convWeightGrad), its bias gradient a sum.
// Unbatched ([C, H, W]) operands get a batch dim of 1. Shapes must be static.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

/// The windows of a padded [N, C, H, W] input.
struct Windows {
  int64_t H, W, OH, OW;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t hiH = 0, hiW = 0; // padding after (>= ph, pw; more for ceil_mode)

  void init() {
    int64_t needH = (OH - 1) * sh + dh * (kh - 1) + 1;
    int64_t needW = (OW - 1) * sw + dw * (kw - 1) + 1;
    hiH = std::max(ph, needH - H - ph);
    hiW = std::max(pw, needW - W - pw);
  }
  int64_t Hp() const { return H + ph + hiH; }
  int64_t Wp() const { return W + pw + hiW; }

  Value padInput(GradEmitter &e, Value x, double value) const {
    return e.op<kt::PadOp>(
        {x}, {e.attr("pad", e.i64s({pw, hiW, ph, hiH})),
              e.attr("value", e.builder().getF64FloatAttr(value))});
  }
  Value slice(GradEmitter &e, Value x, int64_t dim, int64_t start,
              int64_t len, int64_t step) const {
    auto &b = e.builder();
    return e.op<kt::SliceOp>(
        {x}, {e.attr("dim", b.getI64IntegerAttr(dim)),
              e.attr("start", b.getI64IntegerAttr(start)),
              e.attr("end", b.getI64IntegerAttr(start + (len - 1) * step + 1)),
              e.attr("step", b.getI64IntegerAttr(step))});
  }
  Value window(GradEmitter &e, Value xp, int64_t i, int64_t j) const {
    return slice(e, slice(e, xp, 2, i * dh, OH, sh), 3, j * dw, OW, sw);
  }
  /// The inverse of a strided slice along `dim`: [.., len, ..] -> [.., size, ..].
  static Value unslice(GradEmitter &e, Value g, int64_t dim, int64_t start,
                       int64_t len, int64_t step, int64_t size) {
    Value u = g;
    if (step > 1) {
      SmallVector<int64_t> merged(GradEmitter::shapeOf(g));
      merged[dim] = len * step;
      u = e.padDim(e.unsqueeze(g, dim + 1), dim + 1, 0, step - 1);
      u = e.reshape(u, merged);
    }
    return e.padDim(u, dim, start, size - start - len * step);
  }
  /// Scatters the window gradient of offset (i, j) into the padded input.
  Value unwindow(GradEmitter &e, Value g, int64_t i, int64_t j) const {
    return unslice(e, unslice(e, g, 3, j * dw, OW, sw, Wp()), 2, i * dh, OH,
                   sh, Hp());
  }
  Value crop(GradEmitter &e, Value gp) const {
    return e.padDim(e.padDim(gp, 2, -ph, -hiH), 3, -pw, -hiW);
  }
};

LogicalResult needStatic(Operation *op, ArrayRef<Value> vals) {
  for (Value v : vals)
    if (!cast<ShapedType>(v.getType()).hasStaticShape())
      return op->emitError("no gradient for '")
             << op->getName() << "' with a dynamic shape";
  return success();
}

Windows makeWindows(Value x4, Value r4, ArrayRef<int64_t> k,
                    ArrayRef<int64_t> s, ArrayRef<int64_t> p,
                    ArrayRef<int64_t> d) {
  auto xs = GradEmitter::shapeOf(x4), rs = GradEmitter::shapeOf(r4);
  Windows w{xs[2], xs[3], rs[2], rs[3], k[0], k[1], s[0], s[1],
            p[0],  p[1],  d[0],  d[1]};
  w.init();
  return w;
}

LogicalResult vjpMaxPool2d(kt::MaxPool2dOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  Value x = op.getSelf(), r = op.getResult();
  if (failed(needStatic(op, {x, r})))
    return failure();
  bool unbatched = GradEmitter::rankOf(x) == 3;
  Value x4 = unbatched ? e.unsqueeze(x, 0) : x;
  Value r4 = unbatched ? e.unsqueeze(r, 0) : r;
  Value g4 = unbatched ? e.unsqueeze(g, 0) : g;
  Windows w = makeWindows(x4, r4, op.getKernelHW(), op.getStrideHW(),
                          op.getPaddingHW(), op.getDilationHW());
  Value xp = w.padInput(e, x4, -std::numeric_limits<double>::infinity());
  Type et = GradEmitter::elementTypeOf(x);
  // `left` is 1 until a window position equal to the max has taken the
  // gradient (the first one in kernel order, as PyTorch's CPU kernel).
  Value left = e.onesLike(g4), acc;
  for (int64_t i = 0; i < w.kh; ++i)
    for (int64_t j = 0; j < w.kw; ++j) {
      Value hit = e.mul(e.cast(e.eq(w.window(e, xp, i, j), r4), et), left);
      left = e.sub(left, hit);
      Value u = w.unwindow(e, e.mul(g4, hit), i, j);
      acc = acc ? e.add(acc, u) : u;
    }
  Value gx = w.crop(e, acc);
  grads[0] = unbatched ? e.squeeze(gx, {0}) : gx;
  return success();
}

LogicalResult vjpAvgPool2d(kt::AvgPool2dOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  Value x = op.getSelf(), r = op.getResult();
  if (failed(needStatic(op, {x, r})))
    return failure();
  bool unbatched = GradEmitter::rankOf(x) == 3;
  Value x4 = unbatched ? e.unsqueeze(x, 0) : x;
  Value r4 = unbatched ? e.unsqueeze(r, 0) : r;
  Value g4 = unbatched ? e.unsqueeze(g, 0) : g;
  SmallVector<int64_t, 2> one{1, 1};
  Windows w = makeWindows(x4, r4, op.getKernelHW(), op.getStrideHW(),
                          op.getPaddingHW(), one);
  // 1 / divisor per output position (PyTorch's avg_pool2d CPU kernel).
  SmallVector<double> inv;
  for (int64_t oh = 0; oh < w.OH; ++oh)
    for (int64_t ow = 0; ow < w.OW; ++ow) {
      int64_t hs = oh * w.sh - w.ph, ws = ow * w.sw - w.pw;
      int64_t he = std::min(hs + w.kh, w.H + w.ph);
      int64_t we = std::min(ws + w.kw, w.W + w.pw);
      int64_t poolSize = (he - hs) * (we - ws);
      hs = std::max<int64_t>(hs, 0);
      ws = std::max<int64_t>(ws, 0);
      he = std::min(he, w.H);
      we = std::min(we, w.W);
      if (hs >= he || ws >= we) {
        inv.push_back(0);
        continue;
      }
      int64_t div = op.getDivisorOverride()
                        ? (int64_t)*op.getDivisorOverride()
                        : (op.getCountIncludePad() ? poolSize
                                                   : (he - hs) * (we - ws));
      inv.push_back(1.0 / (double)div);
    }
  auto ct = RankedTensorType::get({w.OH, w.OW}, e.builder().getF64Type());
  Value invT = kt::ConstantOp::create(
                   e.builder(), e.getLoc(), ct,
                   DenseElementsAttr::get(ct, ArrayRef<double>(inv)))
                   ->getResult(0);
  Type et = GradEmitter::elementTypeOf(x);
  if (!et.isF64())
    invT = e.cast(invT, et);
  Value gw = e.mul(g4, invT);
  Value acc;
  for (int64_t i = 0; i < w.kh; ++i)
    for (int64_t j = 0; j < w.kw; ++j) {
      Value u = w.unwindow(e, gw, i, j);
      acc = acc ? e.add(acc, u) : u;
    }
  Value gx = w.crop(e, acc);
  grads[0] = unbatched ? e.squeeze(gx, {0}) : gx;
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
  Value xt = x4;
  if (G == 1) {
    xt = e.permute(x4, {1, 0, 2, 3});
  } else {
    xt = e.reshape(x4, {N, G, Cg, xs[2], xs[3]});
    xt = e.permute(xt, {2, 1, 0, 3, 4});
    xt = e.reshape(xt, {Cg, G * N, xs[2], xs[3]});
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
  if (failed(needStatic(op, {x, wt, r})))
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
  if (failed(needStatic(op, {x, wt, r})))
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
