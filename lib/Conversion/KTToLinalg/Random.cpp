//===- Random.cpp - kt rand, randn, dropout to linalg ---------------------===//
//
// Part of Kiln. The random ops are one linalg.generic over the result whose
// body computes the row-major linear index of the element from linalg.index
// and runs the Philox4x32-10 generator of the kt dialect's contract (see
// KTCreationOps.td) on it with arith ops: the values depend only on the seed
// and the element's index, never on tiling or threads. The conversions to
// [0, 1) and the Box-Muller transform are done in f64 and rounded to the
// dtype exactly as the contract says (f16/bf16 through f32), so the results
// are bit-identical to the interpreter's (randn calls the same libm `log`,
// `cos` and `sqrt`).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

constexpr double kTwoM24 = 1.0 / 16777216.0;
constexpr double kTwoM53 = 1.0 / 9007199254740992.0;

Value i32c(OpBuilder &b, Location loc, uint32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr((int32_t)v));
}
Value i64c(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
Value f64c(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}

/// The rank-0 i64 `seed` tensor's value.
Value seedValue(OpBuilder &b, Location loc, Value seed) {
  return tensor::ExtractOp::create(b, loc, seed, ValueRange{});
}

/// Philox4x32-10 of (seed, index) (both i64, taken as uint64): out0..out3.
SmallVector<Value, 4> philox(OpBuilder &b, Location loc, Value seed,
                             Value index) {
  Type i32 = b.getI32Type();
  Value c32 = i64c(b, loc, 32);
  auto lo = [&](Value v) { return arith::TruncIOp::create(b, loc, i32, v); };
  auto hi = [&](Value v) {
    return arith::TruncIOp::create(b, loc, i32,
                                   arith::ShRUIOp::create(b, loc, v, c32));
  };
  Value k0 = lo(seed), k1 = hi(seed);
  Value c0 = lo(index), c1 = hi(index);
  Value c2 = i32c(b, loc, 0), c3 = i32c(b, loc, 0);
  Value m0 = i32c(b, loc, 0xD2511F53u), m1 = i32c(b, loc, 0xCD9E8D57u);
  Value w0 = i32c(b, loc, 0x9E3779B9u), w1 = i32c(b, loc, 0xBB67AE85u);
  for (int r = 0; r < 10; ++r) {
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c0);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c2);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c1), k0);
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c3), k1);
    c0 = n0;
    c1 = p1.getLow();
    c2 = n2;
    c3 = p0.getLow();
    if (r != 9) {
      k0 = arith::AddIOp::create(b, loc, k0, w0);
      k1 = arith::AddIOp::create(b, loc, k1, w1);
    }
  }
  return {c0, c1, c2, c3};
}

/// (double)(v >> shift) for an i32 `v` taken as unsigned.
Value shiftedToF64(OpBuilder &b, Location loc, Value v, uint32_t shift) {
  Value s = arith::ShRUIOp::create(b, loc, v, i32c(b, loc, shift));
  return arith::UIToFPOp::create(b, loc, b.getF64Type(), s);
}

/// ((a >> 5) << 26 | (b >> 6)) as f64 (the 53-bit integer of the contract).
Value u53(OpBuilder &b, Location loc, Value x, Value y) {
  Type i64 = b.getI64Type();
  Value hx = arith::ExtUIOp::create(
      b, loc, i64, arith::ShRUIOp::create(b, loc, x, i32c(b, loc, 5)));
  Value ly = arith::ExtUIOp::create(
      b, loc, i64, arith::ShRUIOp::create(b, loc, y, i32c(b, loc, 6)));
  Value v = arith::OrIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, hx, i64c(b, loc, 26)), ly);
  return arith::UIToFPOp::create(b, loc, b.getF64Type(), v);
}

/// The uniform value in [0, 1) (f64) for `out` and dtype `elem`.
Value uniform(OpBuilder &b, Location loc, ArrayRef<Value> out, Type elem) {
  if (elem.isF64())
    return arith::MulFOp::create(b, loc, u53(b, loc, out[0], out[1]),
                                 f64c(b, loc, kTwoM53));
  return arith::MulFOp::create(b, loc, shiftedToF64(b, loc, out[0], 8),
                               f64c(b, loc, kTwoM24));
}

/// The standard normal value (f64, Box-Muller) for `out` and dtype `elem`.
Value normal(OpBuilder &b, Location loc, ArrayRef<Value> out, Type elem) {
  Value one = f64c(b, loc, 1.0);
  Value u1, u2;
  if (elem.isF64()) {
    Value scale = f64c(b, loc, kTwoM53);
    u1 = arith::MulFOp::create(
        b, loc, arith::AddFOp::create(b, loc, u53(b, loc, out[0], out[1]), one),
        scale);
    u2 = arith::MulFOp::create(b, loc, u53(b, loc, out[2], out[3]), scale);
  } else {
    Value scale = f64c(b, loc, kTwoM24);
    u1 = arith::MulFOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, shiftedToF64(b, loc, out[0], 8), one),
        scale);
    u2 = arith::MulFOp::create(b, loc, shiftedToF64(b, loc, out[1], 8), scale);
  }
  Value r = math::SqrtOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, f64c(b, loc, -2.0),
                            math::LogOp::create(b, loc, u1)));
  Value c = math::CosOp::create(
      b, loc, arith::MulFOp::create(b, loc, f64c(b, loc, 2.0 * M_PI), u2));
  return arith::MulFOp::create(b, loc, r, c);
}

/// An f64 rounded to `elem` as the interpreter stores it: f16/bf16 through
/// f32 (two roundings, nearest even each).
Value roundF64To(OpBuilder &b, Location loc, Value v, Type elem) {
  if (elem.isF64())
    return v;
  v = arith::TruncFOp::create(b, loc, b.getF32Type(), v);
  if (elem.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, elem, v);
}

/// The row-major linear index (i64) of the current element of a generic
/// over a tensor with `sizes`.
Value linearIndex(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Type i64 = b.getI64Type();
  Value lin = i64c(b, loc, 0);
  for (size_t d = 0; d < sizes.size(); ++d) {
    Value idx = arith::IndexCastOp::create(b, loc, i64,
                                           linalg::IndexOp::create(b, loc, d));
    lin = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, lin, sizes[d]), idx);
  }
  return lin;
}

/// The sizes of `sizes` as i64 values (for the linear index).
SmallVector<Value> sizesAsI64(OpBuilder &b, Location loc,
                              ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> out;
  for (OpFoldResult s : sizes)
    out.push_back(arith::IndexCastOp::create(
        b, loc, b.getI64Type(), getValueOrCreateConstantIndexOp(b, loc, s)));
  return out;
}

/// A parallel generic over `init` (identity maps for `inputs` and `init`)
/// whose body gets the linear index and the input scalars.
Value indexedGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, Value init,
    ArrayRef<OpFoldResult> sizes,
    llvm::function_ref<Value(OpBuilder &, Location, Value, ValueRange)> body) {
  auto t = cast<RankedTensorType>(init.getType());
  int64_t rank = t.getRank();
  SmallVector<Value> sz = sizesAsI64(b, loc, sizes);
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{t}, inputs, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value lin = linearIndex(nb, nl, sz);
               Value v = body(nb, nl, lin, args.drop_back());
               linalg::YieldOp::create(nb, nl, ValueRange{v});
             })
      .getResult(0);
}

template <typename OpTy, bool Normal>
struct RandomLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    Type elem = rt.getElementType();
    SmallVector<OpFoldResult> sizes = checkCreationSizes(
        rw, loc, rt, op.getSize(), adaptor.getDynamicSizes());
    Value seed = seedValue(rw, loc, adaptor.getSeed());
    Value init = emptyLike(rw, loc, rt, sizes);
    Value r = indexedGeneric(
        rw, loc, {}, init, sizes,
        [&](OpBuilder &b, Location l, Value lin, ValueRange) {
          SmallVector<Value, 4> out = philox(b, l, seed, lin);
          Value v = Normal ? normal(b, l, out, elem) : uniform(b, l, out, elem);
          return roundF64To(b, l, v, elem);
        });
    rw.replaceOp(op, castTo(rw, loc, r, rt));
    return success();
  }
};

struct DropoutLowering : public OpConversionPattern<kt::DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::DropoutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    if (!op.getTrain()) {
      rw.replaceOp(op, x);
      return success();
    }
    auto xt = cast<RankedTensorType>(x.getType());
    Type elem = xt.getElementType();
    double p = op.getP().convertToDouble();
    double scale = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    Value seed = seedValue(rw, loc, adaptor.getSeed());
    Value init = emptyLike(rw, loc, xt, sizes);
    Value r = indexedGeneric(
        rw, loc, ValueRange{x}, init, sizes,
        [&](OpBuilder &b, Location l, Value lin, ValueRange in) {
          SmallVector<Value, 4> out = philox(b, l, seed, lin);
          Value u = uniform(b, l, out, elem);
          Value keep = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE,
                                             u, f64c(b, l, p));
          Value m = arith::SelectOp::create(b, l, keep, f64c(b, l, scale),
                                            f64c(b, l, 0.0));
          // x * m in f64 (exact product of the widened value), then
          // rounded like the interpreter.
          Value xv = elem.isF64() ? in[0]
                                  : arith::ExtFOp::create(b, l, b.getF64Type(),
                                                          in[0]);
          return roundF64To(b, l, arith::MulFOp::create(b, l, xv, m), elem);
        });
    rw.replaceOp(op, r);
    return success();
  }
};

} // namespace

void kiln::lowering::populateKTRandomToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RandomLowering<kt::RandOp, false>,
               RandomLowering<kt::RandnOp, true>, DropoutLowering>(
      patterns.getContext());
}
