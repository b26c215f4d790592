//===- Norm.cpp - kt layer_norm, batch_norm, attention to linalg ----------===//
//
// Part of Kiln. layer_norm is three generics (sum -> mean, rounded to the
// compute type; sum of squared deviations from it -> biased variance, both
// sums accumulated in f64; normalize with the mean and 1/sqrt(var + eps),
// weight and bias, in the compute type; with KTToLinalgOptions::rowMoments
// the two sums are one generic of Welford's step, (count, mean, M2) in f64,
// for kiln-cpu's one-read row loops); batch_norm (inference form) is one pointwise generic reading the
// per-channel statistics through a map of dim 1; batch_norm_train is two
// per-channel reductions (mean, then squared deviations: f64 sums) and one
// pointwise pass; batch_norm_backward is one two-result per-channel reduction
// (sum of grad_output and of grad_output * (input - mean)) and one pointwise
// pass. scaled_dot_product_attention
// is a contraction generic for q @ k^T, a generic applying the scale and the
// causal or boolean/float mask, the three softmax generics (a fully masked
// row gives NaN, as in PyTorch; the sum of exp accumulates in f64) and a
// contraction generic with v; batch dims broadcast through the indexing
// maps. f16/bf16 compute in f32 and round once; the interpreter computes in
// f64.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

using utils::IteratorType;

/// The product of `sizes` as a float of type `t`.
Value countAsFloat(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type t) {
  int64_t st = 1;
  bool isStatic = true;
  for (OpFoldResult s : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(s))
      st *= *c;
    else
      isStatic = false;
  }
  if (isStatic)
    return scalarConst(b, loc, t, (double)st);
  Value n = arith::ConstantIndexOp::create(b, loc, 1);
  for (OpFoldResult s : sizes)
    n = arith::MulIOp::create(b, loc, n, indexValue(b, loc, s));
  Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
  return arith::SIToFPOp::create(b, loc, t, i);
}

Value genericOut(OpBuilder &b, Location loc, RankedTensorType type,
                 ValueRange ins, Value init, ArrayRef<AffineMap> maps,
                 ArrayRef<IteratorType> iters,
                 function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  return linalg::GenericOp::create(b, loc, TypeRange{type}, ins,
                                   ValueRange{init}, maps, iters, body)
      .getResult(0);
}

/// sum(x) over the reduction loops of `iters`, each element converted to
/// f64 and added into a zero-filled `type` (f64) of `sizes`; `maps`: x's and
/// the result's indexing maps. The statistics of layer_norm and batch_norm.
Value sumAsF64(OpBuilder &b, Location loc, Value x, RankedTensorType type,
               ArrayRef<OpFoldResult> sizes, ArrayRef<AffineMap> maps,
               ArrayRef<IteratorType> iters) {
  Value zero = scalarConst(b, loc, type.getElementType(), 0);
  return genericOut(
      b, loc, type, ValueRange{x}, filled(b, loc, type, sizes, zero), maps,
      iters, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = convertScalar(nb, l, a[0], type.getElementType());
        linalg::YieldOp::create(
            nb, l, ValueRange{arith::AddFOp::create(nb, l, a[1], v)});
      });
}

/// The sum of squared deviations `m2` (f64) as PyTorch's CPU layer_norm and
/// batch_norm accumulate it: in float for every compute type but f64, so
/// past float's range it is +inf (the normalized values are then 0). Only
/// the overflow, as the interpreter's m2AsAccumulated (NormKernels.cpp).
/// `value` (default: m2 itself) is returned where m2 does not overflow.
Value m2AsAccumulated(OpBuilder &b, Location l, Value m2, Type acc,
                      Value value = nullptr) {
  if (!value)
    value = m2;
  if (acc.isF64())
    return value;
  Value r = arith::TruncFOp::create(b, l, b.getF32Type(), m2);
  Value inf32 = scalarConst(b, l, b.getF32Type(),
                            std::numeric_limits<double>::infinity());
  Value over =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, r, inf32);
  Value inf = scalarConst(b, l, value.getType(),
                          std::numeric_limits<double>::infinity());
  return arith::SelectOp::create(b, l, over, inf, value);
}

/// sum / n, rounded once to `acc`, as a tensor of `type` (a mean).
Value quotientAs(OpBuilder &b, Location loc, Value sum, Value n,
                 RankedTensorType type, Type acc) {
  return buildElementwise(
      b, loc, ValueRange{sum}, type,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return convertScalar(nb, l, arith::DivFOp::create(nb, l, a[0], n), acc);
      });
}

struct LayerNormLowering : public OpConversionPattern<kt::LayerNormOp> {
  LayerNormLowering(MLIRContext *ctx, bool rowMoments)
      : OpConversionPattern(ctx), rowMoments(rowMoments) {}
  bool rowMoments; // KTToLinalgOptions::rowMoments
  LogicalResult matchAndRewrite(kt::LayerNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    Value x = adaptor.getInput(), w = adaptor.getWeight(),
          bias = adaptor.getBias();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    Type elem = xt.getElementType(), acc = computeType(elem);
    int64_t rank = xt.getRank();
    int64_t k = op.getNormalizedShape().size(), outer = rank - k;
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    {
      // Run-time checks (the interpreter's messages): the trailing dims of
      // the input, then the weight and bias, against normalized_shape. A
      // failed check goes on with zero operands of the expected sizes.
      SmallVector<int64_t> ns;
      for (Attribute a : op.getNormalizedShape())
        ns.push_back(cast<IntegerAttr>(a).getInt());
      SmallVector<OpFoldResult> nsSizes;
      for (int64_t d : ns)
        nsSizes.push_back(rw.getIndexAttr(d));
      std::string nsText = "[";
      for (auto [i, d] : llvm::enumerate(ns))
        nsText += (i ? ", " : "") + std::to_string(d);
      nsText += "]";
      Value bad;
      for (int64_t i = 0; i < k; ++i)
        bad = boolOr(rw, loc, bad,
                     indexCmp(rw, loc, arith::CmpIPredicate::ne,
                              sizes[outer + i], nsSizes[i]));
      if (bad) {
        SmallVector<Value> values;
        std::string text =
            "normalized_shape " + nsText +
            " does not match the trailing dims of input shape " +
            shapeTemplate(xt.getShape(), sizes, values) + " at run time";
        if (checkAtRunTime(rw, loc, bad, text, values)) {
          SmallVector<OpFoldResult> safe(ArrayRef(sizes).take_front(outer));
          safe.append(nsSizes);
          x = castTo(rw, loc, safeOperand(rw, loc, x, bad, safe), xt);
          sizes = getSizes(rw, loc, x);
        }
      }
      for (auto [what, t] : {std::pair<const char *, Value *>{"weight", &w},
                             {"bias", &bias}}) {
        if (!*t)
          continue;
        auto tt = cast<RankedTensorType>(t->getType());
        SmallVector<OpFoldResult> ts = getSizes(rw, loc, *t);
        Value tbad;
        for (int64_t i = 0; i < tt.getRank(); ++i)
          tbad = boolOr(rw, loc, tbad,
                        indexCmp(rw, loc, arith::CmpIPredicate::ne, ts[i],
                                 nsSizes[i]));
        if (!tbad)
          continue;
        SmallVector<Value> values;
        std::string text = std::string(what) + " shape " +
                           shapeTemplate(tt.getShape(), ts, values) +
                           " does not equal normalized_shape " + nsText +
                           " at run time";
        if (checkAtRunTime(rw, loc, tbad, text, values))
          *t = safeOperand(rw, loc, *t, tbad, nsSizes);
      }
    }
    SmallVector<int64_t> keptShape(xt.getShape().take_front(outer));
    SmallVector<OpFoldResult> keptSizes(ArrayRef(sizes).take_front(outer));
    auto keptType = RankedTensorType::get(keptShape, acc);
    // The statistics accumulate in f64 (the accumulation rule).
    Type f64 = rw.getF64Type();
    auto statType = keptType.clone(f64);
    SmallVector<AffineExpr> keptExprs, normExprs;
    for (int64_t i = 0; i < rank; ++i)
      (i < outer ? keptExprs : normExprs).push_back(getAffineDimExpr(i, ctx));
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap kept = AffineMap::get(rank, 0, keptExprs, ctx);
    AffineMap norm = AffineMap::get(rank, 0, normExprs, ctx);
    SmallVector<IteratorType> redIters(rank, IteratorType::parallel);
    for (int64_t i = outer; i < rank; ++i)
      redIters[i] = IteratorType::reduction;
    SmallVector<IteratorType> parIters(rank, IteratorType::parallel);
    Value n = countAsFloat(rw, loc, ArrayRef(sizes).drop_front(outer), f64);
    Value zero = scalarConst(rw, loc, f64, 0);
    Value mean, sq;
    if (rowMoments && (elem.isF32() || elem.isF64()) &&
        isa<BlockArgument>(op.getInput())) {
      // 1+2. One read of the row: (count, mean, M2) in f64 by Welford's
      // step (rowMomentsMerge of one element), marked for kiln-cpu's
      // vector loops (lowerRowMoments), which compute the same per block
      // of the row (a shift, then the block's sums relative to it, merged
      // in f64). Only where the input is not computed in the same body:
      // the vector loops take no fused prologue.
      SmallVector<Value> inits;
      for (int i = 0; i < 3; ++i)
        inits.push_back(filled(rw, loc, statType, keptSizes, zero));
      auto moments = linalg::GenericOp::create(
          rw, loc, TypeRange{statType, statType, statType}, ValueRange{x},
          inits, ArrayRef<AffineMap>{id, kept, kept, kept},
          redIters, [&](OpBuilder &b, Location l, ValueRange a) {
            Value v = convertScalar(b, l, a[0], f64);
            auto [n2, mean2, m22] = rowMomentsMerge(
                b, l, a[1], a[2], a[3], scalarConst(b, l, f64, 1), v,
                scalarConst(b, l, f64, 0), /*mark=*/true);
            linalg::YieldOp::create(b, l, ValueRange{n2, mean2, m22});
          });
      mean = buildElementwise(
          rw, loc, ValueRange{moments.getResult(1)}, keptType,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return convertScalar(b, l, a[0], acc);
          });
      sq = moments.getResult(2);
    } else {
      // 1. mean.
      Value sum = sumAsF64(rw, loc, x, statType, keptSizes, {id, kept},
                           redIters);
      // The mean, once per row, in the compute type (as the normalization
      // uses it).
      mean = quotientAs(rw, loc, sum, n, keptType, acc);
      // 2. biased variance: the deviation from that mean and its square in
      // the compute type (each term rounded once; they are all >= 0),
      // summed in f64.
      sq = genericOut(
          rw, loc, statType, ValueRange{x, mean},
          filled(rw, loc, statType, keptSizes, zero), {id, kept, kept},
          redIters, [&](OpBuilder &b, Location l, ValueRange a) {
            Value d = arith::SubFOp::create(
                b, l, convertScalar(b, l, a[0], acc), a[1]);
            Value d2 =
                convertScalar(b, l, arith::MulFOp::create(b, l, d, d), f64);
            linalg::YieldOp::create(
                b, l, ValueRange{arith::AddFOp::create(b, l, a[2], d2)});
          });
    }
    Value eps = scalarConst(rw, loc, f64, op.getEps().convertToDouble());
    Value one = scalarConst(rw, loc, f64, 1);
    // 1/sqrt(var + eps), once per row, in f64 rounded to the compute type.
    Value rstd = buildElementwise(
        rw, loc, ValueRange{sq}, keptType,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var = arith::DivFOp::create(
              b, l, m2AsAccumulated(b, l, a[0], acc), n);
          return convertScalar(
              b, l,
              arith::DivFOp::create(
                  b, l, one,
                  math::SqrtOp::create(b, l,
                                       arith::AddFOp::create(b, l, var, eps))),
              acc);
        });
    // 3. normalize.
    SmallVector<Value> ins{x, mean, rstd};
    SmallVector<AffineMap> maps{id, kept, kept};
    if (w) {
      ins.push_back(w);
      maps.push_back(norm);
    }
    if (bias) {
      ins.push_back(bias);
      maps.push_back(norm);
    }
    maps.push_back(id);
    Value r = genericOut(
        rw, loc, xt, ins, emptyLike(rw, loc, xt, sizes), maps, parIters,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value y = arith::MulFOp::create(
              b, l,
              arith::SubFOp::create(b, l, convertScalar(b, l, a[0], acc), a[1]),
              a[2]);
          unsigned next = 3;
          if (w)
            y = arith::MulFOp::create(b, l, y,
                                      convertScalar(b, l, a[next++], acc));
          if (bias)
            y = arith::AddFOp::create(b, l, y,
                                      convertScalar(b, l, a[next++], acc));
          linalg::YieldOp::create(b, l,
                                  ValueRange{convertScalar(b, l, y, elem)});
        });
    rw.replaceOp(op, castTo(rw, loc, r, rt));
    return success();
  }
};

struct BatchNormLowering : public OpConversionPattern<kt::BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::BatchNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    Value x = adaptor.getInput();
    auto xt = cast<RankedTensorType>(x.getType());
    Type elem = xt.getElementType(), acc = computeType(elem);
    int64_t rank = xt.getRank();
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap ch = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<Value> ins{x, adaptor.getRunningMean(),
                           adaptor.getRunningVar()};
    bool hasW = (bool)adaptor.getWeight(), hasB = (bool)adaptor.getBias();
    if (hasW)
      ins.push_back(adaptor.getWeight());
    if (hasB)
      ins.push_back(adaptor.getBias());
    {
      // Each per-channel operand must have the input's C elements at run
      // time (the interpreter's message); a failed check goes on with
      // zeros of C elements.
      OpFoldResult c = getSizes(rw, loc, x)[1];
      SmallVector<const char *> names = {"running_mean", "running_var"};
      if (hasW)
        names.push_back("weight");
      if (hasB)
        names.push_back("bias");
      for (size_t i = 1; i < ins.size(); ++i) {
        auto tt = cast<RankedTensorType>(ins[i].getType());
        OpFoldResult n = getSizes(rw, loc, ins[i])[0];
        Value bad = indexCmp(rw, loc, arith::CmpIPredicate::ne, n, c);
        SmallVector<Value> values;
        std::string text = std::string(names[i - 1]) + " shape " +
                           shapeTemplate(tt.getShape(), {n}, values) +
                           " does not match the ";
        text += shapeTemplate({ShapedType::kDynamic}, {c}, values, "", "", "");
        text += " channels of input at run time";
        if (checkAtRunTime(rw, loc, bad, text, values))
          ins[i] = safeOperand(rw, loc, ins[i], bad, {c});
      }
    }
    SmallVector<AffineMap> maps{id};
    maps.append(ins.size() - 1, ch);
    maps.push_back(id);
    SmallVector<IteratorType> iters(rank, IteratorType::parallel);
    Value eps = scalarConst(rw, loc, acc, op.getEps().convertToDouble());
    Value one = scalarConst(rw, loc, acc, 1);
    Value r = genericOut(
        rw, loc, xt, ins, emptyLike(rw, loc, xt, getSizes(rw, loc, x)), maps,
        iters, [&](OpBuilder &b, Location l, ValueRange a) {
          auto f = [&](Value v) { return convertScalar(b, l, v, acc); };
          Value scale = arith::DivFOp::create(
              b, l, one,
              math::SqrtOp::create(b, l,
                                   arith::AddFOp::create(b, l, f(a[2]), eps)));
          Value y = arith::MulFOp::create(
              b, l, arith::SubFOp::create(b, l, f(a[0]), f(a[1])), scale);
          unsigned next = 3;
          if (hasW)
            y = arith::MulFOp::create(b, l, y, f(a[next++]));
          if (hasB)
            y = arith::AddFOp::create(b, l, y, f(a[next++]));
          linalg::YieldOp::create(b, l,
                                  ValueRange{convertScalar(b, l, y, elem)});
        });
    rw.replaceOp(op, castTo(rw, loc, r, op.getResult().getType()));
    return success();
  }
};

/// The run-time check that the per-channel operand `v` (rank 1) has `c`
/// elements (the interpreter's message); `v`, or zeros of `c` elements when
/// it fails.
Value checkChannels(ConversionPatternRewriter &rw, Location loc, Value v,
                    OpFoldResult c, StringRef what) {
  auto tt = cast<RankedTensorType>(v.getType());
  OpFoldResult n = getSizes(rw, loc, v)[0];
  Value bad = indexCmp(rw, loc, arith::CmpIPredicate::ne, n, c);
  SmallVector<Value> values;
  std::string text = what.str() + " shape " +
                     shapeTemplate(tt.getShape(), {n}, values) +
                     " does not match the ";
  text += shapeTemplate({ShapedType::kDynamic}, {c}, values, "", "", "");
  text += " channels of input at run time";
  if (checkAtRunTime(rw, loc, bad, text, values))
    return safeOperand(rw, loc, v, bad, {c});
  return v;
}

/// Indexing maps and iterators of a per-channel reduction over a rank-`r`
/// input [N, C, ...]: the identity, the channel map (d1), and every dim
/// but 1 reduced.
struct ChannelSpace {
  AffineMap id, ch;
  SmallVector<IteratorType> reduce, parallel;
  ChannelSpace(OpBuilder &b, int64_t rank) {
    MLIRContext *ctx = b.getContext();
    id = b.getMultiDimIdentityMap(rank);
    ch = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    reduce.assign(rank, IteratorType::reduction);
    reduce[1] = IteratorType::parallel;
    parallel.assign(rank, IteratorType::parallel);
  }
};

/// The elements per channel (every dim of `sizes` but 1) as an f64.
Value perChannelCount(OpBuilder &b, Location loc,
                      ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> others(sizes);
  others.erase(others.begin() + 1);
  return countAsFloat(b, loc, others, b.getF64Type());
}

/// Each channel's first element x[0, c, 0, ...] of `x` [N, C, ...] as a [C]
/// tensor of `type` (the shift of batch_norm_train's variance); zeros when
/// a dim other than 1 is 0 at run time (there is no element to read).
Value channelSample(OpBuilder &b, Location loc, Value x,
                    ArrayRef<OpFoldResult> sizes, RankedTensorType type) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  Value empty;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == 1)
      continue;
    Value eq =
        indexCmp(b, loc, arith::CmpIPredicate::eq, sizes[d], b.getIndexAttr(0));
    empty = empty ? boolOr(b, loc, empty, eq) : eq;
  }
  // A [C] generic that reads x[0, c, 0, ...] with tensor.extract: the
  // slice's strided, rank-reduced view of x, which canonicalization folds
  // into the sums, is not a kernel operand kiln-cpu lowers.
  auto sample = [&](OpBuilder &sb, Location sl) -> Value {
    AffineMap id = sb.getMultiDimIdentityMap(1);
    return linalg::GenericOp::create(
               sb, sl, TypeRange{type}, ValueRange{},
               ValueRange{emptyLike(sb, sl, type, {sizes[1]})},
               ArrayRef<AffineMap>{id},
               ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
               [&](OpBuilder &gb, Location gl, ValueRange) {
                 Value zero = arith::ConstantIndexOp::create(gb, gl, 0);
                 SmallVector<Value> at(rank, zero);
                 at[1] = linalg::IndexOp::create(gb, gl, 0);
                 Value v = tensor::ExtractOp::create(gb, gl, x, at);
                 linalg::YieldOp::create(
                     gb, gl,
                     ValueRange{convertScalar(gb, gl, v,
                                              type.getElementType())});
               })
        .getResult(0);
  };
  if (!empty || matchPattern(empty, m_Zero()))
    return sample(b, loc);
  return scf::IfOp::create(
             b, loc, empty,
             [&](OpBuilder &tb, Location tl) {
               scf::YieldOp::create(
                   tb, tl,
                   filled(tb, tl, type, {sizes[1]},
                          scalarConst(tb, tl, type.getElementType(), 0)));
             },
             [&](OpBuilder &eb, Location el) {
               scf::YieldOp::create(eb, el, sample(eb, el));
             })
      .getResult(0);
}

/// kt.batch_norm_train: per-channel sums (f64) of the deviations of the
/// input from a shift (each channel's first element) and of their squares
/// -> mean and invstd = 1/sqrt(var + eps) (compute type); then one
/// pointwise generic over the input, which kiln-cpu-fuse-elementwise can
/// fold into its consumers. Each sum is a single-result generic (kiln-cpu's
/// fast path for reductions): two reading passes over the input.
struct BatchNormTrainLowering
    : public OpConversionPattern<kt::BatchNormTrainOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::BatchNormTrainOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), w = adaptor.getWeight(),
          bias = adaptor.getBias();
    auto xt = cast<RankedTensorType>(x.getType());
    Type elem = xt.getElementType(), acc = computeType(elem);
    Type f64 = rw.getF64Type();
    int64_t rank = xt.getRank();
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    OpFoldResult c = sizes[1];
    if (w)
      w = checkChannels(rw, loc, w, c, "weight");
    if (bias)
      bias = checkChannels(rw, loc, bias, c, "bias");
    if (op->hasAttr("kt.verify_batch_size")) {
      // F.batch_norm's _verify_batch_size (the discardable unit attribute
      // kt.verify_batch_size, set by the Python frontend): one value per
      // channel (every dim but the channels 1) is an error, as in the
      // interpreter. The statistics computed after a failed check are not
      // read.
      Value one;
      for (int64_t d = 0; d < rank; ++d) {
        if (d == 1)
          continue;
        Value eq = indexCmp(rw, loc, arith::CmpIPredicate::eq, sizes[d],
                            rw.getIndexAttr(1));
        one = one ? boolAnd(rw, loc, one, eq) : eq;
      }
      SmallVector<Value> values;
      std::string shape = shapeTemplate(xt.getShape(), sizes, values);
      checkAtRunTime(rw, loc, one,
                     "Expected more than 1 value per channel when training, "
                     "got input size " + shape,
                     values);
    }
    ChannelSpace sp(rw, rank);
    auto statF64 = RankedTensorType::get({xt.getDimSize(1)}, f64);
    auto statAcc = statF64.clone(acc);
    Value n = perChannelCount(rw, loc, sizes);
    Value zero = scalarConst(rw, loc, f64, 0);
    // The shifted-data variance (Chan, Golub and LeVeque): the deviations
    // d = x - shift from a per-channel shift K, s1 = sum(d) and s2 =
    // sum(d^2) (f64), then mean = K + s1 / M and var = s2 / M - (s1 / M)^2.
    // Its cancellation grows with (mean - K)^2 / var; K is the channel's
    // first element x[0, c, 0, ...], a sample of the data (a few standard
    // deviations from the mean, at worst ~M times the variance away: ~log10
    // M of f64's digits), so both sums are one pass each over the input
    // (an approximate mean from a first sum cost a third pass). With a mean
    // far from 0 relative to the spread (1e4 + N(0, 0.01) in f32)
    // E[x^2] - E[x]^2 is not accurate; deviations from a sample are.
    Value shift = channelSample(rw, loc, x, sizes, statAcc);
    auto devSum = [&](bool square) {
      return genericOut(
          rw, loc, statF64, ValueRange{x, shift},
          filled(rw, loc, statF64, {c}, zero), {sp.id, sp.ch, sp.ch},
          sp.reduce, [&](OpBuilder &b, Location l, ValueRange a) {
            Value d = arith::SubFOp::create(
                b, l, convertScalar(b, l, a[0], acc), a[1]);
            if (square)
              d = arith::MulFOp::create(b, l, d, d);
            linalg::YieldOp::create(
                b, l,
                ValueRange{arith::AddFOp::create(
                    b, l, a[2], convertScalar(b, l, d, f64))});
          });
    };
    Value s1 = devSum(false), s2 = devSum(true);
    Value mean = buildElementwise(
        rw, loc, ValueRange{shift, s1}, statAcc,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value m = arith::AddFOp::create(
              b, l, convertScalar(b, l, a[0], f64),
              arith::DivFOp::create(b, l, a[1], n));
          return convertScalar(b, l, m, acc);
        });
    Value eps = scalarConst(rw, loc, f64, op.getEps().convertToDouble());
    Value one = scalarConst(rw, loc, f64, 1);
    Value invstd = buildElementwise(
        rw, loc, ValueRange{s1, s2}, statAcc,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value m1 = arith::DivFOp::create(b, l, a[0], n);
          Value var = arith::SubFOp::create(
              b, l, arith::DivFOp::create(b, l, a[1], n),
              arith::MulFOp::create(b, l, m1, m1));
          // Rounding may leave a tiny negative for constant channels
          // (maximumf keeps a NaN).
          var = arith::MaximumFOp::create(b, l, var, zero);
          var = m2AsAccumulated(b, l, arith::MulFOp::create(b, l, var, n),
                                acc, var);
          return convertScalar(
              b, l,
              arith::DivFOp::create(
                  b, l, one,
                  math::SqrtOp::create(b, l,
                                       arith::AddFOp::create(b, l, var, eps))),
              acc);
        });
    SmallVector<Value> ins{x, mean, invstd};
    SmallVector<AffineMap> maps{sp.id, sp.ch, sp.ch};
    for (Value v : {w, bias})
      if (v) {
        ins.push_back(v);
        maps.push_back(sp.ch);
      }
    maps.push_back(sp.id);
    Value y = genericOut(
        rw, loc, xt, ins, emptyLike(rw, loc, xt, sizes), maps, sp.parallel,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = arith::MulFOp::create(
              b, l,
              arith::SubFOp::create(b, l, convertScalar(b, l, a[0], acc), a[1]),
              a[2]);
          unsigned next = 3;
          if (w)
            v = arith::MulFOp::create(b, l, v,
                                      convertScalar(b, l, a[next++], acc));
          if (bias)
            v = arith::AddFOp::create(b, l, v,
                                      convertScalar(b, l, a[next++], acc));
          linalg::YieldOp::create(b, l,
                                  ValueRange{convertScalar(b, l, v, elem)});
        });
    rw.replaceOp(op, ValueRange{castTo(rw, loc, y, op.getResult().getType()),
                                castTo(rw, loc, mean, op.getSaveMean().getType()),
                                castTo(rw, loc, invstd,
                                       op.getSaveInvstd().getType())});
    return success();
  }
};

/// kt.batch_norm_backward: one two-result per-channel reduction,
/// sum(grad_output) and sum(grad_output * (input - mean)) (f64);
/// per-channel coefficients; then one pointwise generic for grad_input.
struct BatchNormBackwardLowering
    : public OpConversionPattern<kt::BatchNormBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::BatchNormBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value gy = adaptor.getGradOutput(), x = adaptor.getInput(),
          mean = adaptor.getSaveMean(), invstd = adaptor.getSaveInvstd(),
          w = adaptor.getWeight(), bias = adaptor.getBias();
    kt::NormActivation act = op.getActivation();
    auto xt = cast<RankedTensorType>(x.getType());
    auto gt = cast<RankedTensorType>(gy.getType());
    Type elem = xt.getElementType(), acc = computeType(elem);
    Type f64 = rw.getF64Type();
    int64_t rank = xt.getRank();
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    {
      // grad_output must have the input's shape at run time.
      SmallVector<OpFoldResult> gs = getSizes(rw, loc, gy);
      Value bad;
      for (int64_t i = 0; i < rank; ++i)
        bad = boolOr(rw, loc, bad,
                     indexCmp(rw, loc, arith::CmpIPredicate::ne, gs[i],
                              sizes[i]));
      if (bad) {
        SmallVector<Value> values;
        std::string text = "grad_output shape " +
                           shapeTemplate(gt.getShape(), gs, values) +
                           " does not equal input shape ";
        text += shapeTemplate(xt.getShape(), sizes, values) + " at run time";
        if (checkAtRunTime(rw, loc, bad, text, values))
          gy = safeOperand(rw, loc, gy, bad, sizes);
      }
    }
    OpFoldResult c = sizes[1];
    mean = checkChannels(rw, loc, mean, c, "save_mean");
    invstd = checkChannels(rw, loc, invstd, c, "save_invstd");
    if (w)
      w = checkChannels(rw, loc, w, c, "weight");
    if (bias)
      bias = checkChannels(rw, loc, bias, c, "bias");
    ChannelSpace sp(rw, rank);
    auto statF64 = RankedTensorType::get({xt.getDimSize(1)}, f64);
    auto statAcc = statF64.clone(acc);
    Value n = perChannelCount(rw, loc, sizes);
    Value zero = scalarConst(rw, loc, f64, 0);
    // With an activation, every generic below reads grad_output through
    // the mask of the forward's result y = x * s + t (s = invstd * weight,
    // t = bias - mean * s per channel). The mask is an interval of x per
    // channel, [lo, hi] (computed once per channel in f64: relu's y > 0 is
    // x > -t / s for s > 0, x < -t / s for s < 0; relu6's 0 <= y <= 6 the
    // interval between -t / s and (6 - t) / s; s = 0 keeps every or no
    // element by t; a NaN s or t keeps none), so an element costs two
    // compares and a select, not the normalization again (recomputing y
    // per element made each pass ~2x the unmasked one: instruction-bound
    // on this machine). It agrees with the forward's rounded y except for
    // y within a rounding error of 0 or 6. Extra [C] inputs: lo, hi.
    bool masking = act != kt::NormActivation::none;
    SmallVector<Value> maskIns;
    if (masking) {
      bool relu = act == kt::NormActivation::relu;
      SmallVector<Value> ins{mean, invstd};
      for (Value v : {w, bias})
        if (v)
          ins.push_back(v);
      double inf = std::numeric_limits<double>::infinity();
      for (bool upper : {false, true})
        maskIns.push_back(buildElementwise(
            rw, loc, ins, statAcc,
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              auto f = [&](Value v) { return convertScalar(b, l, v, f64); };
              auto cst = [&](double v) { return scalarConst(b, l, f64, v); };
              auto cmp = [&](arith::CmpFPredicate p, Value u, Value v) {
                return arith::CmpFOp::create(b, l, p, u, v).getResult();
              };
              auto sel = [&](Value c, Value u, Value v) {
                return arith::SelectOp::create(b, l, c, u, v).getResult();
              };
              Value sc = f(a[1]);
              unsigned next = 2;
              if (w)
                sc = arith::MulFOp::create(b, l, sc, f(a[next++]));
              Value t = arith::NegFOp::create(
                  b, l, arith::MulFOp::create(b, l, f(a[0]), sc));
              if (bias)
                t = arith::AddFOp::create(b, l, t, f(a[next++]));
              // The x where y crosses 0 and 6.
              auto at = [&](double v) {
                return arith::DivFOp::create(
                           b, l, arith::SubFOp::create(b, l, cst(v), t), sc)
                    .getResult();
              };
              Value z = cst(0);
              Value pos = cmp(arith::CmpFPredicate::OGT, sc, z);
              Value neg = cmp(arith::CmpFPredicate::OLT, sc, z);
              // s = 0 (or NaN): y = t everywhere: all or nothing.
              Value all = relu ? cmp(arith::CmpFPredicate::OGT, t, z)
                               : arith::AndIOp::create(
                                     b, l, cmp(arith::CmpFPredicate::OGE, t, z),
                                     cmp(arith::CmpFPredicate::OLE, t, cst(6)))
                                     .getResult();
              Value flat = sel(all, cst(upper ? inf : -inf),
                               cst(upper ? -inf : inf));
              Value atPos, atNeg; // the bound for s > 0 and for s < 0
              if (relu) {
                atPos = upper ? cst(inf) : at(0);
                atNeg = upper ? at(0) : cst(-inf);
              } else {
                atPos = upper ? at(6) : at(0);
                atNeg = upper ? at(0) : at(6);
              }
              Value v = sel(pos, atPos, sel(neg, atNeg, flat));
              return convertScalar(b, l, v, acc);
            }));
    }
    // `g`: grad_output in the compute type; `xv`: the element's input;
    // `extra`: the block arguments of maskIns (lo, hi).
    auto masked = [&](OpBuilder &b, Location l, Value g, Value xv,
                      ValueRange extra) -> Value {
      if (!masking)
        return g;
      Value xa = convertScalar(b, l, xv, acc);
      bool relu = act == kt::NormActivation::relu;
      Value keep = arith::AndIOp::create(
          b, l,
          arith::CmpFOp::create(b, l,
                                relu ? arith::CmpFPredicate::OGT
                                     : arith::CmpFPredicate::OGE,
                                xa, extra[0]),
          arith::CmpFOp::create(b, l,
                                relu ? arith::CmpFPredicate::OLT
                                     : arith::CmpFPredicate::OLE,
                                xa, extra[1]));
      return arith::SelectOp::create(b, l, keep, g,
                                     scalarConst(b, l, acc, 0));
    };
    SmallVector<AffineMap> maskMaps(maskIns.size(), sp.ch);
    // Both sums in one two-result reduction, one read of grad_output and
    // input: sum(g) and sum(g * (x - mean)), g the (masked) gradient, each
    // term widened to f64 and added into its own accumulator (kiln-cpu's
    // reduction fast path takes it: one cascaded partial sum per result).
    SmallVector<Value> sumIns{gy, x, mean};
    sumIns.append(maskIns);
    SmallVector<AffineMap> sumMaps{sp.id, sp.id, sp.ch};
    sumMaps.append(maskMaps);
    sumMaps.append({sp.ch, sp.ch});
    auto sums = linalg::GenericOp::create(
        rw, loc, TypeRange{statF64, statF64}, sumIns,
        ValueRange{filled(rw, loc, statF64, {c}, zero),
                   filled(rw, loc, statF64, {c}, zero)},
        sumMaps, sp.reduce, [&](OpBuilder &b, Location l, ValueRange a) {
          Value g = masked(b, l, convertScalar(b, l, a[0], acc), a[1],
                           a.slice(3, maskIns.size()));
          Value d = arith::SubFOp::create(b, l, convertScalar(b, l, a[1], acc),
                                          convertScalar(b, l, a[2], acc));
          Value gd =
              convertScalar(b, l, arith::MulFOp::create(b, l, g, d), f64);
          Value g64 = convertScalar(b, l, g, f64);
          unsigned e = a.size();
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::AddFOp::create(b, l, a[e - 2], g64),
                         arith::AddFOp::create(b, l, a[e - 1], gd)});
        });
    Value sumDy = sums.getResult(0), dot = sums.getResult(1);
    auto vecElem = RankedTensorType::get({xt.getDimSize(1)}, elem);
    Value gw = buildElementwise(
        rw, loc, ValueRange{dot, invstd}, vecElem,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return roundFromF64(
              b, l,
              arith::MulFOp::create(b, l, a[0], convertScalar(b, l, a[1], f64)),
              elem);
        });
    Value gb = buildElementwise(
        rw, loc, ValueRange{sumDy}, vecElem,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return roundFromF64(b, l, a[0], elem);
        });
    // Per channel, in the compute type: sum_dy / M, dot * invstd^2 / M and
    // invstd * weight.
    Value meanDy = buildElementwise(
        rw, loc, ValueRange{sumDy}, statAcc,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return convertScalar(b, l, arith::DivFOp::create(b, l, a[0], n), acc);
        });
    Value k = buildElementwise(
        rw, loc, ValueRange{dot, invstd}, statAcc,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value r = convertScalar(b, l, a[1], f64);
          Value v = arith::MulFOp::create(
              b, l, a[0], arith::MulFOp::create(b, l, r, r));
          return convertScalar(b, l, arith::DivFOp::create(b, l, v, n), acc);
        });
    Value scale = invstd;
    if (w)
      scale = buildElementwise(
          rw, loc, ValueRange{invstd, w}, statAcc,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::MulFOp::create(b, l, convertScalar(b, l, a[0], acc),
                                         convertScalar(b, l, a[1], acc));
          });
    SmallVector<Value> gxIns{gy, x, mean, meanDy, k, scale};
    gxIns.append(maskIns);
    SmallVector<AffineMap> gxMaps{sp.id, sp.id, sp.ch, sp.ch, sp.ch, sp.ch};
    gxMaps.append(maskMaps);
    gxMaps.push_back(sp.id);
    Value gx = genericOut(
        rw, loc, xt, gxIns, emptyLike(rw, loc, xt, sizes), gxMaps, sp.parallel,
        [&](OpBuilder &b, Location l, ValueRange a) {
          auto f = [&](Value v) { return convertScalar(b, l, v, acc); };
          Value g = masked(b, l, f(a[0]), a[1], a.slice(6, maskIns.size()));
          Value d = arith::SubFOp::create(b, l, f(a[1]), f(a[2]));
          Value v = arith::SubFOp::create(
              b, l, arith::SubFOp::create(b, l, g, f(a[3])),
              arith::MulFOp::create(b, l, d, f(a[4])));
          v = arith::MulFOp::create(b, l, v, f(a[5]));
          linalg::YieldOp::create(b, l,
                                  ValueRange{convertScalar(b, l, v, elem)});
        });
    rw.replaceOp(op,
                 ValueRange{castTo(rw, loc, gx, op.getGradInput().getType()),
                            castTo(rw, loc, gw, op.getGradWeight().getType()),
                            castTo(rw, loc, gb, op.getGradBias().getType())});
    return success();
  }
};

/// Exprs reading the batch dims of `t` (rank >= 2) inside an iteration space
/// whose first `batchShape.size()` dims are the broadcast batch dims.
SmallVector<AffineExpr> batchExprs(MLIRContext *ctx, RankedTensorType t,
                                   ArrayRef<int64_t> batchShape) {
  int64_t nb = batchShape.size(), rb = t.getRank() - 2;
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rb; ++i) {
    int64_t j = i + nb - rb;
    if (t.getDimSize(i) == 1 && batchShape[j] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(j, ctx));
  }
  return exprs;
}

struct SDPALowering
    : public OpConversionPattern<kt::ScaledDotProductAttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ScaledDotProductAttentionOp op,
                                OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value mask = adaptor.getAttnMask();
    if (op.getDropoutP().convertToDouble() != 0)
      return rw.notifyMatchFailure(op, "dropout_p must be 0");
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt_ = cast<RankedTensorType>(k.getType());
    auto vt = cast<RankedTensorType>(v.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    Type elem = rt.getElementType(), acc = computeType(elem);
    int64_t nb = rt.getRank() - 2;
    ArrayRef<int64_t> batchShape = rt.getShape().drop_back(2);
    // Sizes of the batch dims: static, or a `?` operand dim there.
    SmallVector<OpFoldResult> batchSizes;
    for (int64_t j = 0; j < nb; ++j) {
      if (!ShapedType::isDynamic(batchShape[j])) {
        batchSizes.push_back(rw.getIndexAttr(batchShape[j]));
        continue;
      }
      OpFoldResult s;
      for (Value o : {q, k, v}) {
        auto ot = cast<RankedTensorType>(o.getType());
        int64_t i = j - (nb - (ot.getRank() - 2));
        if (i >= 0 && ot.isDynamicDim(i)) {
          s = tensor::DimOp::create(rw, loc, o, i).getResult();
          break;
        }
      }
      if (!s)
        return rw.notifyMatchFailure(op, "cannot size a dynamic batch dim");
      batchSizes.push_back(s);
    }
    {
      // Run-time checks, in the interpreter's order and with its messages:
      // E of query and key, S of key and value, the mask's last two dims,
      // then the broadcast of the batch dims. A failed check goes on with
      // zero operands of the expected sizes; `?` batch dims (and `?` mask
      // dims) of size 1 broadcast at run time.
      auto val = [&](OpFoldResult f) {
        return getValueOrCreateConstantIndexOp(rw, loc, f);
      };
      SmallVector<OpFoldResult> qs0 = getSizes(rw, loc, q),
                                ks0 = getSizes(rw, loc, k),
                                vs0 = getSizes(rw, loc, v);
      int64_t rq = qt.getRank(), rk = kt_.getRank(), rv = vt.getRank();
      // Dim `d` of `t` (sizes `ts`) must be `want`; else the message (want,
      // got) and a zero `t` with that dim.
      auto matchDim = [&](Value &t, RankedTensorType &tt,
                          SmallVector<OpFoldResult> &ts, int64_t d,
                          OpFoldResult want, StringRef text) {
        Value bad = indexCmp(rw, loc, arith::CmpIPredicate::ne, want, ts[d]);
        if (!checkAtRunTime(rw, loc, bad, text, {val(want), val(ts[d])}))
          return;
        SmallVector<OpFoldResult> safe = ts;
        safe[d] = want;
        t = safeOperand(rw, loc, t, bad, safe);
        tt = cast<RankedTensorType>(t.getType());
        ts = getSizes(rw, loc, t);
      };
      matchDim(k, kt_, ks0, rk - 1, qs0[rq - 1],
               "query and key embedding dims differ at run time: {0} vs {1}");
      matchDim(v, vt, vs0, rv - 2, ks0[rk - 2],
               "key and value sequence lengths differ at run time: {0} vs "
               "{1}");
      OpFoldResult L0 = qs0[rq - 2], S0 = ks0[rk - 2];
      SmallVector<OpFoldResult> ms0;
      if (mask) {
        auto mt = cast<RankedTensorType>(mask.getType());
        ms0 = getSizes(rw, loc, mask);
        if (mt.getRank() >= 2) {
          OpFoldResult mL = ms0[mt.getRank() - 2], mS = ms0[mt.getRank() - 1];
          Value one = arith::ConstantIndexOp::create(rw, loc, 1);
          auto badDim = [&](OpFoldResult m, OpFoldResult want) {
            return boolAnd(
                rw, loc, indexCmp(rw, loc, arith::CmpIPredicate::ne, m, one),
                indexCmp(rw, loc, arith::CmpIPredicate::ne, m, want));
          };
          Value mBad =
              boolOr(rw, loc, badDim(mL, L0), badDim(mS, S0));
          SmallVector<Value> values;
          std::string text =
              "attn_mask shape " +
              shapeTemplate(mt.getShape(), ms0, values) +
              " does not broadcast to [..., " +
              shapeTemplate({ShapedType::kDynamic, ShapedType::kDynamic},
                            {L0, S0}, values, ", ", "", "") +
              "] at run time";
          checkAtRunTime(rw, loc, mBad, text, values);
        }
      }
      // The running broadcast of the batch dims (query, key, value, mask).
      SmallVector<std::pair<Value, SmallVector<OpFoldResult>>> ops = {
          {q, qs0}, {k, ks0}, {v, getSizes(rw, loc, v)}};
      if (mask && cast<RankedTensorType>(mask.getType()).getRank() >= 2)
        ops.push_back({mask, ms0});
      SmallVector<OpFoldResult> r(nb, rw.getIndexAttr(1));
      for (auto &[o, os] : ops) {
        int64_t ob = (int64_t)os.size() - 2;
        for (int64_t i = 0; i < ob; ++i) {
          OpFoldResult d = os[i], &cur = r[i + nb - ob];
          std::optional<int64_t> cd = getConstantIntValue(d),
                                 cc = getConstantIntValue(cur);
          if (cd && *cd == 1)
            continue;
          if (cc && *cc == 1) {
            cur = d;
            continue;
          }
          Value one = arith::ConstantIndexOp::create(rw, loc, 1);
          Value bad = boolAnd(
              rw, loc, indexCmp(rw, loc, arith::CmpIPredicate::ne, d, one),
              boolAnd(rw, loc,
                      indexCmp(rw, loc, arith::CmpIPredicate::ne, cur, one),
                      indexCmp(rw, loc, arith::CmpIPredicate::ne, cur, d)));
          checkAtRunTime(rw, loc, bad,
                         "batch dims of the operands are not "
                         "broadcast-compatible at run time: {0} vs {1}",
                         {val(cur), val(d)});
          if (!cc)
            cur = arith::SelectOp::create(
                      rw, loc,
                      indexCmp(rw, loc, arith::CmpIPredicate::eq, d, one),
                      val(cur), val(d))
                      .getResult();
        }
      }
      for (int64_t j = 0; j < nb; ++j)
        if (ShapedType::isDynamic(batchShape[j]))
          batchSizes[j] = r[j];
      // Operands read at the broadcast batch sizes.
      auto bcast = [&](Value o) {
        auto ot = cast<RankedTensorType>(o.getType());
        SmallVector<OpFoldResult> os = getSizes(rw, loc, o);
        int64_t ob = ot.getRank() - 2;
        SmallVector<int64_t> shape(batchShape.drop_front(nb - ob));
        SmallVector<OpFoldResult> sizes(
            ArrayRef<OpFoldResult>(batchSizes).drop_front(nb - ob));
        shape.append({ot.getDimSize(ob), ot.getDimSize(ob + 1)});
        sizes.append({os[ob], os[ob + 1]});
        return broadcastDynamicDims(rw, loc, o, shape, sizes);
      };
      q = bcast(q);
      k = bcast(k);
      v = bcast(v);
      if (mask) {
        auto mt = cast<RankedTensorType>(mask.getType());
        SmallVector<int64_t> shape(batchShape);
        shape.append({qt.getDimSize(rq - 2), kt_.getDimSize(rk - 2)});
        SmallVector<OpFoldResult> sizes(batchSizes);
        sizes.append({L0, S0});
        if (mt.getRank() <= (int64_t)shape.size())
          mask = broadcastDynamicDims(
              rw, loc, mask, shape,
              sizes);
      }
    }
    SmallVector<OpFoldResult> qs = getSizes(rw, loc, q),
                              ks = getSizes(rw, loc, k),
                              vs = getSizes(rw, loc, v);
    OpFoldResult L = qs[qt.getRank() - 2], E = qs[qt.getRank() - 1],
                 S = ks[kt_.getRank() - 2], Ev = vs[vt.getRank() - 1];
    int64_t Ls = qt.getDimSize(qt.getRank() - 2),
            Ss = kt_.getDimSize(kt_.getRank() - 2),
            Evs = vt.getDimSize(vt.getRank() - 1);
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    // Scores [batch..., L, S] = q @ k^T over (batch..., l, s, e).
    SmallVector<int64_t> scShape(batchShape);
    scShape.append({Ls, Ss});
    SmallVector<OpFoldResult> scSizes(batchSizes);
    scSizes.append({L, S});
    auto scType = RankedTensorType::get(scShape, acc);
    int64_t n3 = nb + 3;
    auto withTail = [&](SmallVector<AffineExpr> e, AffineExpr a, AffineExpr b,
                        int64_t nd) {
      e.push_back(a);
      e.push_back(b);
      return AffineMap::get(nd, 0, e, ctx);
    };
    SmallVector<AffineExpr> outBatch;
    for (int64_t j = 0; j < nb; ++j)
      outBatch.push_back(dim(j));
    SmallVector<IteratorType> it3(n3, IteratorType::parallel);
    it3.back() = IteratorType::reduction;
    Value zero = scalarConst(rw, loc, acc, 0);
    Value scores = genericOut(
        rw, loc, scType, ValueRange{q, k},
        filled(rw, loc, scType, scSizes, zero),
        {withTail(batchExprs(ctx, qt, batchShape), dim(nb), dim(nb + 2), n3),
         withTail(batchExprs(ctx, kt_, batchShape), dim(nb + 1), dim(nb + 2),
                  n3),
         withTail(outBatch, dim(nb), dim(nb + 1), n3)},
        it3, [&](OpBuilder &b, Location l, ValueRange a) {
          Value p = arith::MulFOp::create(b, l, convertScalar(b, l, a[0], acc),
                                          convertScalar(b, l, a[1], acc));
          linalg::YieldOp::create(
              b, l, ValueRange{arith::AddFOp::create(b, l, a[2], p)});
        });
    // Scale and mask.
    Value scale;
    if (std::optional<APFloat> sc = op.getScale())
      scale = scalarConst(rw, loc, acc, sc->convertToDouble());
    else if (std::optional<int64_t> e = getConstantIntValue(E))
      scale = scalarConst(rw, loc, acc, 1.0 / std::sqrt((double)*e));
    else
      scale = arith::DivFOp::create(
          rw, loc, scalarConst(rw, loc, acc, 1),
          math::SqrtOp::create(rw, loc, countAsFloat(rw, loc, {E}, acc)));
    int64_t n2 = nb + 2;
    AffineMap id2 = rw.getMultiDimIdentityMap(n2);
    SmallVector<Value> ins{scores};
    SmallVector<AffineMap> maps{id2};
    if (mask) {
      ins.push_back(mask);
      maps.push_back(broadcastMap(
          ctx, cast<RankedTensorType>(mask.getType()), scShape));
    }
    maps.push_back(id2);
    bool causal = op.getIsCausal();
    Value negInf =
        scalarConst(rw, loc, acc, -std::numeric_limits<double>::infinity());
    SmallVector<IteratorType> par2(n2, IteratorType::parallel);
    Value masked = genericOut(
        rw, loc, scType, ins, emptyLike(rw, loc, scType, scSizes), maps, par2,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value s = arith::MulFOp::create(b, l, a[0], scale);
          if (causal) {
            Value li = linalg::IndexOp::create(b, l, nb);
            Value si = linalg::IndexOp::create(b, l, nb + 1);
            Value above = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ugt, si, li);
            s = arith::SelectOp::create(b, l, above, negInf, s);
          }
          if (mask) {
            Value m = a[1];
            if (m.getType().isInteger(1))
              s = arith::SelectOp::create(b, l, m, s, negInf);
            else
              s = arith::AddFOp::create(b, l, s, convertScalar(b, l, m, acc));
          }
          linalg::YieldOp::create(b, l, ValueRange{s});
        });
    // Softmax over S.
    SmallVector<int64_t> rowShape(batchShape);
    rowShape.push_back(Ls);
    SmallVector<OpFoldResult> rowSizes(batchSizes);
    rowSizes.push_back(L);
    auto rowType = RankedTensorType::get(rowShape, acc);
    SmallVector<AffineExpr> rowExprs(outBatch);
    rowExprs.push_back(dim(nb));
    AffineMap row = AffineMap::get(n2, 0, rowExprs, ctx);
    SmallVector<IteratorType> red2(par2);
    red2.back() = IteratorType::reduction;
    Value mx = genericOut(
        rw, loc, rowType, ValueRange{masked},
        filled(rw, loc, rowType, rowSizes, negInf), {id2, row}, red2,
        [&](OpBuilder &b, Location l, ValueRange a) {
          linalg::YieldOp::create(
              b, l, ValueRange{arith::MaximumFOp::create(b, l, a[1], a[0])});
        });
    // The sum of exp accumulates in f64 (the accumulation rule).
    Type f64 = rw.getF64Type();
    Value sum = genericOut(
        rw, loc, rowType.clone(f64), ValueRange{masked, mx},
        filled(rw, loc, rowType.clone(f64), rowSizes,
               scalarConst(rw, loc, f64, 0)),
        {id2, row, row}, red2, [&](OpBuilder &b, Location l, ValueRange a) {
          Value e =
              math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::AddFOp::create(b, l, a[2],
                                               convertScalar(b, l, e, f64))});
        });
    // 1 / sum once per row (in f64, rounded), then a multiply per element.
    Value inv = buildElementwise(
        rw, loc, ValueRange{sum}, rowType,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return convertScalar(
              b, l,
              arith::DivFOp::create(b, l, scalarConst(b, l, f64, 1), a[0]),
              acc);
        });
    Value probs = genericOut(
        rw, loc, scType, ValueRange{masked, mx, inv},
        emptyLike(rw, loc, scType, scSizes), {id2, row, row, id2}, par2,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value e =
              math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]));
          linalg::YieldOp::create(
              b, l, ValueRange{arith::MulFOp::create(b, l, e, a[2])});
        });
    // Result [batch..., L, Ev] = probs @ v over (batch..., l, ev, s).
    SmallVector<int64_t> oShape(batchShape);
    oShape.append({Ls, Evs});
    SmallVector<OpFoldResult> oSizes(batchSizes);
    oSizes.append({L, Ev});
    auto oType = RankedTensorType::get(oShape, acc);
    Value o = genericOut(
        rw, loc, oType, ValueRange{probs, v},
        filled(rw, loc, oType, oSizes, zero),
        {withTail(outBatch, dim(nb), dim(nb + 2), n3),
         withTail(batchExprs(ctx, vt, batchShape), dim(nb + 2), dim(nb + 1),
                  n3),
         withTail(outBatch, dim(nb), dim(nb + 1), n3)},
        it3, [&](OpBuilder &b, Location l, ValueRange a) {
          Value p = arith::MulFOp::create(b, l, a[0],
                                          convertScalar(b, l, a[1], acc));
          linalg::YieldOp::create(
              b, l, ValueRange{arith::AddFOp::create(b, l, a[2], p)});
        });
    if (acc != elem)
      o = buildElementwise(rw, loc, ValueRange{o}, rt.clone(elem),
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return convertScalar(b, l, a[0], elem);
                           });
    rw.replaceOp(op, castTo(rw, loc, o, rt));
    return success();
  }
};

} // namespace

void kiln::lowering::populateKTNormToLinalgPatterns(
    RewritePatternSet &patterns, const KTToLinalgOptions &options) {
  patterns.add<LayerNormLowering>(patterns.getContext(), options.rowMoments);
  patterns.add<BatchNormLowering, BatchNormTrainLowering,
               BatchNormBackwardLowering, SDPALowering>(
      patterns.getContext());
}
