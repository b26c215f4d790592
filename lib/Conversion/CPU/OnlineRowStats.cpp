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
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// Scalar `v` (a float) rounded or widened to `to`.
Value widenTo(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned from = v.getType().getIntOrFloatBitWidth();
  if (from == to.getIntOrFloatBitWidth())
    return v;
  if (from < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
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

/// Whether `g` is a marked row reduction: an op of its body carries
/// `marker`, one input x ([R, C] or [C], read in order) of f32 or f64, and
/// `results` results over the rows, C reduced innermost.
bool isMarkedRowReduction(linalg::GenericOp g, StringRef marker,
                          unsigned results) {
  bool marked = false;
  g.getBody()->walk([&](Operation *op) { marked |= op->hasAttr(marker); });
  if (!marked || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != results ||
      g.getNumResults() != results)
    return false;
  unsigned n = g.getNumLoops();
  if (n < 1 || n > 2 || g.getNumReductionLoops() != 1 ||
      g.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  AffineMap rows = AffineMap::getMultiDimMapWithTargets(
      n, llvm::to_vector(llvm::seq<unsigned>(0, n - 1)), g.getContext());
  if (!maps[0].isIdentity() ||
      !llvm::all_of(ArrayRef(maps).drop_front(),
                    [&](AffineMap m) { return m == rows; }))
    return false;
  Type xt = getElementTypeOrSelf(g.getDpsInputs()[0].getType());
  return xt.isF32() || xt.isF64();
}

/// Whether `g` is the online generic: one input x ([R, C] or [C], read in
/// order, f32 or f64) and two results (m of x's type, s of f64) over the
/// rows, the classes reduced innermost, its body the element step with x
/// and m as the block arguments (no fused prologue).
bool isOnlineRowStats(linalg::GenericOp g) {
  if (!isMarkedRowReduction(g, kiln::kOnlineLseAttr, 2))
    return false;
  Type xt = getElementTypeOrSelf(g.getDpsInputs()[0].getType());
  if (getElementTypeOrSelf(g.getDpsInits()[0].getType()) != xt ||
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

//===----------------------------------------------------------------------===//
// layer_norm's row moments (count, mean, M2) in one read of the row.
//===----------------------------------------------------------------------===//
//
// The generic of KTToLinalgOptions::rowMoments computes them by Welford's
// step per element (a divide per element as a scalar loop). Here, per row:
//
//   for each block of the row (kBlockSteps vector steps of V lanes; the
//   last block, if partial, with its whole steps and one masked step):
//     a: c = sum over the block of x * (1/nb)   (the row's only read from
//        memory; c, the block's mean in the compute type, is only a shift)
//     b: d = x - c;  s1 += d;  s2 += d * d      (the block again, from L1;
//        masked lanes read c: d = 0; the next row's cache lines of the
//        same columns are prefetched, so that its pass a does
//        not start cold at each row (a 4 KiB row is a page, where the
//        hardware's stream prefetch stops))
//     the block's mean c + S1/nb and M2 max(S2 - S1*S1/nb, 0) (S1, S2 the
//     lane sums added in f64), merged into the row's (rowMomentsMerge, f64)
//
// i.e. the two-pass statistics of each block, merged exactly as the
// generic's step would merge them: per element 4 vector ops (fma; sub, add,
// fma) and no divide. d is relative to the block's own mean, so no large
// mean cancels against a small variance (1e4 + N(0, 1e-2) keeps its
// variance), and the lane sums in f32 cover kBlockSteps terms each.

namespace {

/// Whether `g` is the row-moments generic: one input x ([R, C] or [C], read
/// in order, f32 or f64), three f64 results over the rows, C reduced
/// innermost, its body rowMomentsMerge of the element (marked divf), x read
/// directly (no fused prologue).
bool isRowMoments(linalg::GenericOp g) {
  if (!isMarkedRowReduction(g, kiln::kRowMomentsAttr, 3))
    return false;
  Type xt = getElementTypeOrSelf(g.getDpsInputs()[0].getType());
  for (Value init : g.getDpsInits())
    if (!getElementTypeOrSelf(init.getType()).isF64())
      return false;
  // The element (x, or extf x) minus the running mean (block argument 2).
  Block *body = g.getBody();
  Value v = body->getArgument(0);
  if (xt.isF32()) {
    if (!v.hasOneUse() || !isa<arith::ExtFOp>(*v.getUsers().begin()))
      return false;
    v = v.getUsers().begin()->getResult(0);
  }
  return llvm::any_of(v.getUsers(), [&](Operation *u) {
    auto sub = dyn_cast<arith::SubFOp>(u);
    return sub && sub.getLhs() == v && sub.getRhs() == body->getArgument(2);
  });
}

} // namespace

LogicalResult kiln::cpu::lowerRowMoments(RewriterBase &rewriter,
                                         linalg::LinalgOp op,
                                         unsigned vectorBits) {
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || !isRowMoments(g))
    return failure();
  Location loc = g.getLoc();
  Value x = g.getDpsInputs()[0];
  SmallVector<Value> inits(g.getDpsInits());
  auto xType = cast<RankedTensorType>(x.getType());
  Type ct = xType.getElementType();
  Type f64 = rewriter.getF64Type();
  int64_t lanes =
      4 * std::max<int64_t>(vectorBits / ct.getIntOrFloatBitWidth(), 1);
  auto vt = VectorType::get({lanes}, ct);
  auto maskType = VectorType::get({lanes}, rewriter.getI1Type());
  bool hasRows = xType.getRank() == 2;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(g);
  OpBuilder &b = rewriter;
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = cIdx(0), one = cIdx(1), vl = cIdx(lanes),
        blk = cIdx(lanes * kBlockSteps);
  Value cols = tensor::DimOp::create(b, loc, x, xType.getRank() - 1);
  // Whole blocks end at `fullBlocks`; the rest is one block of masked steps.
  Value fullBlocks = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, cols, blk), blk);
  AffineMap minor =
      AffineMap::getMinorIdentityMap(xType.getRank(), 1, b.getContext());
  ArrayAttr inBounds = b.getBoolArrayAttr({true});
  Value zeroCt = arith::ConstantOp::create(b, loc, b.getFloatAttr(ct, 0));
  Value zero64 = arith::ConstantOp::create(b, loc, b.getFloatAttr(f64, 0));

  // The next row's cache lines are prefetched during a row's second pass
  // (from L1): each row's first read then finds them on the way instead of
  // starting cold at its page (measured in C: bench/layer_norm_variants.c).
  Value xBuf, lastRow;
  if (hasRows) {
    auto memTy = MemRefType::get(
        xType.getShape(), ct,
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                               {ShapedType::kDynamic, ShapedType::kDynamic}));
    xBuf = bufferization::ToBufferOp::create(b, loc, memTy, x,
                                             /*readOnly=*/true);
    lastRow = arith::SubIOp::create(b, loc, tensor::DimOp::create(b, loc, x, 0),
                                    one);
  }
  int64_t lineElems = 64 / (ct.getIntOrFloatBitWidth() / 8);
  auto row = [&](OpBuilder &b, Location loc, ValueRange rowIdx,
                 ValueRange init) -> SmallVector<Value> {
    Value nextRow;
    if (hasRows)
      nextRow = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, rowIdx[0], one), lastRow);
    auto read = [&](OpBuilder &b, Location loc, Value j, Value mask,
                    Value pad) {
      SmallVector<Value> idx(rowIdx);
      idx.push_back(j);
      return vector::TransferReadOp::create(b, loc, vt, x, idx, minor, pad,
                                            mask, inBounds)
          .getResult();
    };
    // The block [j0, j1): its count, mean and M2 (f64 scalars). A partial
    // block (`masked`) runs its whole vector steps unmasked and then one
    // masked step for the rest (possibly no lane).
    auto block = [&](OpBuilder &b, Location loc, Value j0, Value j1,
                     bool masked) -> std::tuple<Value, Value, Value> {
      Value nbIdx = arith::SubIOp::create(b, loc, j1, j0);
      Value jEnd = masked ? arith::AddIOp::create(
                                b, loc, j0,
                                arith::MulIOp::create(
                                    b, loc,
                                    arith::DivUIOp::create(b, loc, nbIdx, vl),
                                    vl))
                          : j1;
      Value lastMask;
      if (masked)
        lastMask = vector::CreateMaskOp::create(
            b, loc, maskType, ValueRange{arith::SubIOp::create(b, loc, j1, jEnd)});
      Value nb = arith::UIToFPOp::create(
          b, loc, f64,
          arith::IndexCastUIOp::create(b, loc, b.getI64Type(), nbIdx));
      Value invNb = arith::DivFOp::create(
          b, loc, arith::ConstantOp::create(b, loc, b.getFloatAttr(ct, 1)),
          widenTo(b, loc, nb, ct));
      Value invSplat = vector::BroadcastOp::create(b, loc, vt, invNb);
      // a: the shift (the block's mean in the compute type).
      auto stepA = [&](OpBuilder &b, Location loc, Value j, Value mask,
                       Value acc) -> Value {
        Value v = read(b, loc, j, mask, zeroCt);
        return math::FmaOp::create(b, loc, v, invSplat, acc);
      };
      auto sumA = scf::ForOp::create(
          b, loc, j0, jEnd, vl, ValueRange{splat(b, loc, vt, 0)},
          [&](OpBuilder &b, Location loc, Value j, ValueRange a) {
            scf::YieldOp::create(b, loc,
                                 ValueRange{stepA(b, loc, j, Value(), a[0])});
          });
      Value accA = sumA.getResult(0);
      if (masked)
        accA = stepA(b, loc, jEnd, lastMask, accA);
      Value c = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, accA);
      Value cSplat = vector::BroadcastOp::create(b, loc, vt, c);
      // b: the sums of d = x - c and d * d, prefetching the next row's
      // lines of the same columns (clamped to the row in the masked step).
      auto stepB = [&](OpBuilder &b, Location loc, Value j, Value mask,
                       Value s1, Value s2) -> std::pair<Value, Value> {
        if (nextRow)
          for (int64_t k = 0; k < lanes; k += lineElems) {
            Value col = arith::AddIOp::create(b, loc, j, cIdx(k));
            if (mask && k)
              col = arith::MinUIOp::create(
                  b, loc, col, arith::SubIOp::create(b, loc, j1, one));
            memref::PrefetchOp::create(b, loc, xBuf, ValueRange{nextRow, col},
                                       /*isWrite=*/false, /*localityHint=*/3,
                                       /*isDataCache=*/true);
          }
        Value v = read(b, loc, j, mask, c);
        Value d = arith::SubFOp::create(b, loc, v, cSplat);
        return {arith::AddFOp::create(b, loc, s1, d),
                math::FmaOp::create(b, loc, d, d, s2)};
      };
      auto sumB = scf::ForOp::create(
          b, loc, j0, jEnd, vl,
          ValueRange{splat(b, loc, vt, 0), splat(b, loc, vt, 0)},
          [&](OpBuilder &b, Location loc, Value j, ValueRange a) {
            auto [s1, s2] = stepB(b, loc, j, Value(), a[0], a[1]);
            scf::YieldOp::create(b, loc, ValueRange{s1, s2});
          });
      Value accS1 = sumB.getResult(0), accS2 = sumB.getResult(1);
      if (masked)
        std::tie(accS1, accS2) = stepB(b, loc, jEnd, lastMask, accS1, accS2);
      auto laneSum = [&](Value v) -> Value {
        return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                           widen(b, loc, v, f64));
      };
      Value s1 = laneSum(accS1), s2 = laneSum(accS2);
      Value meanB = arith::AddFOp::create(b, loc, widen(b, loc, c, f64),
                                          arith::DivFOp::create(b, loc, s1, nb));
      // S2 - S1^2/nb >= 0 but for rounding (maximumf keeps a NaN).
      Value m2B = arith::MaximumFOp::create(
          b, loc,
          arith::SubFOp::create(
              b, loc, s2,
              arith::DivFOp::create(b, loc,
                                    arith::MulFOp::create(b, loc, s1, s1), nb)),
          zero64);
      return {nb, meanB, m2B};
    };
    auto blocks = scf::ForOp::create(
        b, loc, zero, fullBlocks, blk, init,
        [&](OpBuilder &b, Location loc, Value j0, ValueRange acc) {
          auto [nb, meanB, m2B] = block(
              b, loc, j0, arith::AddIOp::create(b, loc, j0, blk), false);
          auto [n, mean, m2] =
              rowMomentsMerge(b, loc, acc[0], acc[1], acc[2], nb, meanB, m2B);
          scf::YieldOp::create(b, loc, ValueRange{n, mean, m2});
        });
    // The partial last block, if any.
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          fullBlocks, cols);
    auto last = scf::IfOp::create(
        b, loc, partial,
        [&](OpBuilder &b, Location loc) {
          auto [nb, meanB, m2B] = block(b, loc, fullBlocks, cols, true);
          Value n0 = blocks.getResult(0), mean0 = blocks.getResult(1),
                m20 = blocks.getResult(2);
          auto [n, mean, m2] =
              rowMomentsMerge(b, loc, n0, mean0, m20, nb, meanB, m2B);
          scf::YieldOp::create(b, loc, ValueRange{n, mean, m2});
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, blocks.getResults());
        });
    return SmallVector<Value>(last.getResults());
  };

  SmallVector<Value> results;
  if (!hasRows) {
    SmallVector<Value> init;
    for (Value t : inits)
      init.push_back(tensor::ExtractOp::create(b, loc, t, ValueRange{}));
    SmallVector<Value> r = row(b, loc, ValueRange{}, init);
    for (auto [t, v] : llvm::zip(inits, r))
      results.push_back(tensor::InsertOp::create(b, loc, v, t, ValueRange{}));
  } else {
    Value nRows = tensor::DimOp::create(b, loc, x, 0);
    auto loop = scf::ForOp::create(
        b, loc, zero, nRows, one, inits,
        [&](OpBuilder &b, Location loc, Value r, ValueRange outs) {
          SmallVector<Value> init;
          for (Value t : outs)
            init.push_back(tensor::ExtractOp::create(b, loc, t, ValueRange{r}));
          SmallVector<Value> vals = row(b, loc, ValueRange{r}, init);
          SmallVector<Value> next;
          for (auto [t, v] : llvm::zip(outs, vals))
            next.push_back(
                tensor::InsertOp::create(b, loc, v, t, ValueRange{r}));
          scf::YieldOp::create(b, loc, next);
        });
    results.append(loop.getResults().begin(), loop.getResults().end());
  }
  rewriter.replaceOp(g, results);
  return success();
}
