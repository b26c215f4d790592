//===- NN.cpp - kt matmul, linear, softmax, log_softmax to linalg ---------===//
//
// Part of Kiln. matmul covers every rank case of torch.matmul: 1-D operands
// gain a unit dim, batch dims broadcast (linalg.generic copies) and collapse
// into one for linalg.batch_matmul; a batched `self` against a 2-D `other`
// folds its batch into M and uses linalg.matmul. linear transposes the weight
// and accumulates onto the broadcast bias. f16/bf16 accumulate in f32.
// softmax and log_softmax are three generics (max, sum of exp, normalize),
// with the row's 1/sum or log(sum) computed once per row in between; with
// KTToLinalgOptions::softmaxStoresExp softmax is four (max, e = exp(x - max)
// stored, sum of e, e times the row's 1/sum in place), so that exp is
// computed once per element as in log_softmax.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTFusionOps.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

/// Collapses dims [from, to) of `v` into one.
Value collapseRange(OpBuilder &b, Location loc, Value v, int64_t from,
                    int64_t to) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < from; ++i) {
    groups.push_back({i});
    shape.push_back(t.getDimSize(i));
  }
  ReassociationIndices g;
  int64_t n = 1;
  for (int64_t i = from; i < to; ++i) {
    g.push_back(i);
    n = (ShapedType::isDynamic(n) || t.isDynamicDim(i)) ? ShapedType::kDynamic
                                                        : n * t.getDimSize(i);
  }
  groups.push_back(g);
  shape.push_back(n);
  for (int64_t i = to; i < t.getRank(); ++i) {
    groups.push_back({i});
    shape.push_back(t.getDimSize(i));
  }
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, groups);
}

/// Expands dim `d` of `v` into `sizes` (static shape in `shape`).
Value expandDim(OpBuilder &b, Location loc, Value v, int64_t d,
                ArrayRef<int64_t> shape, ArrayRef<OpFoldResult> sizes) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> outShape;
  SmallVector<OpFoldResult> outSizes;
  SmallVector<OpFoldResult> vSizes = getSizes(b, loc, v);
  int64_t j = 0;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (i == d) {
      ReassociationIndices g;
      for (size_t k = 0; k < shape.size(); ++k) {
        g.push_back(j++);
        outShape.push_back(shape[k]);
        outSizes.push_back(sizes[k]);
      }
      groups.push_back(g);
    } else {
      groups.push_back({j++});
      outShape.push_back(t.getDimSize(i));
      outSizes.push_back(vSizes[i]);
    }
  }
  auto outType = RankedTensorType::get(outShape, t.getElementType());
  // An expand_shape group with two or more `?` dims crashes MLIR 22's
  // expand-strided-metadata (memref.expand_shape -> reinterpret_cast), and
  // memref.reshape to a dynamic shape does not lower to LLVM: copy with a
  // generic that reads the source at the group's linear index.
  if (llvm::count_if(shape, ShapedType::isDynamic) > 1) {
    int64_t outRank = outShape.size();
    SmallVector<Value> groupSizes;
    for (size_t k = 0; k < shape.size(); ++k)
      groupSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[k]));
    Value init = tensor::EmptyOp::create(b, loc, outSizes, t.getElementType());
    SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(outRank)};
    SmallVector<utils::IteratorType> iters(outRank,
                                           utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{outType}, ValueRange{}, ValueRange{init},
               maps, iters,
               [&](OpBuilder &nb, Location nl, ValueRange) {
                 SmallVector<Value> srcIdx;
                 int64_t j = 0;
                 for (int64_t i = 0; i < t.getRank(); ++i) {
                   if (i != d) {
                     srcIdx.push_back(linalg::IndexOp::create(nb, nl, j++));
                     continue;
                   }
                   Value lin = linalg::IndexOp::create(nb, nl, j++);
                   for (size_t k = 1; k < shape.size(); ++k) {
                     lin = arith::MulIOp::create(nb, nl, lin, groupSizes[k]);
                     lin = arith::AddIOp::create(
                         nb, nl, lin, linalg::IndexOp::create(nb, nl, j++));
                   }
                   srcIdx.push_back(lin);
                 }
                 Value e = tensor::ExtractOp::create(nb, nl, v, srcIdx);
                 linalg::YieldOp::create(nb, nl, e);
               })
        .getResult(0);
  }
  return tensor::ExpandShapeOp::create(b, loc, outType, v, groups, outSizes);
}

/// A zero-filled (or `init`-filled) accumulator of `shape`/`sizes`.
Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
            ArrayRef<OpFoldResult> sizes, Type elem) {
  return filled(b, loc, RankedTensorType::get(shape, elem), sizes,
                scalarConst(b, loc, elem, 0));
}

struct MatmulLowering : public OpConversionPattern<kt::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getSelf(), bv = adaptor.getOther();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    auto at = cast<RankedTensorType>(a.getType());
    auto bt = cast<RankedTensorType>(bv.getType());
    {
      // Run-time checks (the interpreter's order): the contracting dims,
      // then the batch dims. A failed check goes on with a zero operand of
      // the expected contracting size, so nothing is read out of bounds.
      int64_t ra = at.getRank(), rb = bt.getRank();
      SmallVector<OpFoldResult> sa = getSizes(rw, loc, a),
                                sb = getSizes(rw, loc, bv);
      int64_t kb = rb == 1 ? 0 : rb - 2;
      Value kBad =
          indexCmp(rw, loc, arith::CmpIPredicate::ne, sa[ra - 1], sb[kb]);
      checkAtRunTime(rw, loc, kBad, "contracting dims differ at run time: {0} vs {1}",
                     {getValueOrCreateConstantIndexOp(rw, loc, sa[ra - 1]),
                      getValueOrCreateConstantIndexOp(rw, loc, sb[kb])});
      if (!matchPattern(kBad, m_Zero())) {
        if (bt.isDynamicDim(kb)) {
          SmallVector<OpFoldResult> safe = sb;
          safe[kb] = sa[ra - 1];
          bv = safeOperand(rw, loc, bv, kBad, safe);
        } else {
          SmallVector<OpFoldResult> safe = sa;
          safe[ra - 1] = sb[kb];
          a = safeOperand(rw, loc, a, kBad, safe);
        }
        at = cast<RankedTensorType>(a.getType());
        bt = cast<RankedTensorType>(bv.getType());
      }
      int64_t na = ra > 2 ? ra - 2 : 0, nbt = rb > 2 ? rb - 2 : 0;
      int64_t nbatch = std::max(na, nbt);
      for (int64_t i = 0; i < nbatch; ++i) {
        int64_t ia = i - (nbatch - na), ib = i - (nbatch - nbt);
        OpFoldResult x = ia >= 0 ? sa[ia] : OpFoldResult(rw.getIndexAttr(1));
        OpFoldResult y = ib >= 0 ? sb[ib] : OpFoldResult(rw.getIndexAttr(1));
        Value one = arith::ConstantIndexOp::create(rw, loc, 1);
        Value bad = boolAnd(
            rw, loc, indexCmp(rw, loc, arith::CmpIPredicate::ne, x, y),
            boolAnd(rw, loc, indexCmp(rw, loc, arith::CmpIPredicate::ne, x, one),
                    indexCmp(rw, loc, arith::CmpIPredicate::ne, y, one)));
        checkAtRunTime(rw, loc, bad,
                       "batch dims are not broadcast-compatible at run time: "
                       "{0} vs {1} in batch dim " + std::to_string(i),
                       {getValueOrCreateConstantIndexOp(rw, loc, x),
                        getValueOrCreateConstantIndexOp(rw, loc, y)});
      }
    }
    if (at.getRank() == 1 && bt.getRank() == 1) {
      Value init = zeros(rw, loc, {}, {}, acc);
      Value r = linalg::DotOp::create(rw, loc, TypeRange{init.getType()},
                                      ValueRange{a, bv}, ValueRange{init})
                    .getResult(0);
      rw.replaceOp(
          op, castTo(rw, loc, convertTensor(rw, loc, r, elem), resultType));
      return success();
    }
    bool vecA = at.getRank() == 1, vecB = bt.getRank() == 1;
    if (vecA)
      a = insertUnitDims(
          rw, loc, a,
          RankedTensorType::get({1, at.getDimSize(0)}, at.getElementType()),
          {0});
    if (vecB)
      bv = insertUnitDims(
          rw, loc, bv,
          RankedTensorType::get({bt.getDimSize(0), 1}, bt.getElementType()),
          {1});
    at = cast<RankedTensorType>(a.getType());
    bt = cast<RankedTensorType>(bv.getType());
    int64_t ra = at.getRank(), rb = bt.getRank();
    SmallVector<OpFoldResult> sa = getSizes(rw, loc, a),
                              sb = getSizes(rw, loc, bv);
    OpFoldResult m = sa[ra - 2], k = sa[ra - 1], n = sb[rb - 1];
    int64_t ms = at.getDimSize(ra - 2), ks = at.getDimSize(ra - 1),
            ns = bt.getDimSize(rb - 1);
    Value r; // [batch..., M, N] in acc
    SmallVector<int64_t> batchShape;
    SmallVector<OpFoldResult> batchSizes;
    if (rb == 2) {
      // Fold self's batch dims into M.
      for (int64_t i = 0; i < ra - 2; ++i) {
        batchShape.push_back(at.getDimSize(i));
        batchSizes.push_back(sa[i]);
      }
      Value a2 = ra > 2 ? collapseRange(rw, loc, a, 0, ra - 1) : a;
      auto a2t = cast<RankedTensorType>(a2.getType());
      Value init = zeros(rw, loc, {a2t.getDimSize(0), ns},
                         {getSizes(rw, loc, a2)[0], n}, acc);
      r = linalg::MatmulOp::create(rw, loc, TypeRange{init.getType()},
                                   ValueRange{a2, bv}, ValueRange{init})
              .getResult(0);
      if (ra > 2) {
        SmallVector<int64_t> shape = batchShape;
        shape.push_back(ms);
        SmallVector<OpFoldResult> sizes = batchSizes;
        sizes.push_back(m);
        r = expandDim(rw, loc, r, 0, shape, sizes);
      }
    } else {
      // Broadcast batch dims (right-aligned), collapse them, batch_matmul.
      int64_t nb = std::max(ra, rb) - 2;
      for (int64_t j = 0; j < nb; ++j) {
        int64_t ia = j - (nb - (ra - 2)), ib = j - (nb - (rb - 2));
        int64_t da = ia >= 0 ? at.getDimSize(ia) : 1;
        int64_t db = ib >= 0 ? bt.getDimSize(ib) : 1;
        // A static size other than 1 wins; two `?` dims broadcast at run
        // time (either may be 1).
        if (ShapedType::isDynamic(da) && ShapedType::isDynamic(db)) {
          batchShape.push_back(ShapedType::kDynamic);
          Value x = getValueOrCreateConstantIndexOp(rw, loc, sa[ia]);
          Value y = getValueOrCreateConstantIndexOp(rw, loc, sb[ib]);
          Value isOne = arith::CmpIOp::create(
              rw, loc, arith::CmpIPredicate::eq, x,
              arith::ConstantIndexOp::create(rw, loc, 1));
          batchSizes.push_back(
              arith::SelectOp::create(rw, loc, isOne, y, x).getResult());
        } else if (ShapedType::isDynamic(da) && db == 1) {
          batchShape.push_back(da);
          batchSizes.push_back(sa[ia]);
        } else if (ShapedType::isDynamic(db) && da == 1) {
          batchShape.push_back(db);
          batchSizes.push_back(sb[ib]);
        } else if (ShapedType::isDynamic(da) || ShapedType::isDynamic(db)) {
          int64_t d = ShapedType::isDynamic(da) ? db : da;
          batchShape.push_back(d);
          batchSizes.push_back(rw.getIndexAttr(d));
        } else {
          int64_t d = da == 1 ? db : da;
          batchShape.push_back(d);
          batchSizes.push_back(rw.getIndexAttr(d));
        }
      }
      auto bcast = [&](Value v, RankedTensorType t, ArrayRef<OpFoldResult> s,
                       int64_t r0) {
        SmallVector<int64_t> shape = batchShape;
        shape.push_back(t.getDimSize(r0 - 2));
        shape.push_back(t.getDimSize(r0 - 1));
        auto target = RankedTensorType::get(shape, t.getElementType());
        SmallVector<OpFoldResult> sizes = batchSizes;
        sizes.push_back(s[r0 - 2]);
        sizes.push_back(s[r0 - 1]);
        // Same type: only `?` batch dims of size 1 may need broadcasting.
        if (target == t)
          return broadcastDynamicDims(rw, loc, v, shape, sizes);
        return broadcastTo(rw, loc, v, target, sizes);
      };
      Value a3 = collapseRange(rw, loc, bcast(a, at, sa, ra), 0, nb);
      Value b3 = collapseRange(rw, loc, bcast(bv, bt, sb, rb), 0, nb);
      Value bsz = dimSize(rw, loc, a3, 0);
      auto a3t = cast<RankedTensorType>(a3.getType());
      Value init =
          zeros(rw, loc, {a3t.getDimSize(0), ms, ns}, {bsz, m, n}, acc);
      r = linalg::BatchMatmulOp::create(rw, loc, TypeRange{init.getType()},
                                        ValueRange{a3, b3}, ValueRange{init})
              .getResult(0);
      SmallVector<int64_t> shape = batchShape;
      SmallVector<OpFoldResult> sizes = batchSizes;
      r = expandDim(rw, loc, r, 0, shape, sizes);
    }
    (void)k;
    (void)ks;
    r = convertTensor(rw, loc, r, elem);
    // Drop the unit dims of 1-D operands.
    auto rt = cast<RankedTensorType>(r.getType());
    int64_t rr = rt.getRank();
    if (vecA || vecB) {
      SmallVector<ReassociationIndices> groups;
      SmallVector<int64_t> shape;
      for (int64_t i = 0; i < rr - 2; ++i) {
        groups.push_back({i});
        shape.push_back(rt.getDimSize(i));
      }
      if (vecA && vecB) {
        // Not reached (1-D x 1-D is a dot).
      } else if (vecA) {
        groups.push_back({rr - 2, rr - 1});
        shape.push_back(rt.getDimSize(rr - 1));
      } else {
        groups.push_back({rr - 2, rr - 1});
        shape.push_back(rt.getDimSize(rr - 2));
      }
      if (rr == 2 && groups.size() == 1) {
        // [1, N] -> [N] or [M, 1] -> [M].
      }
      r = tensor::CollapseShapeOp::create(
          rw, loc, RankedTensorType::get(shape, elem), r, groups);
    }
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

struct LinearLowering : public OpConversionPattern<kt::LinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::LinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), w = adaptor.getWeight();
    Value bias = adaptor.getBias();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    auto xt = cast<RankedTensorType>(x.getType());
    auto wt = cast<RankedTensorType>(w.getType());
    int64_t rx = xt.getRank();
    {
      // Run-time checks as in the interpreter; a failed one goes on with a
      // zero weight / bias of the expected size.
      SmallVector<OpFoldResult> xs = getSizes(rw, loc, x),
                                ws = getSizes(rw, loc, w);
      Value inBad =
          indexCmp(rw, loc, arith::CmpIPredicate::ne, ws[1], xs[rx - 1]);
      checkAtRunTime(
          rw, loc, inBad,
          "`input` has {0} features but `weight` expects {1} (at run time)",
          {getValueOrCreateConstantIndexOp(rw, loc, xs[rx - 1]),
           getValueOrCreateConstantIndexOp(rw, loc, ws[1])});
      if (!matchPattern(inBad, m_Zero())) {
        SmallVector<OpFoldResult> safe = {ws[0], xs[rx - 1]};
        w = safeOperand(rw, loc, w, inBad, safe);
        wt = cast<RankedTensorType>(w.getType());
      }
      if (bias) {
        OpFoldResult bn = getSizes(rw, loc, bias)[0];
        Value bBad = indexCmp(rw, loc, arith::CmpIPredicate::ne, bn, ws[0]);
        checkAtRunTime(rw, loc, bBad,
                       "`bias` has {0} elements but `weight` has {1} "
                       "out_features (at run time)",
                       {getValueOrCreateConstantIndexOp(rw, loc, bn),
                        getValueOrCreateConstantIndexOp(rw, loc, ws[0])});
        bias = safeOperand(rw, loc, bias, bBad, {ws[0]});
      }
    }
    // [..., in] -> [M, in].
    Value x2;
    if (rx == 1)
      x2 = insertUnitDims(
          rw, loc, x, RankedTensorType::get({1, xt.getDimSize(0)}, elem), {0});
    else if (rx > 2)
      x2 = collapseRange(rw, loc, x, 0, rx - 1);
    else
      x2 = x;
    SmallVector<OpFoldResult> ws = getSizes(rw, loc, w);
    // weight^T: [in, out].
    Value wtInit = emptyLike(
        rw, loc,
        RankedTensorType::get({wt.getDimSize(1), wt.getDimSize(0)}, elem),
        {ws[1], ws[0]});
    Value wT =
        linalg::TransposeOp::create(rw, loc, w, wtInit, ArrayRef<int64_t>{1, 0})
            .getResult()[0];
    auto x2t = cast<RankedTensorType>(x2.getType());
    SmallVector<int64_t> accShape = {x2t.getDimSize(0), wt.getDimSize(0)};
    SmallVector<OpFoldResult> accSizes = {getSizes(rw, loc, x2)[0], ws[0]};
    auto accType = RankedTensorType::get(accShape, acc);
    Value init;
    if (bias) {
      Value b1 = convertTensor(rw, loc, bias, acc);
      init = broadcastTo(rw, loc, b1, accType, accSizes);
    } else {
      init = zeros(rw, loc, accShape, accSizes, acc);
    }
    Value r = linalg::MatmulOp::create(rw, loc, TypeRange{accType},
                                       ValueRange{x2, wT}, ValueRange{init})
                  .getResult(0);
    r = convertTensor(rw, loc, r, elem);
    if (rx == 1) {
      r = tensor::CollapseShapeOp::create(
          rw, loc, RankedTensorType::get({accShape[1]}, elem), r,
          ArrayRef<ReassociationIndices>{{0, 1}});
    } else if (rx > 2) {
      SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
      r = expandDim(rw, loc, r, 0, xt.getShape().drop_back(),
                    ArrayRef<OpFoldResult>(xs).drop_back());
    }
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

/// softmax / log_softmax along one dim.
template <typename OpTy, bool IsLog>
struct SoftmaxLowering : public OpConversionPattern<OpTy> {
  SoftmaxLowering(MLIRContext *ctx, bool storesExp, bool online)
      : OpConversionPattern<OpTy>(ctx), storesExp(storesExp), online(online) {}
  bool storesExp;
  bool online; // KTToLinalgOptions::onlineRowStats
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = xt.getElementType();
    Type acc = computeType(elem);
    int64_t rank = xt.getRank();
    MLIRContext *ctx = rw.getContext();
    SmallVector<int64_t> reduced;
    if (rank > 0)
      reduced.push_back(kt::wrapDim(op.getDim(), rank));
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    SmallVector<int64_t> keptShape;
    SmallVector<OpFoldResult> keptSizes;
    SmallVector<AffineExpr> keptExprs;
    for (int64_t i = 0; i < rank; ++i)
      if (!llvm::is_contained(reduced, i)) {
        keptShape.push_back(xt.getDimSize(i));
        keptSizes.push_back(sizes[i]);
        keptExprs.push_back(getAffineDimExpr(i, ctx));
      }
    auto keptType = RankedTensorType::get(keptShape, acc);
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    AffineMap kept = AffineMap::get(rank, 0, keptExprs, ctx);
    SmallVector<utils::IteratorType> redIters(rank,
                                              utils::IteratorType::parallel);
    for (int64_t d : reduced)
      redIters[d] = utils::IteratorType::reduction;
    SmallVector<utils::IteratorType> parIters(rank,
                                              utils::IteratorType::parallel);
    // 1. max. For the CPU's row kernels (storesExp) maxnumf, which skips NaN
    // (x86: vmaxps and one NaN fixup, where maximumf also orders -0 < +0
    // and propagates NaN: about twice the instructions): a NaN in the row
    // still makes every result NaN through exp(NaN - max) and the sum, as in
    // PyTorch, and -0/+0 give the same x - max up to the sign of a zero
    // difference, which exp and the row's log(sum) >= log 2 absorb. Measured
    // 256x512 f32 (rows in cache), 2 threads: softmax 60 -> 55 us,
    // log_softmax 67 -> 61 us; no change at 4096x4096 (memory-bound).
    Value mxInit = filled(
        rw, loc, keptType, keptSizes,
        scalarConst(rw, loc, acc, -std::numeric_limits<double>::infinity()));
    Type f64 = rw.getF64Type();
    auto sumType = keptType.clone(f64);
    Value sumInit =
        filled(rw, loc, sumType, keptSizes, scalarConst(rw, loc, f64, 0));
    // log_softmax over the innermost dim with onlineRowStats: the max and
    // the sum of exp in one generic (onlineLseStep, one read of the row,
    // one exp per element), then x - max - log(sum) (no exp). Only where
    // the input is not computed by an op of the same kernel (a block
    // argument: nothing can be fused into the generic as a prologue, which
    // kiln-cpu's vector loops for it do not take).
    if (IsLog && online && rank > 0 && reduced[0] == rank - 1 &&
        isa<BlockArgument>(op.getSelf())) {
      auto ms = linalg::GenericOp::create(
          rw, loc, TypeRange{keptType, sumType}, ValueRange{x},
          ValueRange{mxInit, sumInit}, ArrayRef<AffineMap>{id, kept, kept},
          redIters, [&](OpBuilder &b, Location l, ValueRange a) {
            auto [m, s] = onlineLseStep(b, l, convertScalar(b, l, a[0], acc),
                                        a[1], a[2], /*mark=*/true);
            linalg::YieldOp::create(b, l, ValueRange{m, s});
          });
      Value lse = buildElementwise(
          rw, loc, ValueRange{ms.getResult(1)}, keptType,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return convertScalar(b, l, math::LogOp::create(b, l, a[0]), acc);
          });
      Value r =
          linalg::GenericOp::create(
              rw, loc, TypeRange{xt}, ValueRange{x, ms.getResult(0), lse},
              ValueRange{emptyLike(rw, loc, xt, sizes)},
              ArrayRef<AffineMap>{id, kept, kept, id}, parIters,
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value out = arith::SubFOp::create(
                    b, l,
                    arith::SubFOp::create(b, l, convertScalar(b, l, a[0], acc),
                                          a[1]),
                    a[2]);
                linalg::YieldOp::create(
                    b, l, ValueRange{convertScalar(b, l, out, elem)});
              })
              .getResult(0);
      rw.replaceOp(op, castTo(rw, loc, r, resultType));
      return success();
    }
    Value mx =
        linalg::GenericOp::create(
            rw, loc, TypeRange{keptType}, ValueRange{x}, ValueRange{mxInit},
            ArrayRef<AffineMap>{id, kept}, redIters,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value v = convertScalar(b, l, a[0], acc);
              Value m = storesExp
                            ? (Value)arith::MaxNumFOp::create(b, l, a[1], v)
                            : (Value)arith::MaximumFOp::create(b, l, a[1], v);
              linalg::YieldOp::create(b, l, ValueRange{m});
            })
            .getResult(0);
    auto expOfDiff = [&](OpBuilder &b, Location l, Value xv, Value m) {
      return math::ExpOp::create(
          b, l, arith::SubFOp::create(b, l, convertScalar(b, l, xv, acc), m));
    };
    auto addWidened = [&](OpBuilder &b, Location l, Value s, Value e) {
      return arith::AddFOp::create(b, l, s, convertScalar(b, l, e, f64));
    };
    // Once per row, in f64 and rounded to the compute type: log(sum) for
    // log_softmax, 1 / sum for softmax (as ATen's CPU kernels do: a
    // multiply per element, not a divide).
    auto rowStatOf = [&](Value sum) {
      return buildElementwise(
          rw, loc, ValueRange{sum}, keptType,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value v = IsLog ? (Value)math::LogOp::create(b, l, a[0])
                            : (Value)arith::DivFOp::create(
                                  b, l, scalarConst(b, l, f64, 1), a[0]);
            return convertScalar(b, l, v, acc);
          });
    };
    Value r;
    // e = exp(x - max) stored and normalized in place only when no kt op
    // reads the result (in a kernel: no epilogue). An epilogue cannot run
    // in place on e (linalg fusion of the in-place normalization into it
    // would write both to outputs), so e would be a scratch tile besides the
    // output tile, with copies between them: measured no faster than
    // computing exp twice (masked softmax * y, 4096x4096, 6.3 ms both).
    // log_softmax stores e too, only to touch its output tile in the
    // compute-heavy exp pass (see step 5), so only where e is the result's
    // type (not f16/bf16).
    bool storeExp =
        storesExp && (!IsLog || acc == elem) &&
        llvm::none_of(op->getUsers(), [](Operation *user) {
          return isa<kt::KTDialect>(user->getDialect()) &&
                 !isa<kt::YieldOp>(user);
        });
    if (!storeExp) {
      // 2. sum of exp(x - max): exp in the compute type, accumulated in f64
      // (the accumulation rule).
      Value sum =
          linalg::GenericOp::create(
              rw, loc, TypeRange{sumType}, ValueRange{x, mx},
              ValueRange{sumInit}, ArrayRef<AffineMap>{id, kept, kept},
              redIters,
              [&](OpBuilder &b, Location l, ValueRange a) {
                linalg::YieldOp::create(
                    b, l,
                    ValueRange{addWidened(b, l, a[2],
                                          expOfDiff(b, l, a[0], a[1]))});
              })
              .getResult(0);
      // 3. once per row, in f64 and rounded to the compute type: log(sum)
      // for log_softmax, 1 / sum for softmax (as ATen's CPU kernels do: a
      // multiply per element, not a divide).
      Value rowStat = rowStatOf(sum);
      // 4. x - max - log(sum) (exp once per element, in the sum), or
      // exp(x - max) * (1 / sum) (exp again).
      r = linalg::GenericOp::create(
              rw, loc, TypeRange{xt}, ValueRange{x, mx, rowStat},
              ValueRange{emptyLike(rw, loc, xt, sizes)},
              ArrayRef<AffineMap>{id, kept, kept, id}, parIters,
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value out;
                if (IsLog)
                  out = arith::SubFOp::create(
                      b, l,
                      arith::SubFOp::create(
                          b, l, convertScalar(b, l, a[0], acc), a[1]),
                      a[2]);
                else
                  out = arith::MulFOp::create(b, l, expOfDiff(b, l, a[0], a[1]),
                                              a[2]);
                linalg::YieldOp::create(
                    b, l, ValueRange{convertScalar(b, l, out, elem)});
              })
              .getResult(0);
    } else {
      // 2. e = exp(x - max) in the compute type, computed once per element
      // and stored (kMaterializeAttr keeps kernel formation from folding it
      // into its two readers, which would compute exp twice). In a kernel's
      // row tile it is the output tile itself, so the passes below read it
      // from cache.
      auto eType = xt.clone(acc);
      auto eOp = linalg::GenericOp::create(
          rw, loc, TypeRange{eType}, ValueRange{x, mx},
          ValueRange{emptyLike(rw, loc, eType, sizes)},
          ArrayRef<AffineMap>{id, kept, id}, parIters,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value e = expOfDiff(b, l, a[0], a[1]);
            e.getDefiningOp()->setAttr(kMaterializeAttr, b.getUnitAttr());
            linalg::YieldOp::create(b, l, ValueRange{e});
          });
      Value e = eOp.getResult(0);
      // 3. sum of e, accumulated in f64 (the accumulation rule).
      Value sum =
          linalg::GenericOp::create(
              rw, loc, TypeRange{sumType}, ValueRange{e}, ValueRange{sumInit},
              ArrayRef<AffineMap>{id, kept}, redIters,
              [&](OpBuilder &b, Location l, ValueRange a) {
                linalg::YieldOp::create(b, l,
                                        ValueRange{addWidened(b, l, a[1], a[0])});
              })
              .getResult(0);
      // 4. 1 / sum (softmax: as ATen's CPU kernel, a multiply per element,
      // not a divide) or log(sum) (log_softmax) once per row, in f64, rounded
      // to the compute type.
      Value inv = rowStatOf(sum);
      // 5. log_softmax: x - max - log(sum), in place into e. e only made
      // the exp pass write the output tile (its cache lines are fetched
      // while exp computes, not in this cheap pass); the result takes e
      // where e is NaN, which is exactly where it is NaN itself (a NaN in
      // the row, +inf, or a row of -inf all make log(sum) NaN), so it is
      // x - max - log(sum) everywhere, and the payload reads e (an unread
      // destination would be replaced by a fresh tile).
      if (IsLog) {
        r = linalg::GenericOp::create(
                rw, loc, TypeRange{xt}, ValueRange{x, mx, inv},
                ValueRange{e}, ArrayRef<AffineMap>{id, kept, kept, id},
                parIters,
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value y = arith::SubFOp::create(
                      b, l, arith::SubFOp::create(b, l, a[0], a[1]), a[2]);
                  Value nan = arith::CmpFOp::create(
                      b, l, arith::CmpFPredicate::UNO, a[3], a[3]);
                  linalg::YieldOp::create(
                      b, l,
                      ValueRange{arith::SelectOp::create(b, l, nan, a[3], y)});
                })
                .getResult(0);
      } else if (acc == elem) {
        // 5. e * (1 / sum): in place into e when it has the result's type.
        r = linalg::GenericOp::create(
                rw, loc, TypeRange{xt}, ValueRange{inv}, ValueRange{e},
                ArrayRef<AffineMap>{kept, id}, parIters,
                [&](OpBuilder &b, Location l, ValueRange a) {
                  linalg::YieldOp::create(
                      b, l, ValueRange{arith::MulFOp::create(b, l, a[1], a[0])});
                })
                .getResult(0);
      } else {
        r = linalg::GenericOp::create(
                rw, loc, TypeRange{xt}, ValueRange{e, inv},
                ValueRange{emptyLike(rw, loc, xt, sizes)},
                ArrayRef<AffineMap>{id, kept, id}, parIters,
                [&](OpBuilder &b, Location l, ValueRange a) {
                  linalg::YieldOp::create(
                      b, l,
                      ValueRange{convertScalar(
                          b, l, arith::MulFOp::create(b, l, a[0], a[1]),
                          elem)});
                })
                .getResult(0);
      }
    }
    rw.replaceOp(op, castTo(rw, loc, r, resultType));
    return success();
  }
};

} // namespace

void kiln::populateKTNNToLinalgPatterns(RewritePatternSet &patterns,
                                        const KTToLinalgOptions &options) {
  patterns.add<MatmulLowering, LinearLowering>(patterns.getContext());
  patterns.add<SoftmaxLowering<kt::SoftmaxOp, false>,
               SoftmaxLowering<kt::LogSoftmaxOp, true>>(
      patterns.getContext(), options.softmaxStoresExp, options.onlineRowStats);
}
