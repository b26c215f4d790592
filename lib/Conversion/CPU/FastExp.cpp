//===- FastExp.cpp - A cheaper f32 exp for AVX-512 ------------------------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h and docs/codegen.md
// ("A cheaper f32 exp on AVX-512"). Every f32 math.exp (scalar or a vector
// of static shape) becomes 14 ops per register:
//
//   x = maximumf(minimumf(x, 89), -104)     NaN stays NaN (vminps/vmaxps;
//                                           no minimumf for x = -|y|)
//   t = fma(x, log2(e), 1.5 * 2^23)         n = t - 1.5 * 2^23: rint(x log2 e)
//   r = fma(n, -ln2_hi, x); r = fma(n, -ln2_lo, r)      |r| <= ln2 / 2
//   p = 1 + r (1 + r (c2 + r (c3 + r (c4 + r (c5 + r c6)))))  (Horner, 6 fma)
//   exp(x) = scalef(p, n) = p * 2^n         vscalefps: +inf past the top,
//                                           denormals and 0 at the bottom
//
// against MLIR's polynomial approximation's ~25 (its clamps, floor, the 2^n
// built from integer exponent bits with its range split in two, and the
// selects for infinities and NaN). c2..c6 are a minimax fit of e^r on
// [-ln2/2, ln2/2] with c0 = c1 = 1 (relative error 2e-9 in exact
// arithmetic); measured over every f32 in [-110, 90] the result is within
// 1.06 ulp of exp rounded to f32 (test/Execution/CPU/exp_ulp.py). The clamp
// keeps r accurate and n within scalef's range: exp(89) and exp(-104) are
// already +inf and 0 in f32, so the clamp changes no result.
//
// vscalefps only exists for 512-bit registers here (the .512 intrinsic, no
// AVX512VL needed): the operands are flattened and cut into vector<16xf32>
// pieces, a short last piece (or a scalar) padded into one register; LLVM
// splits wider vectors into registers anyway, so the pieces cost nothing.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"


using namespace mlir;

namespace {

constexpr int64_t kLanes = 16;

/// A constant of `type` (f32 or a vector of f32) holding `v`.
Value f32Constant(OpBuilder &b, Location loc, Type type, float v) {
  FloatAttr attr = b.getF32FloatAttr(v);
  if (auto vt = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, vt,
                                     DenseElementsAttr::get(vt, attr));
  return arith::ConstantOp::create(b, loc, attr);
}

/// vscalefps of one vector<16xf32> pair: p * 2^floor(n), all lanes.
Value scalef16(OpBuilder &b, Location loc, Value p, Value n) {
  auto vt = cast<VectorType>(p.getType());
  Value passthru = ub::PoisonOp::create(b, loc, vt);
  Value mask = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(-1));
  // _MM_FROUND_CUR_DIRECTION: the rounding mode of MXCSR.
  Value rounding = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(4));
  return LLVM::CallIntrinsicOp::create(
             b, loc, vt, b.getStringAttr(kiln::cpu::kScalefIntrinsic),
             ValueRange{p, n, passthru, mask, rounding})
      .getResult(0);
}

/// p * 2^n (n integral) for p, n of the same f32 type: a scalar or a
/// vector of static shape, in 16-lane pieces.
Value scalef(OpBuilder &b, Location loc, Value p, Value n) {
  Type f32 = b.getF32Type();
  auto reg = VectorType::get({kLanes}, f32);
  auto vt = dyn_cast<VectorType>(p.getType());
  if (!vt) {
    // A scalar: lane 0 of a register of zeros.
    Value zero = f32Constant(b, loc, reg, 0.0f);
    Value pv = vector::InsertOp::create(b, loc, p, zero, 0);
    Value nv = vector::InsertOp::create(b, loc, n, zero, 0);
    return vector::ExtractOp::create(b, loc, scalef16(b, loc, pv, nv), 0);
  }
  int64_t count = vt.getNumElements();
  auto flat = VectorType::get({count}, f32);
  Value pf = vector::ShapeCastOp::create(b, loc, flat, p);
  Value nf = vector::ShapeCastOp::create(b, loc, flat, n);
  if (count == kLanes)
    return vector::ShapeCastOp::create(b, loc, vt, scalef16(b, loc, pf, nf));
  Value result = ub::PoisonOp::create(b, loc, flat);
  for (int64_t at = 0; at < count; at += kLanes) {
    int64_t size = std::min(kLanes, count - at);
    Value pp = vector::ExtractStridedSliceOp::create(b, loc, pf, {at}, {size}, {1});
    Value np = vector::ExtractStridedSliceOp::create(b, loc, nf, {at}, {size}, {1});
    if (size < kLanes) {
      Value zero = f32Constant(b, loc, reg, 0.0f);
      pp = vector::InsertStridedSliceOp::create(b, loc, pp, zero, {0}, {1});
      np = vector::InsertStridedSliceOp::create(b, loc, np, zero, {0}, {1});
    }
    Value piece = scalef16(b, loc, pp, np);
    if (size < kLanes)
      piece = vector::ExtractStridedSliceOp::create(b, loc, piece, {0}, {size}, {1});
    result =
        vector::InsertStridedSliceOp::create(b, loc, piece, result, {at}, {1});
  }
  return vector::ShapeCastOp::create(b, loc, vt, result);
}

/// Whether `x` is -|y| (never above 0; NaN for a NaN y).
bool isNonPositiveOrNaN(Value x) {
  auto neg = x.getDefiningOp<arith::NegFOp>();
  return neg && neg.getOperand().getDefiningOp<math::AbsFOp>();
}

struct FastExpAVX512 : public OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!kiln::cpu::isFastExpCandidate(op))
      return rewriter.notifyMatchFailure(op, "not an f32 exp of static shape");
    rewriter.replaceOp(op, kiln::cpu::buildFastExpAVX512(
                               rewriter, op.getLoc(), op.getOperand()));
    return success();
  }
};

} // namespace

bool kiln::cpu::isFastExpCandidate(math::ExpOp op) {
  Type type = op.getType();
  if (auto vt = dyn_cast<VectorType>(type))
    return vt.getElementType().isF32() && !vt.isScalable() &&
           vt.getNumElements() > 0;
  return type.isF32();
}

Value kiln::cpu::buildFastExpAVX512(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  auto c = [&](float v) { return f32Constant(b, loc, type, v); };
  // minimumf / maximumf propagate NaN; with a constant that is neither NaN
  // nor zero each is one vminps / vmaxps. The upper clamp is left out for
  // an argument that cannot be positive (cross_entropy's online step takes
  // exp(-|x - m|)); LLVM does not drop it by itself.
  if (!isNonPositiveOrNaN(x))
    x = arith::MinimumFOp::create(b, loc, x, c(kFastExpMaxArg));
  x = arith::MaximumFOp::create(b, loc, x, c(kFastExpMinArg));
  // n = rint(x log2 e): the sum with 1.5 * 2^23 rounds to an integer (ties
  // to even) for |x log2 e| < 2^22.
  Value shift = c(12582912.0f);
  Value t = math::FmaOp::create(b, loc, x, c(1.44269504088896341f), shift);
  Value n = arith::SubFOp::create(b, loc, t, shift);
  // r = x - n ln2 in two Cody-Waite steps (ln2_hi has 8 trailing zero bits
  // of its significand: n * ln2_hi is exact for |n| < 256).
  Value r = math::FmaOp::create(b, loc, n, c(-0.693145751953125f), x);
  r = math::FmaOp::create(b, loc, n, c(-1.428606765330187045e-06f), r);
  // e^r, degree 6 (Horner).
  static constexpr float kCoefficients[] = {
      0.0013843654f, 0.0083741555f, 0.041668f, 0.16666432f, 0.49999994f,
      1.0f, 1.0f};
  Value p = c(kCoefficients[0]);
  for (float k : ArrayRef<float>(kCoefficients).drop_front())
    p = math::FmaOp::create(b, loc, p, r, c(k));
  return scalef(b, loc, p, n);
}

void kiln::cpu::populateFastExpAVX512Patterns(RewritePatternSet &patterns) {
  patterns.add<FastExpAVX512>(patterns.getContext(), /*benefit=*/2);
}

bool kiln::cpu::hostHasAVX512() { return hostVectorBits() >= 512; }

FailureOr<bool> kiln::cpu::resolveFastExp(StringRef option) {
  if (option == "auto" || option == "true")
    return hostHasAVX512();
  if (option == "avx512")
    return true;
  if (option == "false" || option == "off")
    return false;
  return failure();
}
