//===- Convolution.cpp - kt conv2d, max_pool2d, avg_pool2d to linalg ------===//
//
// Part of Kiln. The windowed NCHW ops; an unbatched [C, H, W] operand gains
// a unit batch dim that is dropped from the result.
//
// * conv2d: `tensor.pad` (zeros) + linalg.conv_2d_nchw_fchw with the strides
//   and dilations, accumulating onto the broadcast bias; groups > 1 split the
//   channels (tensor.expand_shape) and use linalg.conv_2d_ngchw_gfchw.
//   f16/bf16 operands are widened to f32 first (f32 accumulation) and the
//   result rounded once.
// * conv_transpose2d: the same convolution ops, stride 1, over the input
//   interleaved with stride - 1 zeros and padded by dilation (k - 1) -
//   padding, with the flipped, channel-swapped weight.
// * max_pool2d: `tensor.pad` with -inf + linalg.pooling_nchw_max, whose
//   arith.maximumf propagates NaN as PyTorch does. ceil_mode windows that run
//   past the padded input read extra -inf padding.
// * avg_pool2d: zero `tensor.pad` + linalg.pooling_nchw_sum (f32 for
//   f16/bf16), then a generic dividing by the divisor PyTorch uses for the
//   window at (linalg.index 2, linalg.index 3): divisor_override, or the
//   window clipped to the padded input (count_include_pad), or the number of
//   input elements; a window without input elements gives 0.
//
// Output sizes are computed with arith on index values that fold to
// constants for static shapes.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

/// Index arithmetic on OpFoldResults: constants fold in C++ (static shapes
/// create no ops), anything else becomes arith ops on index values.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  using OFR = OpFoldResult;
  OFR c(int64_t x) { return b.getIndexAttr(x); }
  Value v(OFR x) { return getValueOrCreateConstantIndexOp(b, loc, x); }
  template <typename ArithOp>
  OFR binary(OFR x, OFR y, llvm::function_ref<int64_t(int64_t, int64_t)> f) {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx && cy)
      return c(f(*cx, *cy));
    return ArithOp::create(b, loc, v(x), v(y)).getResult();
  }
  OFR add(OFR x, OFR y) {
    return binary<arith::AddIOp>(x, y, [](int64_t p, int64_t q) { return p + q; });
  }
  OFR sub(OFR x, OFR y) {
    return binary<arith::SubIOp>(x, y, [](int64_t p, int64_t q) { return p - q; });
  }
  OFR mul(OFR x, OFR y) {
    return binary<arith::MulIOp>(x, y, [](int64_t p, int64_t q) { return p * q; });
  }
  OFR floorDiv(OFR x, OFR y) {
    return binary<arith::FloorDivSIOp>(x, y, [](int64_t p, int64_t q) {
      return p / q - ((p % q != 0) && ((p < 0) != (q < 0)) ? 1 : 0);
    });
  }
  OFR max(OFR x, OFR y) {
    return binary<arith::MaxSIOp>(x, y,
                                  [](int64_t p, int64_t q) { return std::max(p, q); });
  }
  /// x >= y ? t : f.
  OFR selectGE(OFR x, OFR y, OFR t, OFR f) {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx && cy)
      return *cx >= *cy ? t : f;
    Value cond =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v(x), v(y));
    return arith::SelectOp::create(b, loc, cond, v(t), v(f)).getResult();
  }
};

/// PyTorch's output size of a window op along one dim:
/// floor_or_ceil((in + 2 pad - dil (k - 1) - 1) / stride) + 1, and with
/// ceil_mode the last window is dropped when it starts at or past in + pad.
OpFoldResult outputSize(IndexMath &m, OpFoldResult in, OpFoldResult k,
                        int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  OpFoldResult num =
      m.sub(m.add(in, m.c(2 * pad - 1 + (ceil ? stride - 1 : 0))),
            m.mul(m.c(dil), m.sub(k, m.c(1))));
  OpFoldResult out = m.add(m.floorDiv(num, m.c(stride)), m.c(1));
  if (ceil) {
    OpFoldResult last = m.mul(m.sub(out, m.c(1)), m.c(stride));
    out = m.selectGE(last, m.add(in, m.c(pad)), m.sub(out, m.c(1)), out);
  }
  return out;
}

/// The high padding a window op needs so that every window of `out` outputs
/// lies inside the padded input: pad + max(0, last window end - (in + 2 pad)).
OpFoldResult highPadding(IndexMath &m, OpFoldResult in, OpFoldResult out,
                         int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  OpFoldResult end = m.add(m.mul(m.sub(out, m.c(1)), m.c(stride)),
                           m.c(dil * (k - 1) + 1));
  OpFoldResult extra = m.max(m.c(0), m.sub(end, m.add(in, m.c(2 * pad))));
  return m.add(m.c(pad), extra);
}

/// The run-time shape checks of a window op (conv2d, pools) on its NCHW
/// input `x` of sizes `xs`, with the interpreter's messages: `min` the
/// smallest H and W that give an output (PyTorch's rule), `tooSmall` the
/// message when the output is empty. Returns `x`, or where a check fails a
/// zero input just large enough (the lowering goes on with it).
Value checkWindowInput(OpBuilder &b, Location loc, Value x,
                       ArrayRef<OpFoldResult> xs, ArrayRef<OpFoldResult> out,
                       ArrayRef<OpFoldResult> min, Value failed,
                       StringRef tooSmall, ArrayRef<Value> tooSmallValues) {
  Value small =
      boolOr(b, loc,
             indexCmp(b, loc, arith::CmpIPredicate::slt, out[0], b.getIndexAttr(1)),
             indexCmp(b, loc, arith::CmpIPredicate::slt, out[1], b.getIndexAttr(1)));
  if (checkAtRunTime(b, loc, small, tooSmall, tooSmallValues))
    failed = boolOr(b, loc, failed, small);
  if (!failed)
    return x;
  IndexMath m{b, loc};
  SmallVector<OpFoldResult> safe(xs);
  safe[2] = m.max(xs[2], min[0]);
  safe[3] = m.max(xs[3], min[1]);
  return safeOperand(b, loc, x, failed, safe);
}

/// The pools' check of zero-size dims other than the batch (the
/// interpreter's message names the dim of the op's own input: `batched`
/// says whether NCHW dim 0 is the op's). Returns the failed flag (or null).
Value checkPoolDims(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> xs,
                    bool batched) {
  Value failed;
  for (int64_t i = 1; i < 4; ++i) {
    Value zero = indexCmp(b, loc, arith::CmpIPredicate::eq, xs[i],
                          b.getIndexAttr(0));
    int64_t d = batched ? i : i - 1;
    if (checkAtRunTime(b, loc, zero,
                       "expects non-zero sizes in all non-batch dims, got a "
                       "zero-size dim " + std::to_string(d),
                       {}))
      failed = boolOr(b, loc, failed, zero);
  }
  return failed;
}

/// A pool's run-time checks (checkPoolDims, then an output of at least 1x1)
/// on its NCHW input; `x` or the safe input, with `xs` updated.
Value checkPool(IndexMath &m, Value x, SmallVectorImpl<OpFoldResult> &xs,
                bool batched, ArrayRef<int64_t> k, ArrayRef<int64_t> st,
                ArrayRef<int64_t> pd, ArrayRef<int64_t> dl, bool ceil) {
  Value failed = checkPoolDims(m.b, m.loc, xs, batched);
  SmallVector<OpFoldResult> out, min;
  for (int i = 0; i < 2; ++i) {
    out.push_back(outputSize(m, xs[2 + i], m.c(k[i]), pd[i], st[i], dl[i], ceil));
    min.push_back(m.c(dl[i] * (k[i] - 1) + 1));
  }
  SmallVector<OpFoldResult> safe(xs.begin(), xs.end());
  safe[1] = m.max(xs[1], m.c(1));
  Value y = checkWindowInput(m.b, m.loc, x, safe, out, min, failed,
                             "output size is too small at run time: {0}x{1}",
                             {m.v(out[0]), m.v(out[1])});
  if (y != x)
    xs = getSizes(m.b, m.loc, y);
  return y;
}

SmallVector<int64_t> staticShape(ArrayRef<OpFoldResult> sizes) {
  SmallVector<int64_t> shape;
  for (OpFoldResult s : sizes)
    shape.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
  return shape;
}

RankedTensorType typeOf(ArrayRef<OpFoldResult> sizes, Type elem) {
  return RankedTensorType::get(staticShape(sizes), elem);
}

/// An unbatched [C, H, W] value as [1, C, H, W].
Value toNCHW(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  if (t.getRank() == 4)
    return x;
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, t.getShape());
  return insertUnitDims(b, loc, x,
                        RankedTensorType::get(shape, t.getElementType()), {0});
}

/// Drops the unit batch dim added by toNCHW when the op was unbatched.
Value fromNCHW(OpBuilder &b, Location loc, Value r, bool batched) {
  if (batched)
    return r;
  auto t = cast<RankedTensorType>(r.getType());
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(t.getShape().drop_front(), t.getElementType()),
      r, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

/// `x` ([N, C, H, W]) padded with `value` by `low` before and `high` after
/// H and W.
Value padHW(OpBuilder &b, Location loc, Value x, ArrayRef<OpFoldResult> low,
            ArrayRef<OpFoldResult> high, Value value) {
  bool none = true;
  for (OpFoldResult p : llvm::concat<const OpFoldResult>(low, high))
    none &= isConstantIntValue(p, 0);
  if (none)
    return x;
  SmallVector<OpFoldResult> lo = {b.getIndexAttr(0), b.getIndexAttr(0), low[0],
                                  low[1]};
  SmallVector<OpFoldResult> hi = {b.getIndexAttr(0), b.getIndexAttr(0),
                                  high[0], high[1]};
  return tensor::PadOp::create(b, loc, Type(), x, lo, hi, value);
}

/// `v` with dim `d` split into two dims of sizes `outer` and `inner`.
Value splitDim(OpBuilder &b, Location loc, Value v, int64_t d,
               OpFoldResult outer, OpFoldResult inner) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, v);
  // A `?` dim cannot expand into static dims only: keep `inner` dynamic.
  if (t.isDynamicDim(d) && getConstantIntValue(outer) &&
      getConstantIntValue(inner))
    inner = arith::DivUIOp::create(
                b, loc, getValueOrCreateConstantIndexOp(b, loc, sizes[d]),
                getValueOrCreateConstantIndexOp(b, loc, outer))
                .getResult();
  SmallVector<OpFoldResult> outSizes;
  SmallVector<ReassociationIndices> groups;
  int64_t j = 0;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (i == d) {
      outSizes.append({outer, inner});
      groups.push_back({j, j + 1});
      j += 2;
    } else {
      outSizes.push_back(sizes[i]);
      groups.push_back({j++});
    }
  }
  return tensor::ExpandShapeOp::create(
      b, loc, typeOf(outSizes, t.getElementType()), v, groups, outSizes);
}

/// The accumulator of a convolution: the bias (converted to `acc`) broadcast
/// along dim 1 of `outType`, or zeros; `channels` the output channels the
/// bias must have (checked at run time when `?`).
Value convInit(ConversionPatternRewriter &rw, Location loc, Value bias,
               Type acc, RankedTensorType outType,
               ArrayRef<OpFoldResult> outSizes, OpFoldResult channels) {
  if (!bias)
    return filled(rw, loc, outType, outSizes, scalarConst(rw, loc, acc, 0));
  Value b1 = convertTensor(rw, loc, bias, acc);
  OpFoldResult bn = getSizes(rw, loc, b1)[0];
  Value bBad = indexCmp(rw, loc, arith::CmpIPredicate::ne, bn, channels);
  if (checkAtRunTime(rw, loc, bBad,
                     "`bias` has {0} elements but there are {1} output "
                     "channels (at run time)",
                     {indexValue(rw, loc, bn), indexValue(rw, loc, channels)}))
    b1 = safeOperand(rw, loc, b1, bBad, {channels});
  AffineMap chan = AffineMap::get(4, 0, {getAffineDimExpr(1, rw.getContext())},
                                  rw.getContext());
  return linalg::GenericOp::create(
             rw, loc, TypeRange{outType}, ValueRange{b1},
             ValueRange{emptyLike(rw, loc, outType, outSizes)},
             ArrayRef<AffineMap>{chan, rw.getMultiDimIdentityMap(4)},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange a) {
               linalg::YieldOp::create(b, l, a[0]);
             })
      .getResult(0);
}

/// The convolution of the (already padded) NCHW `x` with `w` ([O, C/groups,
/// kH, kW]) accumulated onto `init`: linalg.conv_2d_nchw_fchw, or for
/// groups > 1 linalg.conv_2d_ngchw_gfchw on split channels (the CPU
/// pipeline's conv_impl / im2col rewrites match both).
Value emitConv(ConversionPatternRewriter &rw, Location loc, Value x, Value w,
               Value init, RankedTensorType outType, ArrayRef<int64_t> st,
               ArrayRef<int64_t> dl, int64_t groups) {
  Attribute strides = rw.getI64TensorAttr({st[0], st[1]});
  Attribute dilations = rw.getI64TensorAttr({dl[0], dl[1]});
  if (groups == 1)
    return linalg::Conv2DNchwFchwOp::create(rw, loc, TypeRange{outType},
                                            ValueRange{x, w}, ValueRange{init},
                                            strides, dilations)
        .getResult(0);
  // [N, G, C/G, H, W] * [G, O/G, C/G, kH, kW] -> [N, G, O/G, OH, OW].
  IndexMath m{rw, loc};
  SmallVector<OpFoldResult> ws = getSizes(rw, loc, w);
  OpFoldResult g = rw.getIndexAttr(groups);
  OpFoldResult og = m.floorDiv(ws[0], m.c(groups));
  Value xg = splitDim(rw, loc, x, 1, g, ws[1]);
  Value wg = splitDim(rw, loc, w, 0, g, og);
  Value ig = splitDim(rw, loc, init, 1, g, og);
  Value rg = linalg::Conv2DNgchwGfchwOp::create(
                 rw, loc, TypeRange{ig.getType()}, ValueRange{xg, wg},
                 ValueRange{ig}, strides, dilations)
                 .getResult(0);
  return tensor::CollapseShapeOp::create(
      rw, loc, outType, rg,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// The divisor PyTorch's avg_pool2d uses for the window of output (o[0],
/// o[1]) of an input of sizes `in` (index values): divisor_override, or the
/// window clipped to the padded input (count_include_pad), or the number of
/// input elements in it; and whether the window holds no input element.
std::pair<Value, Value> avgPoolDivisor(OpBuilder &b, Location l,
                                       ArrayRef<Value> o, ArrayRef<Value> in,
                                       ArrayRef<int64_t> k, ArrayRef<int64_t> st,
                                       ArrayRef<int64_t> pd, bool includePad,
                                       std::optional<int64_t> divOverride) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, l, v);
  };
  Value poolSize = cst(1), count = cst(1), empty;
  for (int i = 0; i < 2; ++i) {
    Value s = arith::SubIOp::create(
        b, l, arith::MulIOp::create(b, l, o[i], cst(st[i])), cst(pd[i]));
    Value e = arith::MinSIOp::create(
        b, l, arith::AddIOp::create(b, l, s, cst(k[i])),
        arith::AddIOp::create(b, l, in[i], cst(pd[i])));
    poolSize =
        arith::MulIOp::create(b, l, poolSize, arith::SubIOp::create(b, l, e, s));
    Value sc = arith::MaxSIOp::create(b, l, s, cst(0));
    Value ec = arith::MinSIOp::create(b, l, e, in[i]);
    Value n = arith::SubIOp::create(b, l, ec, sc);
    count = arith::MulIOp::create(b, l, count, n);
    Value none =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, n, cst(0));
    empty = empty ? arith::OrIOp::create(b, l, empty, none).getResult() : none;
  }
  Value div = divOverride ? cst(*divOverride) : includePad ? poolSize : count;
  return {div, empty};
}

/// Some size is the constant 0.
bool hasStaticZero(ArrayRef<OpFoldResult> sizes) {
  return llvm::any_of(sizes,
                      [](OpFoldResult d) { return isConstantIntValue(d, 0); });
}

struct Conv2dLowering : public OpConversionPattern<kt::Conv2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::Conv2dOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    bool batched =
        cast<RankedTensorType>(adaptor.getInput().getType()).getRank() == 4;
    SmallVector<int64_t, 2> st = op.getStrideHW(), pd = op.getPaddingHW(),
                            dl = op.getDilationHW();
    int64_t groups = op.getGroups();
    Value x = convertTensor(rw, loc, toNCHW(rw, loc, adaptor.getInput()), acc);
    Value w = convertTensor(rw, loc, adaptor.getWeight(), acc);
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x),
                              ws = getSizes(rw, loc, w);
    IndexMath m{rw, loc};
    {
      // Run-time checks of `?` dims (the interpreter's messages): channels
      // against the weight's, then an output of at least 1x1.
      Value failed;
      OpFoldResult channels = m.mul(ws[1], m.c(groups));
      Value chBad = indexCmp(rw, loc, arith::CmpIPredicate::ne, xs[1], channels);
      SmallVector<Value> vals = {indexValue(rw, loc, xs[1])};
      std::string cg = "{1}";
      if (std::optional<int64_t> c = getConstantIntValue(ws[1]))
        cg = std::to_string(*c);
      else
        vals.push_back(indexValue(rw, loc, ws[1]));
      if (checkAtRunTime(rw, loc, chBad,
                         "input has {0} channels but `weight` expects " + cg +
                             " x " + std::to_string(groups) +
                             " groups (at run time)",
                         vals))
        failed = chBad;
      SmallVector<OpFoldResult> out = {
          outputSize(m, xs[2], ws[2], pd[0], st[0], dl[0], false),
          outputSize(m, xs[3], ws[3], pd[1], st[1], dl[1], false)};
      SmallVector<OpFoldResult> min = {
          m.add(m.mul(m.c(dl[0]), m.sub(ws[2], m.c(1))), m.c(1)),
          m.add(m.mul(m.c(dl[1]), m.sub(ws[3], m.c(1))), m.c(1))};
      SmallVector<OpFoldResult> safeSizes(xs);
      safeSizes[1] = channels;
      Value x0 = x;
      x = checkWindowInput(
          rw, loc, x, safeSizes, out, min, failed,
          "padded input {0}x{1} is smaller than the dilated kernel (at run "
          "time)",
          {indexValue(rw, loc, m.add(xs[2], m.c(2 * pd[0]))),
           indexValue(rw, loc, m.add(xs[3], m.c(2 * pd[1])))});
      if (x != x0)
        xs = getSizes(rw, loc, x);
    }
    SmallVector<OpFoldResult> outSizes = {
        xs[0], ws[0], outputSize(m, xs[2], ws[2], pd[0], st[0], dl[0], false),
        outputSize(m, xs[3], ws[3], pd[1], st[1], dl[1], false)};
    auto outType = typeOf(outSizes, acc);
    // A statically empty input or weight (no channels, no batch, an empty
    // spatial dim): nothing to sum, the result is the bias or zeros (and a
    // slice of an empty dim does not verify: MLIR rejects any offset into
    // it).
    bool empty = hasStaticZero(xs) || hasStaticZero(ws);
    SmallVector<OpFoldResult> padding = {rw.getIndexAttr(pd[0]),
                                         rw.getIndexAttr(pd[1])};
    if (!empty)
      x = padHW(rw, loc, x, padding, padding, scalarConst(rw, loc, acc, 0));
    Value init = convInit(rw, loc, adaptor.getBias(), acc, outType, outSizes,
                          ws[0]);
    Value r = empty ? init
                    : emitConv(rw, loc, x, w, init, outType, st, dl, groups);
    r = fromNCHW(rw, loc, convertTensor(rw, loc, r, elem), batched);
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

/// conv_transpose2d as a stride-1 convolution (dilation kept) of the
/// zero-interleaved input, padded by q = dilation (k - 1) - padding before
/// and q + output_padding after (a negative q crops instead), with the
/// weight flipped in H and W and its two channel dims swapped per group:
/// w'[g * Og + o, ci, i, j] = w[g * Cig + ci, o, kH - 1 - i, kW - 1 - j].
/// The convolution goes through the same linalg ops as conv2d (so the CPU
/// pipeline's im2col + BLAS and conv_impl choices apply). The zeros cost
/// stride^2 more multiply-adds than a direct col2im; see docs/codegen.md.
struct ConvTranspose2dLowering
    : public OpConversionPattern<kt::ConvTranspose2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ConvTranspose2dOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    bool batched =
        cast<RankedTensorType>(adaptor.getInput().getType()).getRank() == 4;
    SmallVector<int64_t, 2> st = op.getStrideHW(), pd = op.getPaddingHW(),
                            opd = op.getOutputPaddingHW(),
                            dl = op.getDilationHW();
    int64_t groups = op.getGroups();
    Value x = convertTensor(rw, loc, toNCHW(rw, loc, adaptor.getInput()), acc);
    Value w = convertTensor(rw, loc, adaptor.getWeight(), acc);
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x),
                              ws = getSizes(rw, loc, w);
    IndexMath m{rw, loc};
    {
      // Run-time check of `?` channels (the interpreter's message).
      Value chBad = indexCmp(rw, loc, arith::CmpIPredicate::ne, xs[1], ws[0]);
      if (checkAtRunTime(rw, loc, chBad,
                         "input has {0} channels but `weight` expects {1} in " +
                             std::to_string(groups) + " groups (at run time)",
                         {indexValue(rw, loc, xs[1]),
                          indexValue(rw, loc, ws[0])})) {
        SmallVector<OpFoldResult> safe(xs);
        safe[1] = ws[0];
        x = safeOperand(rw, loc, x, chBad, safe);
        xs = getSizes(rw, loc, x);
      }
    }
    // Output sizes; a `?` size that comes out < 1 is reported at run time
    // and the kernel goes on with 1.
    SmallVector<OpFoldResult> out(2), lo(2), hi(2), start(2), need(2);
    Value small;
    for (int i = 0; i < 2; ++i) {
      OpFoldResult span = m.mul(m.c(dl[i]), m.sub(ws[2 + i], m.c(1)));
      out[i] = m.add(m.add(m.mul(m.sub(xs[2 + i], m.c(1)), m.c(st[i])), span),
                     m.c(opd[i] + 1 - 2 * pd[i]));
      small = boolOr(rw, loc, small,
                     indexCmp(rw, loc, arith::CmpIPredicate::slt, out[i],
                              rw.getIndexAttr(1)));
    }
    if (checkAtRunTime(rw, loc, small,
                       "output size is too small at run time: {0}x{1}",
                       {indexValue(rw, loc, out[0]),
                        indexValue(rw, loc, out[1])}))
      for (int i = 0; i < 2; ++i)
        out[i] = m.max(out[i], m.c(1));
    if (hasStaticZero(xs) || hasStaticZero(ws)) {
      // Statically empty input or weight: the bias or zeros (as conv2d).
      OpFoldResult co = m.mul(ws[1], m.c(groups));
      SmallVector<OpFoldResult> outSizes = {xs[0], co, out[0], out[1]};
      Value r = convInit(rw, loc, adaptor.getBias(), acc,
                         typeOf(outSizes, acc), outSizes, co);
      r = fromNCHW(rw, loc, convertTensor(rw, loc, r, elem), batched);
      rw.replaceOp(op, castTo(rw, loc, r, resultType));
      return success();
    }
    SmallVector<OpFoldResult> zSizes = {xs[0], xs[1]};
    for (int i = 0; i < 2; ++i) {
      OpFoldResult span = m.mul(m.c(dl[i]), m.sub(ws[2 + i], m.c(1)));
      OpFoldResult q = m.sub(span, m.c(pd[i]));
      lo[i] = m.max(q, m.c(0));
      hi[i] = m.max(m.add(q, m.c(opd[i])), m.c(0));
      start[i] = m.max(m.sub(m.c(0), q), m.c(0));
      need[i] = m.add(out[i], span); // input rows of a stride-1 conv
      OpFoldResult spread =
          m.add(m.mul(m.sub(xs[2 + i], m.c(1)), m.c(st[i])), m.c(1));
      zSizes.push_back(
          m.max(m.add(m.add(spread, lo[i]), hi[i]), m.add(start[i], need[i])));
    }
    // The zero-interleaved, padded input.
    Value zero = scalarConst(rw, loc, acc, 0);
    Value z = filled(rw, loc, typeOf(zSizes, acc), zSizes, zero);
    // (A statically empty input leaves the zeros: insert_slice rejects an
    // offset into an empty dim.)
    if (!llvm::any_of(xs, [](OpFoldResult d) { return isConstantIntValue(d, 0); }))
      z = tensor::InsertSliceOp::create(
          rw, loc, x, z,
          ArrayRef<OpFoldResult>{m.c(0), m.c(0), lo[0], lo[1]}, xs,
          ArrayRef<OpFoldResult>{m.c(1), m.c(1), m.c(st[0]), m.c(st[1])});
    SmallVector<OpFoldResult> cropSizes = {xs[0], xs[1], need[0], need[1]};
    bool whole = true;
    for (int i = 0; i < 2; ++i)
      whole &= isConstantIntValue(start[i], 0) &&
               getConstantIntValue(need[i]) &&
               getConstantIntValue(need[i]) == getConstantIntValue(zSizes[2 + i]);
    if (!whole)
      z = tensor::ExtractSliceOp::create(
          rw, loc, typeOf(cropSizes, acc), z,
          ArrayRef<OpFoldResult>{m.c(0), m.c(0), start[0], start[1]},
          cropSizes, ArrayRef<OpFoldResult>{m.c(1), m.c(1), m.c(1), m.c(1)});
    // The flipped weight with its channel dims swapped per group.
    OpFoldResult og = ws[1], cig = m.floorDiv(ws[0], m.c(groups));
    OpFoldResult co = m.mul(og, m.c(groups));
    SmallVector<OpFoldResult> wSizes = {co, cig, ws[2], ws[3]};
    auto wType = typeOf(wSizes, acc);
    Value ogV = m.v(og), cigV = m.v(cig), khV = m.v(ws[2]), kwV = m.v(ws[3]);
    Value wf =
        linalg::GenericOp::create(
            rw, loc, TypeRange{wType}, ValueRange{},
            ValueRange{emptyLike(rw, loc, wType, wSizes)},
            ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(4)},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange) {
              Value oc = linalg::IndexOp::create(b, l, 0);
              Value ci = linalg::IndexOp::create(b, l, 1);
              Value i = linalg::IndexOp::create(b, l, 2);
              Value j = linalg::IndexOp::create(b, l, 3);
              Value one = arith::ConstantIndexOp::create(b, l, 1);
              Value g = arith::DivUIOp::create(b, l, oc, ogV);
              Value o = arith::RemUIOp::create(b, l, oc, ogV);
              Value c = arith::AddIOp::create(
                  b, l, arith::MulIOp::create(b, l, g, cigV), ci);
              Value si = arith::SubIOp::create(
                  b, l, arith::SubIOp::create(b, l, khV, one), i);
              Value sj = arith::SubIOp::create(
                  b, l, arith::SubIOp::create(b, l, kwV, one), j);
              Value v = tensor::ExtractOp::create(b, l, w,
                                                  ValueRange{c, o, si, sj});
              linalg::YieldOp::create(b, l, v);
            })
            .getResult(0);
    SmallVector<OpFoldResult> outSizes = {xs[0], co, out[0], out[1]};
    auto outType = typeOf(outSizes, acc);
    Value init = convInit(rw, loc, adaptor.getBias(), acc, outType, outSizes, co);
    SmallVector<int64_t, 2> one = {1, 1};
    Value r = emitConv(rw, loc, z, wf, init, outType, one, dl, groups);
    // The parameters of the transposed conv, for backends that run it whole
    // (kiln-cpu-conv-im2col with oneDNN: its backward-data primitive on x
    // and w as they are, see kiln::cpu::transposedConvToScatter).
    // Grouped: only depthwise (one input channel per group), on the
    // linalg.conv_2d_ngchw_gfchw under emitConv's collapse.
    Operation *conv = r.getDefiningOp();
    if (groups != 1) {
      auto col = dyn_cast_or_null<tensor::CollapseShapeOp>(conv);
      conv = col && getConstantIntValue(cig) == 1 ? col.getSrc().getDefiningOp()
                                                  : nullptr;
    }
    if (conv && isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(conv))
      conv->setAttr(kConvTransposeAttr,
                    rw.getDenseI64ArrayAttr({st[0], st[1], pd[0], pd[1],
                                             opd[0], opd[1]}));
    r = fromNCHW(rw, loc, convertTensor(rw, loc, r, elem), batched);
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

struct MaxPool2dLowering : public OpConversionPattern<kt::MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::MaxPool2dOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    bool batched =
        cast<RankedTensorType>(adaptor.getSelf().getType()).getRank() == 4;
    SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                            pd = op.getPaddingHW(), dl = op.getDilationHW();
    bool ceil = op.getCeilMode();
    Value x = toNCHW(rw, loc, adaptor.getSelf());
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
    IndexMath m{rw, loc};
    x = checkPool(m, x, xs, batched, k, st, pd, dl, ceil);
    SmallVector<OpFoldResult> outSizes = {xs[0], xs[1]};
    SmallVector<OpFoldResult> low, high;
    for (int i = 0; i < 2; ++i) {
      OpFoldResult o = outputSize(m, xs[2 + i], rw.getIndexAttr(k[i]), pd[i],
                                  st[i], dl[i], ceil);
      outSizes.push_back(o);
      low.push_back(rw.getIndexAttr(pd[i]));
      high.push_back(highPadding(m, xs[2 + i], o, k[i], pd[i], st[i], dl[i]));
    }
    Value ninf =
        scalarConst(rw, loc, elem, -std::numeric_limits<double>::infinity());
    x = padHW(rw, loc, x, low, high, ninf);
    auto outType = typeOf(outSizes, elem);
    Value init = filled(rw, loc, outType, outSizes, ninf);
    Value window = tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{k[0], k[1]},
                                           elem);
    Value r = linalg::PoolingNchwMaxOp::create(
                  rw, loc, TypeRange{outType}, ValueRange{x, window},
                  ValueRange{init}, rw.getI64TensorAttr({st[0], st[1]}),
                  rw.getI64TensorAttr({dl[0], dl[1]}))
                  .getResult(0);
    r = fromNCHW(rw, loc, r, batched);
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

struct AvgPool2dLowering : public OpConversionPattern<kt::AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::AvgPool2dOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    bool batched =
        cast<RankedTensorType>(adaptor.getSelf().getType()).getRank() == 4;
    SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                            pd = op.getPaddingHW();
    bool ceil = op.getCeilMode(), includePad = op.getCountIncludePad();
    std::optional<int64_t> divOverride;
    if (IntegerAttr a = op.getDivisorOverrideAttr())
      divOverride = a.getInt();
    Value x = convertTensor(rw, loc, toNCHW(rw, loc, adaptor.getSelf()), acc);
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
    IndexMath m{rw, loc};
    x = checkPool(m, x, xs, batched, k, st, pd, {1, 1}, ceil);
    SmallVector<OpFoldResult> outSizes = {xs[0], xs[1]};
    SmallVector<OpFoldResult> low, high;
    for (int i = 0; i < 2; ++i) {
      OpFoldResult o = outputSize(m, xs[2 + i], rw.getIndexAttr(k[i]), pd[i],
                                  st[i], 1, ceil);
      outSizes.push_back(o);
      low.push_back(rw.getIndexAttr(pd[i]));
      high.push_back(highPadding(m, xs[2 + i], o, k[i], pd[i], st[i], 1));
    }
    x = padHW(rw, loc, x, low, high, scalarConst(rw, loc, acc, 0));
    auto sumType = typeOf(outSizes, acc);
    Value init = filled(rw, loc, sumType, outSizes, scalarConst(rw, loc, acc, 0));
    Value window =
        tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{k[0], k[1]}, acc);
    Value sum = linalg::PoolingNchwSumOp::create(
                    rw, loc, TypeRange{sumType}, ValueRange{x, window},
                    ValueRange{init}, rw.getI64TensorAttr({st[0], st[1]}),
                    rw.getI64TensorAttr({1, 1}))
                    .getResult(0);
    // Divide by the window's divisor.
    Value hIn = m.v(xs[2]), wIn = m.v(xs[3]);
    auto outType = typeOf(outSizes, elem);
    AffineMap id = rw.getMultiDimIdentityMap(4);
    Value r =
        linalg::GenericOp::create(
            rw, loc, TypeRange{outType}, ValueRange{sum},
            ValueRange{emptyLike(rw, loc, outType, outSizes)},
            ArrayRef<AffineMap>{id, id},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value o[2] = {linalg::IndexOp::create(b, l, 2),
                            linalg::IndexOp::create(b, l, 3)};
              auto [div, empty] = avgPoolDivisor(b, l, o, {hIn, wIn}, k, st,
                                                 pd, includePad, divOverride);
              Value divI =
                  arith::IndexCastOp::create(b, l, b.getI64Type(), div);
              Value q;
              if (isa<FloatType>(acc)) {
                q = arith::DivFOp::create(
                    b, l, a[0], arith::SIToFPOp::create(b, l, acc, divI));
              } else {
                // i64 (PyTorch's CPU kernel): truncating division; the
                // divisor is never 0 (a verified divisor_override or a
                // window with an input element; empty windows give 0
                // below, so a 0 count is replaced by 1 first).
                Value zero = arith::ConstantIntOp::create(b, l, acc, 0);
                Value one = arith::ConstantIntOp::create(b, l, acc, 1);
                Value isZero = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq, divI, zero);
                divI = arith::SelectOp::create(b, l, isZero, one, divI);
                // INT64_MIN / -1 is undefined in arith.divsi: x / -1 = -x
                // (wraps) instead.
                Value minusOne = arith::ConstantIntOp::create(b, l, acc, -1);
                Value isM1 = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq, divI, minusOne);
                Value safeDiv = arith::SelectOp::create(b, l, isM1, one, divI);
                Value qd = arith::DivSIOp::create(b, l, a[0], safeDiv);
                Value neg = arith::SubIOp::create(b, l, zero, a[0]);
                q = arith::SelectOp::create(b, l, isM1, neg, qd);
              }
              q = arith::SelectOp::create(b, l, empty,
                                          scalarConst(b, l, acc, 0), q);
              linalg::YieldOp::create(b, l, convertScalar(b, l, q, elem));
            })
            .getResult(0);
    r = fromNCHW(rw, loc, r, batched);
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

/// The backward ops' `grad_output` (NCHW, converted to `acc`) checked
/// against the forward's output sizes (`?` dims at run time, the
/// interpreter's message); a safe zero tensor where the check fails.
Value checkPoolGrad(IndexMath &m, Value g, ArrayRef<OpFoldResult> outSizes) {
  OpBuilder &b = m.b;
  Location loc = m.loc;
  SmallVector<OpFoldResult> gs = getSizes(b, loc, g);
  Value bad;
  for (int i = 0; i < 4; ++i)
    bad = boolOr(b, loc, bad,
                 indexCmp(b, loc, arith::CmpIPredicate::ne, gs[i], outSizes[i]));
  if (checkAtRunTime(b, loc, bad,
                     "`grad_output` has shape [{0}, {1}, {2}, {3}] but the "
                     "pooling of `self` gives [{4}, {5}, {6}, {7}] (at run "
                     "time)",
                     {indexValue(b, loc, gs[0]), indexValue(b, loc, gs[1]),
                      indexValue(b, loc, gs[2]), indexValue(b, loc, gs[3]),
                      indexValue(b, loc, outSizes[0]),
                      indexValue(b, loc, outSizes[1]),
                      indexValue(b, loc, outSizes[2]),
                      indexValue(b, loc, outSizes[3])}))
    return safeOperand(b, loc, g, bad, outSizes);
  return g;
}

/// A gather over the input positions of a pool: a linalg.generic over
/// [N, C, H, W] x (kH, kW) (the kernel dims are reductions, read through an
/// empty [kH, kW] window operand) that adds, for each kernel offset whose
/// output position (oh, ow) = ((ih + pad - kh dil) / stride, ...) exists,
/// `term(oh, ow, ih, iw)`; the accumulator starts at 0.
Value poolGather(OpBuilder &rw, Location loc, RankedTensorType type,
                 ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> k,
                 ArrayRef<int64_t> st, ArrayRef<int64_t> pd,
                 ArrayRef<int64_t> dl, ArrayRef<Value> outHW,
                 function_ref<Value(OpBuilder &, Location, Value oh, Value ow,
                                    Value ih, Value iw)>
                     term) {
  Type acc = type.getElementType();
  Value init = filled(rw, loc, type, sizes, scalarConst(rw, loc, acc, 0));
  Value window =
      tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{k[0], k[1]}, acc);
  MLIRContext *ctx = rw.getContext();
  AffineMap win = AffineMap::get(
      6, 0, {getAffineDimExpr(4, ctx), getAffineDimExpr(5, ctx)}, ctx);
  AffineMap out = AffineMap::getMultiDimIdentityMap(6, ctx).getMajorSubMap(4);
  SmallVector<utils::IteratorType> its(4, utils::IteratorType::parallel);
  its.append(2, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             rw, loc, TypeRange{type}, ValueRange{window}, ValueRange{init},
             ArrayRef<AffineMap>{win, out}, its,
             [&](OpBuilder &b, Location l, ValueRange a) {
               auto cst = [&](int64_t v) -> Value {
                 return arith::ConstantIndexOp::create(b, l, v);
               };
               Value in[2], o[2], ok;
               for (int i = 0; i < 2; ++i) {
                 in[i] = linalg::IndexOp::create(b, l, 2 + i);
                 Value kk = linalg::IndexOp::create(b, l, 4 + i);
                 // num = i + pad - k dil: the window start (x stride) of
                 // the output that sees input i at offset k.
                 Value num = arith::SubIOp::create(
                     b, l, arith::AddIOp::create(b, l, in[i], cst(pd[i])),
                     arith::MulIOp::create(b, l, kk, cst(dl[i])));
                 Value q = arith::FloorDivSIOp::create(b, l, num, cst(st[i]));
                 Value r = arith::RemSIOp::create(b, l, num, cst(st[i]));
                 Value c = arith::AndIOp::create(
                     b, l,
                     arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                           num, cst(0)),
                     arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r,
                                           cst(0)));
                 c = arith::AndIOp::create(
                     b, l, c,
                     arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, q,
                                           outHW[i]));
                 ok = ok ? arith::AndIOp::create(b, l, ok, c).getResult() : c;
                 // Clamped into range (the term is dropped where !ok).
                 Value lo = arith::MaxSIOp::create(b, l, q, cst(0));
                 Value hiB = arith::SubIOp::create(b, l, outHW[i], cst(1));
                 o[i] = arith::MinSIOp::create(
                     b, l, lo, arith::MaxSIOp::create(b, l, hiB, cst(0)));
               }
               Value t = term(b, l, o[0], o[1], in[0], in[1]);
               Value zero = scalarConst(b, l, acc, 0);
               t = arith::SelectOp::create(b, l, ok, t, zero);
               linalg::YieldOp::create(b, l,
                                       arith::AddFOp::create(b, l, a[1], t)
                                           .getResult());
             })
      .getResult(0);
}

/// max_pool2d_backward's argmax (1) as one all-parallel linalg.generic over
/// the output positions whose kH * kW inputs are strided slices of the
/// padded input (as kiln-cpu-pool-windows makes of the forward pool),
/// folded in the argmax generic's order (kh outer, kw inner) with its rule:
/// an in-bounds position takes over when greater or NaN, the first
/// in-bounds one when none does. The result is the argmax's offset in its
/// window, kh * kW + kw, as i8 (-1 for a window with no in-bounds
/// position): an eighth of the flat `index` the reduction form writes.
/// Null when H or W is `?` or the window has more than 64 elements.
Value maxPoolArgmaxByWindows(OpBuilder &rw, Location loc, Value xp,
                             ArrayRef<OpFoldResult> xs, ArrayRef<int64_t> k,
                             ArrayRef<int64_t> st, ArrayRef<int64_t> pd,
                             ArrayRef<int64_t> dl,
                             ArrayRef<OpFoldResult> outSizes) {
  std::optional<int64_t> hIn = getConstantIntValue(xs[2]),
                         wIn = getConstantIntValue(xs[3]);
  if (!hIn || !wIn || !getConstantIntValue(outSizes[2]) ||
      !getConstantIntValue(outSizes[3]) || k[0] * k[1] > 64)
    return Value();
  Type acc = cast<RankedTensorType>(xp.getType()).getElementType();
  SmallVector<Value> ins;
  OpFoldResult one = rw.getIndexAttr(1), zero = rw.getIndexAttr(0);
  for (int64_t kh = 0; kh < k[0]; ++kh)
    for (int64_t kw = 0; kw < k[1]; ++kw)
      ins.push_back(tensor::ExtractSliceOp::create(
          rw, loc, xp,
          SmallVector<OpFoldResult>{zero, zero, rw.getIndexAttr(kh * dl[0]),
                                    rw.getIndexAttr(kw * dl[1])},
          outSizes,
          SmallVector<OpFoldResult>{one, one, rw.getIndexAttr(st[0]),
                                    rw.getIndexAttr(st[1])}));
  auto idxType = typeOf(outSizes, rw.getI8Type());
  SmallVector<Value> dyn;
  for (int i = 0; i < 2; ++i)
    if (idxType.isDynamicDim(i))
      dyn.push_back(getValueOrCreateConstantIndexOp(rw, loc, outSizes[i]));
  Value init = tensor::EmptyOp::create(rw, loc, idxType, dyn);
  MLIRContext *ctx = rw.getContext();
  SmallVector<AffineMap> maps(ins.size() + 1,
                              AffineMap::getMultiDimIdentityMap(4, ctx));
  SmallVector<utils::IteratorType> par(4, utils::IteratorType::parallel);
  int64_t size[2] = {*hIn, *wIn};
  auto generic = linalg::GenericOp::create(
      rw, loc, TypeRange{idxType}, ins, ValueRange{init}, maps, par,
      [&](OpBuilder &b, Location l, ValueRange a) {
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(b, l, v);
        };
        // The window's first input row / column: o * stride - pad.
        Value start[2];
        for (int i = 0; i < 2; ++i)
          start[i] = arith::SubIOp::create(
              b, l,
              arith::MulIOp::create(b, l, linalg::IndexOp::create(b, l, 2 + i),
                                    cst(st[i])),
              cst(pd[i]));
        auto off = [&](int64_t v) -> Value {
          return arith::ConstantIntOp::create(b, l, b.getI8Type(), v);
        };
        Value curMax = scalarConst(b, l, acc,
                                   -std::numeric_limits<double>::infinity());
        Value curIdx = off(-1);
        for (int64_t kh = 0; kh < k[0]; ++kh) {
          Value ph = arith::AddIOp::create(b, l, start[0], cst(kh * dl[0]));
          Value okH = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, ph,
                                    cst(0)),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, ph,
                                    cst(size[0])));
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            Value pw = arith::AddIOp::create(b, l, start[1], cst(kw * dl[1]));
            Value valid = arith::AndIOp::create(
                b, l, okH,
                arith::AndIOp::create(
                    b, l,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, pw,
                                          cst(0)),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, pw,
                                          cst(size[1]))));
            Value v = a[kh * k[1] + kw];
            Value takes = arith::OrIOp::create(
                b, l,
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v,
                                      curMax),
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, v, v));
            Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                                curIdx, off(-1));
            Value updIdx = arith::AndIOp::create(
                b, l, valid, arith::OrIOp::create(b, l, takes, first));
            Value updMax = arith::AndIOp::create(b, l, valid, takes);
            curMax = arith::SelectOp::create(b, l, updMax, v, curMax);
            curIdx = arith::SelectOp::create(b, l, updIdx,
                                             off(kh * k[1] + kw), curIdx);
          }
        }
        linalg::YieldOp::create(b, l, curIdx);
      });
  // Strided reads along the width: LLVM's loop vectorizer rather than the
  // linalg vectorizer's per-lane loads (kiln-cpu-tile-vectorize).
  if (st[1] > 1)
    generic->setAttr("kiln.scalar_loops", rw.getUnitAttr());
  return generic.getResult(0);
}

/// max_pool2d_backward's gather (2) by stride phases, where the input's
/// H and W are static: input row ih = s a + r belongs to phase r, and the
/// kernel rows that reach it are those with r + pad - kh dil = s delta
/// (delta an integer: the output row is a + delta). So each phase (r, q)
/// of gx is one all-parallel linalg.generic over [N, C, A_r, B_q] reading,
/// for each such (kh, kw), a unit-stride slice of the gradient and of the
/// argmax's window offsets (maxPoolArgmaxByWindows; both padded: zeros and
/// -1, which no offset equals) at the offset (delta_h, delta_w), and
/// adding the gradient where the window's argmax is (kh, kw), i.e. this
/// position, in the gather's order (kh outer, kw inner, from 0: the same
/// sum, bit for bit). The phases are written in place into strided slices
/// of gx (strides s_h, s_w). Unlike the gather, no tensor.extract at
/// computed indices and no divisions: the bodies vectorize. Null when H or
/// W is `?`.
Value maxPoolGradByPhases(OpBuilder &rw, Location loc, Value g, Value idx,
                          ArrayRef<OpFoldResult> xs, ArrayRef<int64_t> k,
                          ArrayRef<int64_t> st, ArrayRef<int64_t> pd,
                          ArrayRef<int64_t> dl,
                          ArrayRef<OpFoldResult> outSizes) {
  std::optional<int64_t> in[2] = {getConstantIntValue(xs[2]),
                                  getConstantIntValue(xs[3])};
  std::optional<int64_t> out[2] = {getConstantIntValue(outSizes[2]),
                                   getConstantIntValue(outSizes[3])};
  if (!in[0] || !in[1] || !out[0] || !out[1])
    return Value();
  // Per dim: for each phase r, its size and its (kernel offset, delta)s.
  struct Phase {
    int64_t r, size;
    SmallVector<std::pair<int64_t, int64_t>> terms; // (k, delta)
  };
  SmallVector<Phase> phases[2];
  int64_t lo[2] = {0, 0}, hi[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    for (int64_t r = 0; r < st[i] && r < *in[i]; ++r) {
      Phase ph{r, (*in[i] - r + st[i] - 1) / st[i], {}};
      for (int64_t kk = 0; kk < k[i]; ++kk) {
        int64_t num = r + pd[i] - kk * dl[i];
        if (((num % st[i]) + st[i]) % st[i] != 0)
          continue;
        int64_t delta = (num - (((num % st[i]) + st[i]) % st[i])) / st[i];
        ph.terms.push_back({kk, delta});
        lo[i] = std::max(lo[i], -delta);
        hi[i] = std::max(hi[i], ph.size + delta - *out[i]);
      }
      phases[i].push_back(ph);
    }
  }
  auto gt = cast<RankedTensorType>(g.getType());
  Type acc = gt.getElementType();
  SmallVector<OpFoldResult> low = {rw.getIndexAttr(lo[0]),
                                   rw.getIndexAttr(lo[1])};
  SmallVector<OpFoldResult> high = {rw.getIndexAttr(hi[0]),
                                    rw.getIndexAttr(hi[1])};
  Value gp = padHW(rw, loc, g, low, high, scalarConst(rw, loc, acc, 0));
  Value ip = padHW(rw, loc, idx, low, high,
                   arith::ConstantIntOp::create(rw, loc, rw.getI8Type(), -1));
  auto gxType = typeOf(xs, acc);
  SmallVector<Value> dyn;
  for (int i = 0; i < 2; ++i)
    if (gxType.isDynamicDim(i))
      dyn.push_back(getValueOrCreateConstantIndexOp(rw, loc, xs[i]));
  Value gx = tensor::EmptyOp::create(rw, loc, gxType, dyn);
  MLIRContext *ctx = rw.getContext();
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  SmallVector<utils::IteratorType> par(4, utils::IteratorType::parallel);
  OpFoldResult one = rw.getIndexAttr(1), zero = rw.getIndexAttr(0);
  for (const Phase &ph : phases[0])
    for (const Phase &pw : phases[1]) {
      SmallVector<OpFoldResult> sizes = {xs[0], xs[1],
                                         rw.getIndexAttr(ph.size),
                                         rw.getIndexAttr(pw.size)};
      auto type = typeOf(sizes, acc);
      SmallVector<Value> ins;
      SmallVector<int64_t> window; // kh * kW + kw per (gradient, index) pair
      for (auto [kh, dh] : ph.terms)
        for (auto [kw, dw] : pw.terms) {
          SmallVector<OpFoldResult> at = {zero, zero,
                                          rw.getIndexAttr(lo[0] + dh),
                                          rw.getIndexAttr(lo[1] + dw)};
          SmallVector<OpFoldResult> unit(4, one);
          ins.push_back(
              tensor::ExtractSliceOp::create(rw, loc, gp, at, sizes, unit));
          ins.push_back(
              tensor::ExtractSliceOp::create(rw, loc, ip, at, sizes, unit));
          window.push_back(kh * k[1] + kw);
        }
      // The phase's positions of gx, written in place.
      SmallVector<OpFoldResult> offs = {zero, zero, rw.getIndexAttr(ph.r),
                                        rw.getIndexAttr(pw.r)};
      SmallVector<OpFoldResult> strides = {one, one, rw.getIndexAttr(st[0]),
                                           rw.getIndexAttr(st[1])};
      Value phase;
      if (ins.empty()) {
        // No window reaches these positions.
        phase = linalg::FillOp::create(
                    rw, loc, scalarConst(rw, loc, acc, 0),
                    tensor::ExtractSliceOp::create(rw, loc, type, gx, offs,
                                                   sizes, strides)
                        .getResult())
                    .getResult(0);
      } else {
        SmallVector<AffineMap> maps(ins.size() + 1, id4);
        phase =
            linalg::GenericOp::create(
                rw, loc, TypeRange{type}, ins,
                ValueRange{tensor::ExtractSliceOp::create(
                    rw, loc, type, gx, offs, sizes, strides)},
                maps, par,
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value sum = scalarConst(b, l, acc, 0);
                  for (size_t t = 0; t + 1 < a.size(); t += 2) {
                    Value hit = arith::CmpIOp::create(
                        b, l, arith::CmpIPredicate::eq, a[t + 1],
                        arith::ConstantIntOp::create(b, l, b.getI8Type(),
                                                     window[t / 2]));
                    Value term = arith::SelectOp::create(
                        b, l, hit, a[t], scalarConst(b, l, acc, 0));
                    sum = arith::AddFOp::create(b, l, sum, term);
                  }
                  linalg::YieldOp::create(b, l, sum);
                })
                .getResult(0);
      }
      gx = tensor::InsertSliceOp::create(rw, loc, phase, gx, offs, sizes,
                                         strides);
    }
  return gx;
}

/// max_pool2d_backward: (1) the argmax of each window by PyTorch's CPU
/// rule (a linalg.generic reducing over the kernel dims of the -inf padded
/// input into a running max and its flat input index: an in-bounds position
/// takes over when its value is greater or NaN, the first in-bounds
/// position when none does), (2) a gather (poolGather) adding each output
/// gradient whose argmax is this input position.
struct MaxPool2dBackwardLowering
    : public OpConversionPattern<kt::MaxPool2dBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::MaxPool2dBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    bool batched =
        cast<RankedTensorType>(adaptor.getSelf().getType()).getRank() == 4;
    SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                            pd = op.getPaddingHW(), dl = op.getDilationHW();
    bool ceil = op.getCeilMode();
    Value x = convertTensor(rw, loc, toNCHW(rw, loc, adaptor.getSelf()), acc);
    Value g = convertTensor(rw, loc, toNCHW(rw, loc, adaptor.getGradOutput()),
                            acc);
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
    IndexMath m{rw, loc};
    x = checkPool(m, x, xs, batched, k, st, pd, dl, ceil);
    SmallVector<OpFoldResult> outSizes = {xs[0], xs[1]};
    SmallVector<OpFoldResult> low, high;
    for (int i = 0; i < 2; ++i) {
      OpFoldResult o = outputSize(m, xs[2 + i], rw.getIndexAttr(k[i]), pd[i],
                                  st[i], dl[i], ceil);
      outSizes.push_back(o);
      low.push_back(rw.getIndexAttr(pd[i]));
      high.push_back(highPadding(m, xs[2 + i], o, k[i], pd[i], st[i], dl[i]));
    }
    g = checkPoolGrad(m, g, outSizes);
    Value hIn = m.v(xs[2]), wIn = m.v(xs[3]);
    Value ninf =
        scalarConst(rw, loc, acc, -std::numeric_limits<double>::infinity());
    Value xp = padHW(rw, loc, x, low, high, ninf);
    // (1) argmax per output position.
    auto maxType = typeOf(outSizes, acc);
    auto idxType = typeOf(outSizes, rw.getIndexType());
    Value maxInit = filled(rw, loc, maxType, outSizes, ninf);
    Value idxInit = filled(rw, loc, idxType, outSizes,
                           arith::ConstantIndexOp::create(rw, loc, -1));
    Value window =
        tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{k[0], k[1]}, acc);
    MLIRContext *ctx = rw.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap inMap = AffineMap::get(
        6, 0, {d(0), d(1), d(2) * st[0] + d(4) * dl[0], d(3) * st[1] + d(5) * dl[1]},
        ctx);
    AffineMap winMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
    AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
    SmallVector<utils::IteratorType> its(4, utils::IteratorType::parallel);
    its.append(2, utils::IteratorType::reduction);
    // Where H and W are static: window offsets (i8) and the stride-phase
    // gradient; else the flat index and the gather.
    Value window8 = maxPoolArgmaxByWindows(rw, loc, xp, xs, k, st, pd, dl,
                                           outSizes);
    Value idx;
    if (!window8)
      idx =
        linalg::GenericOp::create(
            rw, loc, TypeRange{maxType, idxType}, ValueRange{xp, window},
            ValueRange{maxInit, idxInit},
            ArrayRef<AffineMap>{inMap, winMap, outMap, outMap}, its,
            [&](OpBuilder &b, Location l, ValueRange a) {
              auto cst = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, l, v);
              };
              Value sizes[2] = {hIn, wIn}, pos[2], valid;
              for (int i = 0; i < 2; ++i) {
                Value o = linalg::IndexOp::create(b, l, 2 + i);
                Value kk = linalg::IndexOp::create(b, l, 4 + i);
                pos[i] = arith::AddIOp::create(
                    b, l,
                    arith::SubIOp::create(
                        b, l, arith::MulIOp::create(b, l, o, cst(st[i])),
                        cst(pd[i])),
                    arith::MulIOp::create(b, l, kk, cst(dl[i])));
                Value c = arith::AndIOp::create(
                    b, l,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                          pos[i], cst(0)),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                          pos[i], sizes[i]));
                valid = valid ? arith::AndIOp::create(b, l, valid, c).getResult()
                              : c;
              }
              Value v = a[0], curMax = a[2], curIdx = a[3];
              Value takes = arith::OrIOp::create(
                  b, l,
                  arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v,
                                        curMax),
                  arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, v,
                                        v));
              Value first = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::eq, curIdx, cst(-1));
              Value updIdx = arith::AndIOp::create(
                  b, l, valid, arith::OrIOp::create(b, l, takes, first));
              Value updMax = arith::AndIOp::create(b, l, valid, takes);
              Value flat = arith::AddIOp::create(
                  b, l, arith::MulIOp::create(b, l, pos[0], wIn), pos[1]);
              linalg::YieldOp::create(
                  b, l,
                  ValueRange{
                      arith::SelectOp::create(b, l, updMax, v, curMax),
                      arith::SelectOp::create(b, l, updIdx, flat, curIdx)});
            })
            .getResult(1);
    // (2) gather the gradients whose argmax is each input position: by
    // stride phases where H and W are static, else one gather generic.
    auto gxType = typeOf(xs, acc);
    Value outHW[2] = {m.v(outSizes[2]), m.v(outSizes[3])};
    Value r = window8 ? maxPoolGradByPhases(rw, loc, g, window8, xs, k, st,
                                            pd, dl, outSizes)
                      : Value();
    assert((r || idx) && "the phase form takes every static H and W");
    if (!r)
      r = poolGather(
        rw, loc, gxType, xs, k, st, pd, dl, outHW,
        [&](OpBuilder &b, Location l, Value oh, Value ow, Value ih, Value iw) {
          Value n = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          Value id = tensor::ExtractOp::create(b, l, idx,
                                               ValueRange{n, c, oh, ow});
          Value gv =
              tensor::ExtractOp::create(b, l, g, ValueRange{n, c, oh, ow});
          Value flat = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, ih, wIn), iw);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id,
                                            flat);
          return arith::SelectOp::create(b, l, hit, gv,
                                         scalarConst(b, l, acc, 0))
              .getResult();
        });
    r = fromNCHW(rw, loc, convertTensor(rw, loc, r, elem), batched);
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

/// avg_pool2d_backward: a gather (poolGather) adding, for every window that
/// holds the input position, the window's gradient over its divisor
/// (avgPoolDivisor, the forward's).
struct AvgPool2dBackwardLowering
    : public OpConversionPattern<kt::AvgPool2dBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::AvgPool2dBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    bool batched =
        cast<RankedTensorType>(adaptor.getSelf().getType()).getRank() == 4;
    SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                            pd = op.getPaddingHW(), dl = {1, 1};
    bool ceil = op.getCeilMode(), includePad = op.getCountIncludePad();
    std::optional<int64_t> divOverride;
    if (IntegerAttr a = op.getDivisorOverrideAttr())
      divOverride = a.getInt();
    Value x = toNCHW(rw, loc, adaptor.getSelf());
    Value g = convertTensor(rw, loc, toNCHW(rw, loc, adaptor.getGradOutput()),
                            acc);
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
    IndexMath m{rw, loc};
    x = checkPool(m, x, xs, batched, k, st, pd, dl, ceil);
    SmallVector<OpFoldResult> outSizes = {xs[0], xs[1]};
    for (int i = 0; i < 2; ++i)
      outSizes.push_back(outputSize(m, xs[2 + i], rw.getIndexAttr(k[i]),
                                    pd[i], st[i], 1, ceil));
    g = checkPoolGrad(m, g, outSizes);
    Value hIn = m.v(xs[2]), wIn = m.v(xs[3]);
    Value outHW[2] = {m.v(outSizes[2]), m.v(outSizes[3])};
    auto gxType = typeOf(xs, acc);
    Value r = poolGather(
        rw, loc, gxType, xs, k, st, pd, dl, outHW,
        [&](OpBuilder &b, Location l, Value oh, Value ow, Value, Value) {
          Value n = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          Value gv =
              tensor::ExtractOp::create(b, l, g, ValueRange{n, c, oh, ow});
          auto [div, empty] = avgPoolDivisor(b, l, {oh, ow}, {hIn, wIn}, k,
                                             st, pd, includePad, divOverride);
          Value divI = arith::IndexCastOp::create(b, l, b.getI64Type(), div);
          // An empty window (ceil_mode) gives nothing; its divisor may be 0.
          Value q = arith::DivFOp::create(
              b, l, gv, arith::SIToFPOp::create(b, l, acc, divI));
          return arith::SelectOp::create(b, l, empty, scalarConst(b, l, acc, 0),
                                         q)
              .getResult();
        });
    r = fromNCHW(rw, loc, convertTensor(rw, loc, r, elem), batched);
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

} // namespace

void kiln::lowering::populateKTConvolutionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<Conv2dLowering, ConvTranspose2dLowering, MaxPool2dLowering,
               AvgPool2dLowering, MaxPool2dBackwardLowering,
               AvgPool2dBackwardLowering>(
      patterns.getContext());
}
