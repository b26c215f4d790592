//===- OnlineRowStats.cpp - Vector loops for the online row max and sum ---===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. The generic that
// cross_entropy's lowering makes of its row statistics with
// `online-row-stats` (two reduction results, the row max m and the sum of
// exp(x - m), its exp marked kiln.online_lse; onlineLseStep) cannot go
// through upstream's partial-reduction tiling: its combiner is not one op
// with a neutral element. This lowers it (on tensors, inside a kernel's
// block of rows) to
//
//   for each row:
//     per lane (V = 4 registers): running max mv and sum s64 (f64)
//     for each block of kBlockSteps vector steps:
//       s32 = 0; for each step: x = read V elements (the row's only read);
//                               (mv', s32) = vectorStep(x, mv, s32)
//       s64 = s64 * exp(mv - mv') + s32                  (once per block)
//     the last partial step: a masked read padded with -inf (adds nothing)
//     M = max over lanes;  S = sum over lanes of s64 * exp(mv - M)
//
// so the row is read once and the exp of every element is computed while
// the next elements load (one exp per element, plus one per lane and block
// for the rescale). The sum is a cascade as for the other f32 sums into
// f64 (TileAndVectorize.cpp, splitWidenedSum): f32 within a block, f64
// across blocks and lanes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;

namespace {

/// Vector steps per block of the f32 sum (then added into f64).
constexpr int64_t kBlockSteps = 16;

Value splat(OpBuilder &b, Location loc, VectorType vt, double v) {
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(
                  vt, b.getFloatAttr(vt.getElementType(), v)));
}

/// `v` (scalar or vector) with element type `to`.
Value widen(OpBuilder &b, Location loc, Value v, Type to) {
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    to = vt.clone(to);
  return v.getType() == to ? v : arith::ExtFOp::create(b, loc, to, v);
}

/// The vector form of onlineLseStep with fewer ops per step (8 besides
/// exp, against 13): the lanes start at -FLT_MAX, never -inf, so x - m is
/// never -inf - -inf (an x of -inf gives exp(-inf) = 0 without a select),
/// and the `exp(x - x)` term that makes s NaN for x = +inf is left out: a
/// +inf anywhere in the row makes the row max +inf, and the row's sum is
/// then set to NaN once (see `row`), as is every s of the generic.
///   gt = x > m;  e = exp(-|x - m|)
///   s' = gt ? fma(s, e, 1) : s + e;  m' = gt ? x : m
std::pair<Value, Value> vectorStep(OpBuilder &b, Location loc, Value x,
                                   Value m, Value s) {
  Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, m);
  Value d = arith::NegFOp::create(
      b, loc, math::AbsFOp::create(b, loc, arith::SubFOp::create(b, loc, x, m)));
  Value e = math::ExpOp::create(b, loc, d);
  Value one = splat(b, loc, cast<VectorType>(x.getType()), 1.0);
  Value grown = math::FmaOp::create(b, loc, s, e, one);
  Value added = arith::AddFOp::create(b, loc, s, e);
  return {arith::SelectOp::create(b, loc, gt, x, m),
          arith::SelectOp::create(b, loc, gt, grown, added)};
}

/// Whether `g` is the online generic: one input x ([R, C] or [C], read in
/// order, f32 or f64) and two results (m of x's type, s of f64) over the
/// rows, the classes reduced innermost, its body the element step with x
/// and m as the block arguments (no fused prologue).
bool isOnlineRowStats(linalg::GenericOp g) {
  bool marked = false;
  g.getBody()->walk([&](Operation *op) {
    marked |= op->hasAttr(kiln::kOnlineLseAttr);
  });
  if (!marked || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 2 ||
      g.getNumResults() != 2)
    return false;
  unsigned n = g.getNumLoops();
  if (n < 1 || n > 2 || g.getNumReductionLoops() != 1 ||
      g.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  MLIRContext *ctx = g.getContext();
  AffineMap rows = AffineMap::getMultiDimMapWithTargets(
      n, llvm::to_vector(llvm::seq<unsigned>(0, n - 1)), ctx);
  if (!maps[0].isIdentity() || maps[1] != rows || maps[2] != rows)
    return false;
  Type xt = getElementTypeOrSelf(g.getDpsInputs()[0].getType());
  if (!(xt.isF32() || xt.isF64()) ||
      getElementTypeOrSelf(g.getDpsInits()[0].getType()) != xt ||
      !getElementTypeOrSelf(g.getDpsInits()[1].getType()).isF64())
    return false;
  // The step reads the input and the max block arguments directly.
  Block *body = g.getBody();
  return llvm::any_of(body->getArgument(0).getUsers(), [&](Operation *u) {
    auto cmp = dyn_cast<arith::CmpFOp>(u);
    return cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT &&
           cmp.getLhs() == body->getArgument(0) &&
           cmp.getRhs() == body->getArgument(1);
  });
}

} // namespace

LogicalResult kiln::cpu::lowerOnlineRowStats(RewriterBase &rewriter,
                                             linalg::LinalgOp op,
                                             unsigned vectorBits) {
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || !isOnlineRowStats(g))
    return failure();
  Location loc = g.getLoc();
  Value x = g.getDpsInputs()[0];
  Value mInit = g.getDpsInits()[0], sInit = g.getDpsInits()[1];
  auto xType = cast<RankedTensorType>(x.getType());
  Type ct = xType.getElementType();
  Type f64 = rewriter.getF64Type();
  int64_t lanes = 4 * std::max<int64_t>(vectorBits / ct.getIntOrFloatBitWidth(), 1);
  auto vt = VectorType::get({lanes}, ct);
  auto vacc = VectorType::get({lanes}, f64);
  bool hasRows = xType.getRank() == 2;
  double inf = std::numeric_limits<double>::infinity();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(g);
  OpBuilder &b = rewriter;
  auto cIdx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value zero = cIdx(0), one = cIdx(1), vl = cIdx(lanes),
        blk = cIdx(lanes * kBlockSteps);
  Value cols = tensor::DimOp::create(b, loc, x, xType.getRank() - 1);
  // Full vector steps end at `full`; the rest is one masked step.
  Value full = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, cols, vl), vl);
  Value rest = arith::SubIOp::create(b, loc, cols, full);
  Value padX = arith::ConstantOp::create(b, loc, b.getFloatAttr(ct, -inf));
  AffineMap minor = AffineMap::getMinorIdentityMap(xType.getRank(), 1,
                                                   b.getContext());
  ArrayAttr inBounds = b.getBoolArrayAttr({true});

  // One row: (m, s) merged with the row's initial values.
  auto row = [&](OpBuilder &b, Location loc, ValueRange rowIdx, Value m0,
                 Value s0) -> std::pair<Value, Value> {
    auto read = [&](OpBuilder &b, Location loc, Value j, Value mask) {
      SmallVector<Value> idx(rowIdx);
      idx.push_back(j);
      return vector::TransferReadOp::create(b, loc, vt, x, idx, minor, padX,
                                            mask, inBounds)
          .getResult();
    };
    // s64 += s32 rescaled from the block's start max `from` to `to`.
    auto fold = [&](OpBuilder &b, Location loc, Value s64, Value from,
                    Value to, Value s32) -> Value {
      Value f = widen(b, loc, onlineLseRescale(b, loc, from, to), f64);
      return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, s64, f),
                                   widen(b, loc, s32, f64));
    };
    auto lowest = -(double)llvm::APFloat::getLargest(
                      cast<FloatType>(ct).getFloatSemantics())
                      .convertToDouble();
    Value mv0 = splat(b, loc, vt, lowest), s64v0 = splat(b, loc, vacc, 0);
    auto blocks = scf::ForOp::create(
        b, loc, zero, full, blk, ValueRange{mv0, s64v0},
        [&](OpBuilder &b, Location loc, Value j0, ValueRange acc) {
          Value end = arith::MinUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, j0, blk), full);
          auto steps = scf::ForOp::create(
              b, loc, j0, end, vl,
              ValueRange{acc[0], splat(b, loc, vt, 0)},
              [&](OpBuilder &b, Location loc, Value j, ValueRange a) {
                auto [m, s] =
                    vectorStep(b, loc, read(b, loc, j, Value()), a[0], a[1]);
                scf::YieldOp::create(b, loc, ValueRange{m, s});
              });
          Value mv = steps.getResult(0);
          scf::YieldOp::create(
              b, loc,
              ValueRange{mv, fold(b, loc, acc[1], acc[0], mv,
                                  steps.getResult(1))});
        });
    Value mv = blocks.getResult(0), s64v = blocks.getResult(1);
    // The masked last step (lanes past the row read -inf: no effect).
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()), ValueRange{rest});
    auto [mt, st] = vectorStep(b, loc, read(b, loc, full, mask), mv,
                               splat(b, loc, vt, 0));
    s64v = fold(b, loc, s64v, mv, mt, st);
    mv = mt;
    // Across the lanes and with the initial values.
    Value mRow = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXNUMF, mv);
    mRow = arith::MaxNumFOp::create(b, loc, mRow, m0);
    Value mSplat = vector::BroadcastOp::create(b, loc, vt, mRow);
    Value scaled = arith::MulFOp::create(
        b, loc, s64v, widen(b, loc, onlineLseRescale(b, loc, mv, mSplat), f64));
    Value sRow =
        vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, scaled);
    Value s0f = arith::MulFOp::create(
        b, loc, s0, widen(b, loc, onlineLseRescale(b, loc, m0, mRow), f64));
    sRow = arith::AddFOp::create(b, loc, sRow, s0f);
    // The generic's values for the cases vectorStep leaves out: a row with
    // +inf has s = NaN; a row without a finite element (only -inf, or
    // empty: s = 0, as every finite element adds at least its own 1 at the
    // max) has m = -inf, not the lanes' -FLT_MAX.
    Value posInf = arith::ConstantOp::create(b, loc, b.getFloatAttr(ct, inf));
    Value nan = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f64, std::numeric_limits<double>::quiet_NaN()));
    sRow = arith::SelectOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mRow, posInf),
        nan, sRow);
    Value zero64 = arith::ConstantOp::create(b, loc, b.getFloatAttr(f64, 0.0));
    mRow = arith::SelectOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sRow, zero64),
        arith::ConstantOp::create(b, loc, b.getFloatAttr(ct, -inf)), mRow);
    return {mRow, sRow};
  };

  SmallVector<Value> results;
  if (!hasRows) {
    Value m0 = tensor::ExtractOp::create(b, loc, mInit, ValueRange{});
    Value s0 = tensor::ExtractOp::create(b, loc, sInit, ValueRange{});
    auto [m, s] = row(b, loc, ValueRange{}, m0, s0);
    results.push_back(tensor::InsertOp::create(b, loc, m, mInit, ValueRange{}));
    results.push_back(tensor::InsertOp::create(b, loc, s, sInit, ValueRange{}));
  } else {
    Value nRows = tensor::DimOp::create(b, loc, x, 0);
    auto loop = scf::ForOp::create(
        b, loc, zero, nRows, one, ValueRange{mInit, sInit},
        [&](OpBuilder &b, Location loc, Value r, ValueRange outs) {
          Value m0 = tensor::ExtractOp::create(b, loc, outs[0], ValueRange{r});
          Value s0 = tensor::ExtractOp::create(b, loc, outs[1], ValueRange{r});
          auto [m, s] = row(b, loc, ValueRange{r}, m0, s0);
          scf::YieldOp::create(
              b, loc,
              ValueRange{
                  tensor::InsertOp::create(b, loc, m, outs[0], ValueRange{r}),
                  tensor::InsertOp::create(b, loc, s, outs[1],
                                           ValueRange{r})});
        });
    results.append(loop.getResults().begin(), loop.getResults().end());
  }
  rewriter.replaceOp(g, results);
  return success();
}
