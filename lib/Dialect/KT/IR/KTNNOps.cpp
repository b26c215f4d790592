//===- KTNNOps.cpp - kt NN ops ---------------------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTNNOps.td. Result-type inference also verifies each op's
// constraints (it runs with the op's location when the op is verified).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln::kt;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// Reads a list attribute of 1 or 2 entries as an [h, w] pair; `dflt` when
/// absent (or, for `emptyIsDefault`, empty).
FailureOr<SmallVector<int64_t, 2>>
readPair(ArrayAttr attr, ArrayRef<int64_t> dflt, StringRef name, int64_t minVal,
         bool emptyIsDefault, std::optional<Location> loc, StringRef opName) {
  if (!attr || (emptyIsDefault && attr.empty()))
    return SmallVector<int64_t, 2>(dflt.begin(), dflt.end());
  SmallVector<int64_t> v = getI64Array(attr);
  if (v.size() != 1 && v.size() != 2) {
    (void)emitKTError(loc, opName, "`", name,
                      "` must have 1 or 2 entries, got ", (int64_t)v.size());
    return failure();
  }
  if (v.size() == 1)
    v.push_back(v[0]);
  for (int64_t x : v)
    if (x < minVal) {
      (void)emitKTError(loc, opName, "`", name, "` entries must be >= ", minVal,
                        ", got [", v[0], ", ", v[1], "]");
      return failure();
    }
  return SmallVector<int64_t, 2>(v.begin(), v.end());
}

/// Same as readPair without diagnostics (for attributes already verified).
SmallVector<int64_t, 2> pairOr(ArrayAttr attr, ArrayRef<int64_t> dflt,
                               bool emptyIsDefault = false) {
  if (!attr || (emptyIsDefault && attr.empty()))
    return SmallVector<int64_t, 2>(dflt.begin(), dflt.end());
  SmallVector<int64_t> v = getI64Array(attr);
  if (v.size() == 1)
    v.push_back(v[0]);
  v.resize(2, 0);
  return SmallVector<int64_t, 2>(v.begin(), v.end());
}

RankedTensorType rankedOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Floor division (PyTorch div_rtn).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

/// PyTorch's pooling_output_shape (dynamic in, dynamic out).
int64_t poolOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride,
                    int64_t dil, bool ceil) {
  if (ShapedType::isDynamic(in))
    return kDyn;
  int64_t out =
      floorDiv(in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0),
               stride) +
      1;
  if (ceil && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

/// Shared checks and result type of max_pool2d / avg_pool2d.
LogicalResult inferPool(MLIRContext *ctx, std::optional<Location> loc,
                        StringRef opName, RankedTensorType self,
                        ArrayAttr kernelA, ArrayAttr strideA, ArrayAttr padA,
                        ArrayAttr dilA, bool ceil,
                        SmallVectorImpl<Type> &types) {
  if (self.getRank() != 3 && self.getRank() != 4)
    return emitKTError(loc, opName, "expects `self` of rank 3 (CHW) or 4 (NCHW), got rank ",
                       self.getRank());
  auto k = readPair(kernelA, {}, "kernel_size", 1, false, loc, opName);
  if (failed(k))
    return failure();
  auto s = readPair(strideA, *k, "stride", 1, true, loc, opName);
  if (failed(s))
    return failure();
  auto p = readPair(padA, {0, 0}, "padding", 0, false, loc, opName);
  if (failed(p))
    return failure();
  auto d = readPair(dilA, {1, 1}, "dilation", 1, false, loc, opName);
  if (failed(d))
    return failure();
  for (int i = 0; i < 2; ++i)
    if ((*p)[i] > (*k)[i] / 2)
      return emitKTError(loc, opName,
                         "`padding` must be at most half of `kernel_size`, got padding ",
                         (*p)[i], " for kernel size ", (*k)[i]);
  SmallVector<int64_t> shape(self.getShape());
  int64_t r = self.getRank();
  for (int i = 0; i < 2; ++i) {
    int64_t in = shape[r - 2 + i];
    int64_t out = poolOutSize(in, (*k)[i], (*p)[i], (*s)[i], (*d)[i], ceil);
    if (!ShapedType::isDynamic(out) && out < 1)
      return emitKTError(loc, opName, "output size is too small: input ",
                         shapeToString(self.getShape()), " gives output size ",
                         out, " in dim ", r - 2 + i);
    shape[r - 2 + i] = out;
  }
  types.push_back(RankedTensorType::get(shape, self.getElementType()));
  return success();
}

} // namespace

namespace kiln::kt {

LogicalResult inferMatmul(MLIRContext *ctx, std::optional<Location> loc,
                          StringRef opName, MatmulOp::Adaptor adaptor,
                          SmallVectorImpl<Type> &types) {
  if (failed(checkSameElementType(adaptor.getOperands().getTypes(), loc, opName)))
    return failure();
  auto a = rankedOf(adaptor.getSelf()), b = rankedOf(adaptor.getOther());
  if (a.getRank() < 1 || b.getRank() < 1)
    return emitKTError(loc, opName,
                       "both operands must have rank >= 1, got ranks ",
                       a.getRank(), " and ", b.getRank());
  ArrayRef<int64_t> as = a.getShape(), bs = b.getShape();
  int64_t ka = as.back();
  int64_t kb = bs.size() == 1 ? bs[0] : bs[bs.size() - 2];
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return emitKTError(loc, opName, "contracting dims differ: ", ka, " vs ", kb);
  SmallVector<int64_t> shape;
  if (as.size() >= 2 || bs.size() >= 2) {
    SmallVector<int64_t> ab(as.size() > 2 ? as.drop_back(2) : ArrayRef<int64_t>());
    SmallVector<int64_t> bb(bs.size() > 2 ? bs.drop_back(2) : ArrayRef<int64_t>());
    auto batch = broadcastShapes({ab, bb}, loc, opName);
    if (failed(batch))
      return failure();
    shape = *batch;
    if (as.size() >= 2)
      shape.push_back(as[as.size() - 2]);
    if (bs.size() >= 2)
      shape.push_back(bs.back());
  }
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

LogicalResult inferLinear(MLIRContext *ctx, std::optional<Location> loc,
                          StringRef opName, LinearOp::Adaptor adaptor,
                          SmallVectorImpl<Type> &types) {
  if (failed(checkSameElementType(adaptor.getOperands().getTypes(), loc, opName)))
    return failure();
  auto x = rankedOf(adaptor.getInput()), w = rankedOf(adaptor.getWeight());
  if (x.getRank() < 1)
    return emitKTError(loc, opName, "`input` must have rank >= 1");
  if (w.getRank() != 2)
    return emitKTError(loc, opName,
                       "`weight` must have rank 2 ([out_features, in_features]), got rank ",
                       w.getRank());
  int64_t in = x.getShape().back(), win = w.getDimSize(1),
          out = w.getDimSize(0);
  if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(win) && in != win)
    return emitKTError(loc, opName, "`input` has ", in,
                       " features but `weight` expects ", win);
  if (Value bias = adaptor.getBias()) {
    auto bt = rankedOf(bias);
    if (bt.getRank() != 1)
      return emitKTError(loc, opName, "`bias` must have rank 1, got rank ",
                         bt.getRank());
    int64_t bn = bt.getDimSize(0);
    if (!ShapedType::isDynamic(bn) && !ShapedType::isDynamic(out) && bn != out)
      return emitKTError(loc, opName, "`bias` has ", bn,
                         " elements but `weight` has ", out, " out_features");
    if (ShapedType::isDynamic(out))
      out = bn;
  }
  SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(out);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

/// A convolution's kernel (dims 2 and 3 of `weight`) has no size-0 dim
/// (PyTorch: "kernel size should be greater than zero"); an empty kernel
/// would give a sum over nothing, and its gradient a convolution that does
/// not verify.
static LogicalResult checkKernelSizes(RankedTensorType w,
                                      std::optional<Location> loc,
                                      StringRef opName) {
  for (int i = 2; i < 4; ++i)
    if (w.getDimSize(i) == 0)
      return emitKTError(loc, opName, "kernel sizes must be >= 1, but "
                         "`weight` has size 0 in dim ", i);
  return success();
}

LogicalResult inferConv2d(MLIRContext *ctx, std::optional<Location> loc,
                          StringRef opName, Conv2dOp::Adaptor adaptor,
                          SmallVectorImpl<Type> &types) {
  if (failed(checkSameElementType(adaptor.getOperands().getTypes(), loc, opName)))
    return failure();
  auto x = rankedOf(adaptor.getInput()), w = rankedOf(adaptor.getWeight());
  if (x.getRank() != 3 && x.getRank() != 4)
    return emitKTError(loc, opName,
                       "expects `input` of rank 3 (CHW) or 4 (NCHW), got rank ",
                       x.getRank());
  if (w.getRank() != 4)
    return emitKTError(loc, opName,
                       "expects `weight` of rank 4 ([O, C/groups, kH, kW]), got rank ",
                       w.getRank());
  auto s = readPair(adaptor.getStrideAttr(), {1, 1}, "stride", 1, false, loc, opName);
  if (failed(s))
    return failure();
  auto p = readPair(adaptor.getPaddingAttr(), {0, 0}, "padding", 0, false, loc, opName);
  if (failed(p))
    return failure();
  auto d = readPair(adaptor.getDilationAttr(), {1, 1}, "dilation", 1, false, loc, opName);
  if (failed(d))
    return failure();
  int64_t groups = adaptor.getGroups();
  if (groups < 1)
    return emitKTError(loc, opName, "`groups` must be >= 1, got ", groups);
  if (failed(checkKernelSizes(w, loc, opName)))
    return failure();
  int64_t r = x.getRank();
  int64_t c = x.getDimSize(r - 3), o = w.getDimSize(0), wc = w.getDimSize(1);
  if (!ShapedType::isDynamic(c)) {
    if (c % groups != 0)
      return emitKTError(loc, opName, "input channels ", c,
                         " are not divisible by groups ", groups);
    if (!ShapedType::isDynamic(wc) && c / groups != wc)
      return emitKTError(loc, opName, "input channels / groups = ", c / groups,
                         " but `weight` expects ", wc, " channels per group");
  }
  if (!ShapedType::isDynamic(o) && o % groups != 0)
    return emitKTError(loc, opName, "output channels ", o,
                       " are not divisible by groups ", groups);
  if (Value bias = adaptor.getBias()) {
    auto bt = rankedOf(bias);
    if (bt.getRank() != 1)
      return emitKTError(loc, opName, "`bias` must have rank 1, got rank ",
                         bt.getRank());
    int64_t bn = bt.getDimSize(0);
    if (!ShapedType::isDynamic(bn) && !ShapedType::isDynamic(o) && bn != o)
      return emitKTError(loc, opName, "`bias` has ", bn,
                         " elements but there are ", o, " output channels");
    if (ShapedType::isDynamic(o))
      o = bn;
  }
  SmallVector<int64_t> shape(x.getShape());
  shape[r - 3] = o;
  for (int i = 0; i < 2; ++i) {
    int64_t in = x.getDimSize(r - 2 + i), k = w.getDimSize(2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape[r - 2 + i] = kDyn;
      continue;
    }
    int64_t out = poolOutSize(in, k, (*p)[i], (*s)[i], (*d)[i], false);
    if (out < 1)
      return emitKTError(loc, opName, "padded input size ", in + 2 * (*p)[i],
                         " in dim ", r - 2 + i,
                         " is smaller than the dilated kernel size ",
                         (*d)[i] * (k - 1) + 1);
    shape[r - 2 + i] = out;
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult inferConvTranspose2d(MLIRContext *ctx,
                                   std::optional<Location> loc,
                                   StringRef opName,
                                   ConvTranspose2dOp::Adaptor adaptor,
                                   SmallVectorImpl<Type> &types) {
  if (failed(checkSameElementType(adaptor.getOperands().getTypes(), loc, opName)))
    return failure();
  auto x = rankedOf(adaptor.getInput()), w = rankedOf(adaptor.getWeight());
  if (x.getRank() != 3 && x.getRank() != 4)
    return emitKTError(loc, opName,
                       "expects `input` of rank 3 (CHW) or 4 (NCHW), got rank ",
                       x.getRank());
  if (w.getRank() != 4)
    return emitKTError(loc, opName,
                       "expects `weight` of rank 4 ([C_in, C_out/groups, kH, kW]), got rank ",
                       w.getRank());
  auto s = readPair(adaptor.getStrideAttr(), {1, 1}, "stride", 1, false, loc, opName);
  if (failed(s))
    return failure();
  auto p = readPair(adaptor.getPaddingAttr(), {0, 0}, "padding", 0, false, loc, opName);
  if (failed(p))
    return failure();
  auto op = readPair(adaptor.getOutputPaddingAttr(), {0, 0}, "output_padding",
                     0, false, loc, opName);
  if (failed(op))
    return failure();
  auto d = readPair(adaptor.getDilationAttr(), {1, 1}, "dilation", 1, false, loc, opName);
  if (failed(d))
    return failure();
  for (int i = 0; i < 2; ++i)
    if ((*op)[i] >= std::max((*s)[i], (*d)[i]))
      return emitKTError(loc, opName, "`output_padding` must be smaller than "
                         "`stride` or `dilation`, got output_padding ",
                         (*op)[i], ", stride ", (*s)[i], ", dilation ",
                         (*d)[i], " in dim ", i);
  int64_t groups = adaptor.getGroups();
  if (groups < 1)
    return emitKTError(loc, opName, "`groups` must be >= 1, got ", groups);
  if (failed(checkKernelSizes(w, loc, opName)))
    return failure();
  int64_t r = x.getRank();
  int64_t c = x.getDimSize(r - 3), wc = w.getDimSize(0), og = w.getDimSize(1);
  if (!ShapedType::isDynamic(c) && c % groups != 0)
    return emitKTError(loc, opName, "input channels ", c,
                       " are not divisible by groups ", groups);
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(wc) && c != wc)
    return emitKTError(loc, opName, "input has ", c,
                       " channels but `weight` expects ", wc,
                       " (weight is [C_in, C_out/groups, kH, kW])");
  int64_t o = ShapedType::isDynamic(og) ? kDyn : og * groups;
  if (Value bias = adaptor.getBias()) {
    auto bt = rankedOf(bias);
    if (bt.getRank() != 1)
      return emitKTError(loc, opName, "`bias` must have rank 1, got rank ",
                         bt.getRank());
    int64_t bn = bt.getDimSize(0);
    if (!ShapedType::isDynamic(bn) && !ShapedType::isDynamic(o) && bn != o)
      return emitKTError(loc, opName, "`bias` has ", bn,
                         " elements but there are ", o, " output channels");
    if (ShapedType::isDynamic(o))
      o = bn;
  }
  SmallVector<int64_t> shape(x.getShape());
  shape[r - 3] = o;
  for (int i = 0; i < 2; ++i) {
    int64_t in = x.getDimSize(r - 2 + i), k = w.getDimSize(2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape[r - 2 + i] = kDyn;
      continue;
    }
    int64_t out = (in - 1) * (*s)[i] - 2 * (*p)[i] + (*d)[i] * (k - 1) +
                  (*op)[i] + 1;
    if (out < 1)
      return emitKTError(loc, opName, "output size is too small: input ",
                         shapeToString(x.getShape()), " gives output size ",
                         out, " in dim ", r - 2 + i);
    shape[r - 2 + i] = out;
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult inferMaxPool2d(MLIRContext *ctx, std::optional<Location> loc,
                             StringRef opName, MaxPool2dOp::Adaptor adaptor,
                             SmallVectorImpl<Type> &types) {
  return inferPool(ctx, loc, opName, rankedOf(adaptor.getSelf()),
                   adaptor.getKernelSizeAttr(), adaptor.getStrideAttr(),
                   adaptor.getPaddingAttr(), adaptor.getDilationAttr(),
                   adaptor.getCeilMode(), types);
}

LogicalResult inferAvgPool2d(MLIRContext *ctx, std::optional<Location> loc,
                             StringRef opName, AvgPool2dOp::Adaptor adaptor,
                             SmallVectorImpl<Type> &types) {
  if (auto dv = adaptor.getDivisorOverrideAttr())
    if (dv.getInt() == 0)
      return emitKTError(loc, opName, "`divisor_override` must not be 0");
  return inferPool(ctx, loc, opName, rankedOf(adaptor.getSelf()),
                   adaptor.getKernelSizeAttr(), adaptor.getStrideAttr(),
                   adaptor.getPaddingAttr(), ArrayAttr(),
                   adaptor.getCeilMode(), types);
}

/// Shared checks of the pools' backward ops: the forward's rules on `self`
/// and `grad_output` of the forward's result shape; the result is `self`'s
/// type.
static LogicalResult inferPoolBackward(
    MLIRContext *ctx, std::optional<Location> loc, StringRef opName,
    Value gradOutput, Value self, ArrayAttr kernelA, ArrayAttr strideA,
    ArrayAttr padA, ArrayAttr dilA, bool ceil, SmallVectorImpl<Type> &types) {
  SmallVector<Type, 2> operandTypes = {gradOutput.getType(), self.getType()};
  if (failed(checkSameElementType(operandTypes, loc, opName)))
    return failure();
  auto g = rankedOf(gradOutput), x = rankedOf(self);
  SmallVector<Type> fwd;
  if (failed(inferPool(ctx, loc, opName, x, kernelA, strideA, padA, dilA, ceil,
                       fwd)))
    return failure();
  auto y = cast<RankedTensorType>(fwd[0]);
  if (g.getRank() != y.getRank())
    return emitKTError(loc, opName, "`grad_output` must have rank ",
                       y.getRank(), " (as `self`), got rank ", g.getRank());
  for (int64_t i = 0; i < g.getRank(); ++i) {
    int64_t a = g.getDimSize(i), b = y.getDimSize(i);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitKTError(loc, opName, "`grad_output` has shape ",
                         shapeToString(g.getShape()),
                         " but the pooling of `self` gives ",
                         shapeToString(y.getShape()));
  }
  types.push_back(x);
  return success();
}

LogicalResult inferMaxPool2dBackward(MLIRContext *ctx,
                                     std::optional<Location> loc,
                                     StringRef opName,
                                     MaxPool2dBackwardOp::Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  return inferPoolBackward(ctx, loc, opName, adaptor.getGradOutput(),
                           adaptor.getSelf(), adaptor.getKernelSizeAttr(),
                           adaptor.getStrideAttr(), adaptor.getPaddingAttr(),
                           adaptor.getDilationAttr(), adaptor.getCeilMode(),
                           types);
}

LogicalResult inferAvgPool2dBackward(MLIRContext *ctx,
                                     std::optional<Location> loc,
                                     StringRef opName,
                                     AvgPool2dBackwardOp::Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  if (auto dv = adaptor.getDivisorOverrideAttr())
    if (dv.getInt() == 0)
      return emitKTError(loc, opName, "`divisor_override` must not be 0");
  return inferPoolBackward(ctx, loc, opName, adaptor.getGradOutput(),
                           adaptor.getSelf(), adaptor.getKernelSizeAttr(),
                           adaptor.getStrideAttr(), adaptor.getPaddingAttr(),
                           ArrayAttr(), adaptor.getCeilMode(), types);
}

LogicalResult inferEmbedding(MLIRContext *ctx, std::optional<Location> loc,
                             StringRef opName, EmbeddingOp::Adaptor adaptor,
                             SmallVectorImpl<Type> &types) {
  auto w = rankedOf(adaptor.getWeight()), i = rankedOf(adaptor.getIndices());
  if (w.getRank() != 2)
    return emitKTError(loc, opName,
                       "`weight` must have rank 2 ([num_embeddings, embedding_dim]), got rank ",
                       w.getRank());
  SmallVector<int64_t> shape(i.getShape());
  shape.push_back(w.getDimSize(1));
  types.push_back(RankedTensorType::get(shape, w.getElementType()));
  return success();
}

} // namespace kiln::kt

SmallVector<int64_t, 2> Conv2dOp::getStrideHW() {
  return pairOr(getStrideAttr(), {1, 1});
}
SmallVector<int64_t, 2> Conv2dOp::getPaddingHW() {
  return pairOr(getPaddingAttr(), {0, 0});
}
SmallVector<int64_t, 2> Conv2dOp::getDilationHW() {
  return pairOr(getDilationAttr(), {1, 1});
}

SmallVector<int64_t, 2> ConvTranspose2dOp::getStrideHW() {
  return pairOr(getStrideAttr(), {1, 1});
}
SmallVector<int64_t, 2> ConvTranspose2dOp::getPaddingHW() {
  return pairOr(getPaddingAttr(), {0, 0});
}
SmallVector<int64_t, 2> ConvTranspose2dOp::getOutputPaddingHW() {
  return pairOr(getOutputPaddingAttr(), {0, 0});
}
SmallVector<int64_t, 2> ConvTranspose2dOp::getDilationHW() {
  return pairOr(getDilationAttr(), {1, 1});
}

SmallVector<int64_t, 2> MaxPool2dBackwardOp::getKernelHW() {
  return pairOr(getKernelSizeAttr(), {1, 1});
}
SmallVector<int64_t, 2> MaxPool2dBackwardOp::getStrideHW() {
  return pairOr(getStrideAttr(), getKernelHW(), /*emptyIsDefault=*/true);
}
SmallVector<int64_t, 2> MaxPool2dBackwardOp::getPaddingHW() {
  return pairOr(getPaddingAttr(), {0, 0});
}
SmallVector<int64_t, 2> MaxPool2dBackwardOp::getDilationHW() {
  return pairOr(getDilationAttr(), {1, 1});
}
SmallVector<int64_t, 2> AvgPool2dBackwardOp::getKernelHW() {
  return pairOr(getKernelSizeAttr(), {1, 1});
}
SmallVector<int64_t, 2> AvgPool2dBackwardOp::getStrideHW() {
  return pairOr(getStrideAttr(), getKernelHW(), /*emptyIsDefault=*/true);
}
SmallVector<int64_t, 2> AvgPool2dBackwardOp::getPaddingHW() {
  return pairOr(getPaddingAttr(), {0, 0});
}

SmallVector<int64_t, 2> MaxPool2dOp::getKernelHW() {
  return pairOr(getKernelSizeAttr(), {1, 1});
}
SmallVector<int64_t, 2> MaxPool2dOp::getStrideHW() {
  return pairOr(getStrideAttr(), getKernelHW(), /*emptyIsDefault=*/true);
}
SmallVector<int64_t, 2> MaxPool2dOp::getPaddingHW() {
  return pairOr(getPaddingAttr(), {0, 0});
}
SmallVector<int64_t, 2> MaxPool2dOp::getDilationHW() {
  return pairOr(getDilationAttr(), {1, 1});
}

SmallVector<int64_t, 2> AvgPool2dOp::getKernelHW() {
  return pairOr(getKernelSizeAttr(), {1, 1});
}
SmallVector<int64_t, 2> AvgPool2dOp::getStrideHW() {
  return pairOr(getStrideAttr(), getKernelHW(), /*emptyIsDefault=*/true);
}
SmallVector<int64_t, 2> AvgPool2dOp::getPaddingHW() {
  return pairOr(getPaddingAttr(), {0, 0});
}

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTNNOps.cpp.inc"
