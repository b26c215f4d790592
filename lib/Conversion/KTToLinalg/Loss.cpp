//===- Loss.cpp - kt nll_loss, cross_entropy to linalg --------------------===//
//
// Part of Kiln. The losses work in the input's own layout: the class dim is
// 1 (0 for a rank-1 input) and the "element" space is the input's shape
// without it (the target's shape; for cross_entropy the rows).
//
// * cross_entropy computes log_softmax over the class dim from three row
//   statistics: the max in the compute type (f32 for f16/bf16/f32, f64 for
//   f64; `maxnumf`: a NaN still reaches the sum through exp(NaN - max)),
//   the sum of exp(x - max) with exp in the compute type (f32: MLIR's
//   vectorized polynomial on the CPU, no libm call) accumulated in f64,
//   and lse = log(sum) in f64 once per row. log_softmax is then
//   `(x - max) - lse` in f64 wherever it is read (x - max exact in f64),
//   never materialized. These are per-row generics (the rows the parallel
//   dims), so kernel formation tiles them by blocks of rows and the passes
//   over a block read it from cache (docs/codegen.md, "cross_entropy").
//   Everything after the per-element exp is f64 (per-row or per-element
//   sums, the final mean), rounded once to the result type. nll_loss keeps
//   f64 throughout (no exp).
// * Class-index targets: one parallel generic over the elements reads the
//   target, and with tensor.extract the input (and weight) at the target
//   class, giving each element's loss `-w[t] * logp[t]` and weight `w[t]`
//   (both 0 where t == ignore_index). Label smoothing adds a generic over
//   (elements, class) reducing `-sum_c w[c] * logp[c]` per element (a plain
//   sum: the ignored elements are zeroed in the per-element generic, so the
//   reduction tiles and vectorizes).
// * Probability targets: one generic over (elements, class) reducing
//   `-sum_c logp * (t (1 - ls) + ls / C) * w[c]`.
// * `none` combines per element; `sum`/`mean` reduce all elements into
//   rank-0 f64 accumulators (loss, weight, smoothing, count) and finish with
//   scalar arith and tensor.from_elements: mean divides by the summed weight
//   (NaN when every target is ignored, as 0 / 0), or by the count.
//
// A target outside [0, C) that is not ignore_index is a run-time error
// reported as the interpreter does (RuntimeChecks.h); the element then reads
// class 0, never out of bounds.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

using IterTy = utils::IteratorType;

/// The layout of a loss input and helpers to build its generics.
struct LossLayout {
  ConversionPatternRewriter &rw;
  Location loc;
  Value x;                               // input [N, C, d...] or [C]
  int64_t rank;                          // input rank
  int64_t classDim;                      // 1, or 0 for rank 1
  int64_t elemRank;                      // rank of the element space
  SmallVector<OpFoldResult> elemSizes;   // sizes of the element space
  SmallVector<int64_t> elemShape;
  OpFoldResult numClasses;
  Type f64;
  bool online = false; // KTToLinalgOptions::onlineRowStats

  LossLayout(ConversionPatternRewriter &rw, Location loc, Value x,
             bool online = false)
      : rw(rw), loc(loc), x(x), f64(rw.getF64Type()), online(online) {
    auto t = cast<RankedTensorType>(x.getType());
    rank = t.getRank();
    classDim = rank == 1 ? 0 : 1;
    elemRank = rank - 1;
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    for (int64_t i = 0; i < rank; ++i) {
      if (i == classDim)
        continue;
      elemSizes.push_back(sizes[i]);
      elemShape.push_back(t.getDimSize(i));
    }
    numClasses = sizes[classDim];
  }

  MLIRContext *ctx() { return rw.getContext(); }
  /// Over (elements) or (elements, class): the element dims.
  AffineMap elemMap(bool withClass) {
    return AffineMap::getMultiDimMapWithTargets(
        elemRank + (withClass ? 1 : 0),
        llvm::to_vector(llvm::seq<unsigned>(0, elemRank)), ctx());
  }
  /// Over (elements, class): the input's layout.
  AffineMap inputMap() {
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0, e = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i == classDim ? elemRank : e++, ctx()));
    return AffineMap::get(elemRank + 1, 0, exprs, ctx());
  }
  /// Over (elements, class): the class.
  AffineMap classMap() {
    return AffineMap::get(elemRank + 1, 0, {getAffineDimExpr(elemRank, ctx())},
                          ctx());
  }
  AffineMap scalarMap(unsigned dims) { return AffineMap::get(dims, 0, ctx()); }

  RankedTensorType elemType(Type t) {
    return RankedTensorType::get(elemShape, t);
  }
  Value elemFilled(double v) {
    return filled(rw, loc, elemType(f64), elemSizes, scalarConst(rw, loc, f64, v));
  }
  Value scalarFilled(double v) {
    return filled(rw, loc, RankedTensorType::get({}, f64), {},
                  scalarConst(rw, loc, f64, v));
  }
  /// C as an f64 value.
  Value classesF64(OpBuilder &b, Location l) {
    Value c = getValueOrCreateConstantIndexOp(b, l, numClasses);
    return arith::SIToFPOp::create(
        b, l, f64, arith::IndexCastOp::create(b, l, b.getI64Type(), c));
  }

  /// A generic over the elements (+ class, reduced, when `withClass`).
  SmallVector<Value> generic(ValueRange ins, ArrayRef<AffineMap> inMaps,
                             ValueRange outs, bool withClass,
                             function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                             ValueRange)>
                                 body) {
    SmallVector<AffineMap> maps(inMaps);
    for (size_t i = 0; i < outs.size(); ++i)
      maps.push_back(elemMap(withClass));
    SmallVector<IterTy> iters(elemRank, IterTy::parallel);
    if (withClass)
      iters.push_back(IterTy::reduction);
    auto g = linalg::GenericOp::create(
        rw, loc, ValueRange(outs).getTypes(), ins, outs, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange a) {
          linalg::YieldOp::create(b, l, body(b, l, a));
        });
    return SmallVector<Value>(g.getResults());
  }

  /// A generic reducing every element into rank-0 accumulators.
  SmallVector<Value> reduceAll(ValueRange ins, ValueRange outs,
                               function_ref<SmallVector<Value>(
                                   OpBuilder &, Location, ValueRange)>
                                   body) {
    SmallVector<AffineMap> maps(ins.size(), elemMap(false));
    for (size_t i = 0; i < outs.size(); ++i)
      maps.push_back(scalarMap(elemRank));
    SmallVector<IterTy> iters(elemRank, IterTy::reduction);
    auto g = linalg::GenericOp::create(
        rw, loc, ValueRange(outs).getTypes(), ins, outs, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange a) {
          linalg::YieldOp::create(b, l, body(b, l, a));
        });
    return SmallVector<Value>(g.getResults());
  }

  Value toF64(OpBuilder &b, Location l, Value v) {
    return convertScalar(b, l, v, f64);
  }

  /// The row statistics of log_softmax over the class dim (see the file
  /// comment): the max in the compute type, the sum of exp(x - max) (exp in
  /// the compute type, accumulated in f64) and log(sum) in f64, once per
  /// element (row).
  struct Stats {
    Value mx, lse;
  };
  Stats logSoftmaxStats() {
    auto xt = cast<RankedTensorType>(x.getType());
    Type ct = computeType(xt.getElementType());
    if (online && classDim == rank - 1) {
      // One generic, one read of the row: the online max and sum of exp
      // (onlineLseStep; kiln-cpu lowers it to vector loops).
      SmallVector<Value> ms = generic(
          {x}, {inputMap()},
          {filled(rw, loc, elemType(ct), elemSizes,
                  scalarConst(rw, loc, ct,
                              -std::numeric_limits<double>::infinity())),
           elemFilled(0)},
          true, [&](OpBuilder &b, Location l, ValueRange a) {
            auto [m, s] = onlineLseStep(b, l, convertScalar(b, l, a[0], ct),
                                        a[1], a[2], /*mark=*/true);
            return SmallVector<Value>{m, s};
          });
      Value lse = generic({ms[1]}, {elemMap(false)}, {elemFilled(0)}, false,
                          [&](OpBuilder &b, Location l, ValueRange a) {
                            return SmallVector<Value>{
                                math::LogOp::create(b, l, a[0])};
                          })[0];
      return {ms[0], lse};
    }
    Value mx = generic(
        {x}, {inputMap()},
        {filled(rw, loc, elemType(ct), elemSizes,
                scalarConst(rw, loc, ct,
                            -std::numeric_limits<double>::infinity()))},
        true, [&](OpBuilder &b, Location l, ValueRange a) {
          return SmallVector<Value>{arith::MaxNumFOp::create(
              b, l, a[1], convertScalar(b, l, a[0], ct))};
        })[0];
    Value se = generic({x, mx}, {inputMap(), elemMap(true)}, {elemFilled(0)},
                       true, [&](OpBuilder &b, Location l, ValueRange a) {
                         Value d = arith::SubFOp::create(
                             b, l, convertScalar(b, l, a[0], ct), a[1]);
                         Value e = math::ExpOp::create(b, l, d);
                         return SmallVector<Value>{
                             arith::AddFOp::create(b, l, a[2], toF64(b, l, e))};
                       })[0];
    Value lse = generic({se}, {elemMap(false)}, {elemFilled(0)}, false,
                        [&](OpBuilder &b, Location l, ValueRange a) {
                          return SmallVector<Value>{
                              math::LogOp::create(b, l, a[0])};
                        })[0];
    return {mx, lse};
  }

  /// Per element (row): -sum_c coef_c * logp_c in f64, logp_c =
  /// (x_c - max) - lse, with `coef` built from the body's arguments past
  /// the input, max and lse (`extra`, in the (elements, class) space).
  Value negDot(Stats st, ValueRange extra, ArrayRef<AffineMap> extraMaps,
               function_ref<Value(OpBuilder &, Location, ValueRange)> coef) {
    SmallVector<Value> ins = {x, st.mx, st.lse};
    SmallVector<AffineMap> maps = {inputMap(), elemMap(true), elemMap(true)};
    ins.append(extra.begin(), extra.end());
    maps.append(extraMaps.begin(), extraMaps.end());
    return generic(ins, maps, {elemFilled(0)}, true,
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     Value lp = arith::SubFOp::create(
                         b, l,
                         arith::SubFOp::create(b, l, toF64(b, l, a[0]),
                                               toF64(b, l, a[1])),
                         a[2]);
                     Value c = coef(b, l, a.slice(3, a.size() - 4));
                     Value term =
                         c ? arith::MulFOp::create(b, l, c, lp).getResult() : lp;
                     return SmallVector<Value>{
                         arith::SubFOp::create(b, l, a.back(), term)};
                   })[0];
  }
};

/// The loss of a class-index target: nll on `x` (nll_loss) or on
/// log_softmax(x) (cross_entropy, `logSoftmax`), with label smoothing `ls`.
Value indexTargetLoss(Operation *op, LossLayout &L, Value target, Value weight,
                      kt::Reduction red, int64_t ignoreIndex, bool logSoftmax,
                      double ls, RankedTensorType resultType) {
  ConversionPatternRewriter &rw = L.rw;
  int64_t rangeError = registerRuntimeError(
      rw, op,
      ("target {0} is out of range [0, {1}) (ignore_index is " +
       Twine(ignoreIndex) + ")")
          .str());
  Location loc = L.loc;
  Type f64 = L.f64;
  LossLayout::Stats st{};
  if (logSoftmax)
    st = L.logSoftmaxStats();
  Type i64 = rw.getI64Type();
  Value x = L.x;
  auto isIgnored = [&](OpBuilder &b, Location l, Value t) {
    t = convertScalar(b, l, t, i64);
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, t,
                                 scalarConst(b, l, i64, (double)ignoreIndex));
  };
  // Label smoothing: -sum_c w[c] logp[c] per element (zeroed below where
  // ignored), a reduction with a plain sum as its combiner (so kiln-cpu
  // tiles and vectorizes it).
  Value dot;
  if (ls > 0.0)
    dot = weight ? L.negDot(st, {weight}, {L.classMap()},
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              return L.toF64(b, l, a[0]);
                            })
                 : L.negDot(st, {}, {}, [](OpBuilder &, Location, ValueRange) {
                     return Value();
                   });
  // Per element: loss and weight (0 where ignored), and the smoothing term.
  SmallVector<Value> ins = {target};
  SmallVector<AffineMap> maps = {L.elemMap(false)};
  if (st.mx) {
    ins.append({st.mx, st.lse});
    maps.append({L.elemMap(false), L.elemMap(false)});
  }
  if (dot) {
    ins.push_back(dot);
    maps.push_back(L.elemMap(false));
  }
  SmallVector<Value> outs = {L.elemFilled(0), L.elemFilled(0)};
  if (dot)
    outs.push_back(L.elemFilled(0));
  SmallVector<Value> per = L.generic(
      ins, maps, outs, false,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value t = convertScalar(b, l, a[0], i64);
        Value ignored = isIgnored(b, l, t);
        Value c = getValueOrCreateConstantIndexOp(b, l, L.numClasses);
        Value tIdx = arith::IndexCastOp::create(b, l, b.getIndexType(), t);
        Value inRange = arith::AndIOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, t,
                                  scalarConst(b, l, i64, 0)),
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, tIdx, c));
        emitRuntimeCheck(
            b, l,
            arith::AndIOp::create(
                b, l, arith::XOrIOp::create(b, l, ignored,
                                            arith::ConstantIntOp::create(
                                                b, l, b.getI1Type(), 1)),
                arith::XOrIOp::create(
                    b, l, inRange,
                    arith::ConstantIntOp::create(b, l, b.getI1Type(), 1))),
            rangeError, t, c);
        Value zeroIdx = arith::ConstantIndexOp::create(b, l, 0);
        Value safe = arith::SelectOp::create(b, l, inRange, tIdx, zeroIdx);
        SmallVector<Value> idx;
        for (int64_t i = 0, e = 0; i < L.rank; ++i)
          idx.push_back(i == L.classDim
                            ? safe
                            : linalg::IndexOp::create(b, l, e++).getResult());
        // The reads sit in an scf.if on the range check: with no classes
        // (C = 0) even the safe index 0 is outside `x` and `weight` (the
        // CPU code read past the buffer and died of SIGSEGV).
        auto guardedRead = [&](Value src, ValueRange at) -> Value {
          auto ifOp = scf::IfOp::create(
              b, l, inRange,
              [&](OpBuilder &nb, Location nl) {
                scf::YieldOp::create(
                    nb, nl,
                    L.toF64(nb, nl, tensor::ExtractOp::create(nb, nl, src,
                                                              at)));
              },
              [&](OpBuilder &nb, Location nl) {
                scf::YieldOp::create(nb, nl, scalarConst(nb, nl, f64, 0.0));
              });
          return ifOp.getResult(0);
        };
        Value xv = guardedRead(x, idx);
        // log_softmax at the target: (x[t] - max) - lse in f64 (the
        // difference of two values of the input's type is exact there).
        Value lp = st.mx ? arith::SubFOp::create(
                               b, l,
                               arith::SubFOp::create(b, l, xv,
                                                     L.toF64(b, l, a[1])),
                               a[2])
                               .getResult()
                         : xv;
        Value w = weight ? guardedRead(weight, ValueRange{safe})
                         : scalarConst(b, l, f64, 1.0);
        Value zero = scalarConst(b, l, f64, 0.0);
        Value loss = arith::MulFOp::create(
            b, l, arith::NegFOp::create(b, l, w), lp);
        SmallVector<Value> res = {
            arith::SelectOp::create(b, l, ignored, zero, loss),
            arith::SelectOp::create(b, l, ignored, zero, w)};
        if (dot)
          res.push_back(arith::SelectOp::create(b, l, ignored, zero,
                                                a[ins.size() - 1]));
        return res;
      });
  Value nll = per[0], wsum = per[1];
  Value smooth = dot ? per[2] : Value();
  Type elem = resultType.getElementType();
  double a = 1 - ls;
  if (red == kt::Reduction::none) {
    SmallVector<Value> nIns = {nll};
    SmallVector<AffineMap> nMaps = {L.elemMap(false)};
    if (smooth) {
      nIns.push_back(smooth);
      nMaps.push_back(L.elemMap(false));
    }
    Value out = emptyLike(rw, loc, L.elemType(elem), L.elemSizes);
    return L.generic(nIns, nMaps, {out}, false,
                     [&](OpBuilder &b, Location l, ValueRange v) {
                       Value r = v[0];
                       if (smooth) {
                         Value k = arith::DivFOp::create(
                             b, l, scalarConst(b, l, f64, ls),
                             L.classesF64(b, l));
                         r = arith::AddFOp::create(
                             b, l,
                             arith::MulFOp::create(
                                 b, l, scalarConst(b, l, f64, a), r),
                             arith::MulFOp::create(b, l, k, v[1]));
                       }
                       return SmallVector<Value>{roundFromF64(b, l, r, elem)};
                     })[0];
  }
  // sum / mean: reduce (loss, weight, smooth, kept) over all elements.
  SmallVector<Value> rIns = {nll, wsum, target};
  if (smooth)
    rIns.push_back(smooth);
  SmallVector<Value> acc = L.reduceAll(
      rIns, {L.scalarFilled(0), L.scalarFilled(0), L.scalarFilled(0),
             L.scalarFilled(0)},
      [&](OpBuilder &b, Location l, ValueRange v) {
        size_t n = rIns.size();
        Value kept = arith::SelectOp::create(
            b, l, isIgnored(b, l, v[2]), scalarConst(b, l, f64, 0),
            scalarConst(b, l, f64, 1));
        return SmallVector<Value>{
            arith::AddFOp::create(b, l, v[n], v[0]),
            arith::AddFOp::create(b, l, v[n + 1], v[1]),
            smooth ? arith::AddFOp::create(b, l, v[n + 2], v[3]).getResult()
                   : v[n + 2],
            arith::AddFOp::create(b, l, v[n + 3], kept)};
      });
  Value sLoss = tensor::ExtractOp::create(rw, loc, acc[0], ValueRange{});
  Value sW = tensor::ExtractOp::create(rw, loc, acc[1], ValueRange{});
  Value sSmooth = tensor::ExtractOp::create(rw, loc, acc[2], ValueRange{});
  Value sKept = tensor::ExtractOp::create(rw, loc, acc[3], ValueRange{});
  Value r = sLoss;
  if (red == kt::Reduction::mean) {
    r = arith::DivFOp::create(rw, loc, sLoss, sW);
    sSmooth =
        arith::DivFOp::create(rw, loc, sSmooth, weight ? sW : sKept);
  }
  if (smooth) {
    Value k = arith::DivFOp::create(rw, loc, scalarConst(rw, loc, f64, ls),
                                    L.classesF64(rw, loc));
    r = arith::AddFOp::create(
        rw, loc, arith::MulFOp::create(rw, loc, scalarConst(rw, loc, f64, a), r),
        arith::MulFOp::create(rw, loc, k, sSmooth));
  }
  return tensor::FromElementsOp::create(
      rw, loc, RankedTensorType::get({}, elem),
      ValueRange{roundFromF64(rw, loc, r, elem)});
}

/// cross_entropy with class-probability targets.
Value probTargetLoss(LossLayout &L, Value target, Value weight,
                     kt::Reduction red, double ls,
                     RankedTensorType resultType) {
  ConversionPatternRewriter &rw = L.rw;
  Location loc = L.loc;
  Type f64 = L.f64;
  LossLayout::Stats st = L.logSoftmaxStats();
  // -sum_c t'[c] w[c] logp[c], t' = t (1 - ls) + ls / C.
  SmallVector<Value> extra = {target};
  SmallVector<AffineMap> extraMaps = {L.inputMap()};
  if (weight) {
    extra.push_back(weight);
    extraMaps.push_back(L.classMap());
  }
  Value loss = L.negDot(
      st, extra, extraMaps, [&](OpBuilder &b, Location l, ValueRange a) {
        Value t = L.toF64(b, l, a[0]);
        if (ls > 0.0)
          t = arith::AddFOp::create(
              b, l,
              arith::MulFOp::create(b, l, t, scalarConst(b, l, f64, 1 - ls)),
              arith::DivFOp::create(b, l, scalarConst(b, l, f64, ls),
                                    L.classesF64(b, l)));
        if (weight)
          t = arith::MulFOp::create(b, l, t, L.toF64(b, l, a[1]));
        return t;
      });
  Type elem = resultType.getElementType();
  if (red == kt::Reduction::none) {
    Value out = emptyLike(rw, loc, L.elemType(elem), L.elemSizes);
    return L.generic({loss}, {L.elemMap(false)}, {out}, false,
                     [&](OpBuilder &b, Location l, ValueRange v) {
                       return SmallVector<Value>{roundFromF64(b, l, v[0], elem)};
                     })[0];
  }
  SmallVector<Value> acc = L.reduceAll(
      {loss}, {L.scalarFilled(0), L.scalarFilled(0)},
      [&](OpBuilder &b, Location l, ValueRange v) {
        return SmallVector<Value>{
            arith::AddFOp::create(b, l, v[1], v[0]),
            arith::AddFOp::create(b, l, v[2], scalarConst(b, l, f64, 1))};
      });
  Value r = tensor::ExtractOp::create(rw, loc, acc[0], ValueRange{});
  if (red == kt::Reduction::mean) {
    // Divided by the number of elements; an empty input (also C == 0)
    // gives NaN.
    Value count = tensor::ExtractOp::create(rw, loc, acc[1], ValueRange{});
    Value noClasses = arith::CmpIOp::create(
        rw, loc, arith::CmpIPredicate::eq,
        getValueOrCreateConstantIndexOp(rw, loc, L.numClasses),
        arith::ConstantIndexOp::create(rw, loc, 0));
    Value denom = arith::SelectOp::create(
        rw, loc, noClasses,
        scalarConst(rw, loc, f64, std::numeric_limits<double>::quiet_NaN()),
        count);
    r = arith::DivFOp::create(rw, loc, r, denom);
  }
  return tensor::FromElementsOp::create(rw, loc, RankedTensorType::get({}, elem),
                                        ValueRange{roundFromF64(rw, loc, r, elem)});
}

/// The interpreter's run-time checks of a loss's target (class indices:
/// the input's shape without the class dim; probabilities: the input's
/// shape) and weight (C elements). A failed check goes on with a zero
/// target / weight of the expected shape.
void checkLossShapes(LossLayout &L, Value &target, Value &weight, bool prob) {
  OpBuilder &b = L.rw;
  Location loc = L.loc;
  auto xt = cast<RankedTensorType>(L.x.getType());
  SmallVector<OpFoldResult> xs = getSizes(b, loc, L.x);
  auto tt = cast<RankedTensorType>(target.getType());
  SmallVector<OpFoldResult> ts = getSizes(b, loc, target);
  SmallVector<OpFoldResult> want = prob ? xs : L.elemSizes;
  if ((int64_t)want.size() == tt.getRank()) {
    Value bad;
    for (int64_t k = 0; k < tt.getRank(); ++k)
      bad = boolOr(b, loc, bad,
                   indexCmp(b, loc, arith::CmpIPredicate::ne, ts[k], want[k]));
    if (bad) {
      SmallVector<Value> values;
      std::string text =
          std::string(prob ? "probability target shape " : "target shape ") +
          shapeTemplate(tt.getShape(), ts, values) +
          (prob ? " does not equal input shape " : " does not match input shape ") +
          shapeTemplate(xt.getShape(), xs, values) + " at run time";
      if (checkAtRunTime(b, loc, bad, text, values))
        target = castTo(b, loc, safeOperand(b, loc, target, bad, want), tt);
    }
  }
  if (weight) {
    auto wt = cast<RankedTensorType>(weight.getType());
    SmallVector<OpFoldResult> ws = getSizes(b, loc, weight);
    if (wt.getRank() == 1) {
      Value bad =
          indexCmp(b, loc, arith::CmpIPredicate::ne, ws[0], L.numClasses);
      SmallVector<Value> values;
      std::string text = "weight shape " +
                         shapeTemplate(wt.getShape(), ws, values) +
                         " does not match the ";
      text += shapeTemplate({ShapedType::kDynamic}, {L.numClasses}, values, "",
                            "", "");
      text += " classes of input at run time";
      if (checkAtRunTime(b, loc, bad, text, values))
        weight = castTo(b, loc,
                        safeOperand(b, loc, weight, bad, {L.numClasses}), wt);
    }
  }
}

struct NllLossLowering : public OpConversionPattern<kt::NllLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::NllLossOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    LossLayout L(rw, op.getLoc(), adaptor.getInput());
    Value target = adaptor.getTarget(), weight = adaptor.getWeight();
    checkLossShapes(L, target, weight, /*prob=*/false);
    Value r = indexTargetLoss(op, L, target, weight, op.getReduction(),
                              op.getIgnoreIndex(), /*logSoftmax=*/false, 0.0,
                              rt);
    rw.replaceOp(op, castTo(rw, op.getLoc(), r, rt));
    return success();
  }
};

struct CrossEntropyLowering : public OpConversionPattern<kt::CrossEntropyOp> {
  CrossEntropyLowering(MLIRContext *ctx, bool online)
      : OpConversionPattern(ctx), online(online) {}
  bool online;
  LogicalResult matchAndRewrite(kt::CrossEntropyOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    LossLayout L(rw, op.getLoc(), adaptor.getInput(), online);
    Value target = adaptor.getTarget();
    double ls = op.getLabelSmoothing().convertToDouble();
    bool prob = isa<FloatType>(
        cast<RankedTensorType>(target.getType()).getElementType());
    Value weight = adaptor.getWeight();
    checkLossShapes(L, target, weight, prob);
    Value r =
        prob ? probTargetLoss(L, target, weight, op.getReduction(), ls, rt)
             : indexTargetLoss(op, L, target, weight, op.getReduction(),
                               op.getIgnoreIndex(), /*logSoftmax=*/true, ls,
                               rt);
    rw.replaceOp(op, castTo(rw, op.getLoc(), r, rt));
    return success();
  }
};

} // namespace

void kiln::lowering::populateKTLossToLinalgPatterns(
    RewritePatternSet &patterns, const KTToLinalgOptions &options) {
  patterns.add<NllLossLowering>(patterns.getContext());
  patterns.add<CrossEntropyLowering>(patterns.getContext(),
                                     options.onlineRowStats);
}
