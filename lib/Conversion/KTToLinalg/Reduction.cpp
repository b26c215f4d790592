//===- Reduction.cpp - kt reductions to linalg.generic --------------------===//
//
// Part of Kiln. Each reduction is a linalg.generic over the operand's dims
// with "reduction" iterators on the reduced dims, writing a tensor without
// the reduced dims (filled with the identity first); keepdim re-inserts them
// with tensor.expand_shape. Float sums and products (sum, mean, prod, var,
// the sum of logsumexp) accumulate in f64 and round once (the kt dialect's
// accumulation rule); integer and bool sums/products in i64. amax/amin
// compare in the compute type (f32 for f16/bf16).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

/// The reduced dims (sorted, normalized) of a reduction over `dimAttr`.
SmallVector<int64_t> reducedDims(std::optional<ArrayAttr> dimAttr,
                                 int64_t rank) {
  SmallVector<int64_t> dims;
  if (!dimAttr || dimAttr->empty()) {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
    return dims;
  }
  for (Attribute a : *dimAttr) {
    if (rank == 0)
      continue;
    dims.push_back(kt::wrapDim(cast<IntegerAttr>(a).getInt(), rank));
  }
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

struct ReduceShape {
  SmallVector<int64_t> reduced;   // reduced dims of the operand
  SmallVector<int64_t> keptDims;  // kept dims of the operand
  SmallVector<int64_t> keptShape; // their static sizes
  SmallVector<OpFoldResult> keptSizes;
  SmallVector<OpFoldResult> inSizes;
};

ReduceShape reduceShape(OpBuilder &b, Location loc, Value in,
                        ArrayRef<int64_t> reduced) {
  ReduceShape s;
  s.reduced.assign(reduced.begin(), reduced.end());
  auto t = cast<RankedTensorType>(in.getType());
  s.inSizes = getSizes(b, loc, in);
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(reduced, i)) {
      s.keptDims.push_back(i);
      s.keptShape.push_back(t.getDimSize(i));
      s.keptSizes.push_back(s.inSizes[i]);
    }
  return s;
}

/// A reduction generic over `inputs` (all of the operand's shape) into
/// `inits` (tensors of the kept dims). `body(args, accs)` returns the new
/// accumulators.
SmallVector<Value>
reduceGeneric(OpBuilder &b, Location loc, ValueRange inputs, ValueRange inits,
              const ReduceShape &s,
              llvm::function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                    ValueRange, ValueRange)>
                  body) {
  int64_t rank = cast<RankedTensorType>(inputs[0].getType()).getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (size_t i = 0; i < inputs.size(); ++i)
    maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d : s.keptDims)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  for (size_t i = 0; i < inits.size(); ++i)
    maps.push_back(AffineMap::get(rank, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  for (int64_t d : s.reduced)
    iters[d] = utils::IteratorType::reduction;
  auto g = linalg::GenericOp::create(
      b, loc, ValueRange(inits).getTypes(), inputs, inits, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> r = body(nb, nl, args.take_front(inputs.size()),
                                    args.drop_front(inputs.size()));
        linalg::YieldOp::create(nb, nl, r);
      });
  return SmallVector<Value>(g.getResults());
}

/// A tensor of the kept dims with element type `elem` filled with `init`.
Value keptInit(OpBuilder &b, Location loc, const ReduceShape &s, Type elem,
               Value init) {
  auto type = RankedTensorType::get(s.keptShape, elem);
  return filled(b, loc, type, s.keptSizes, init);
}

/// Converts the kept-dims result `v` to the op's result type (element
/// conversion and keepdim).
Value finish(OpBuilder &b, Location loc, Value v, const ReduceShape &s,
             RankedTensorType resultType, bool keepdim) {
  Type elem = resultType.getElementType();
  auto vt = cast<RankedTensorType>(v.getType());
  if (vt.getElementType() != elem) {
    auto t = RankedTensorType::get(vt.getShape(), elem);
    v = buildElementwise(b, loc, v, t,
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           if (a[0].getType().isF64() && isa<FloatType>(elem))
                             return roundFromF64(nb, nl, a[0], elem);
                           return convertScalar(nb, nl, a[0], elem);
                         });
  }
  if (!keepdim)
    return castTo(b, loc, v, resultType);
  return insertUnitDims(b, loc, v, resultType, s.reduced);
}

/// The number of reduced elements as a scalar of float type `t`.
Value reducedCount(OpBuilder &b, Location loc, const ReduceShape &s, Type t) {
  Value n = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d : s.reduced)
    n = arith::MulIOp::create(
        b, loc, n, getValueOrCreateConstantIndexOp(b, loc, s.inSizes[d]));
  Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
  return arith::SIToFPOp::create(b, loc, t, i);
}

/// The interpreter's run-time check of a reduction without identity
/// (amax, amin, argmax, argmin): over all dims (`allDims`) the tensor must
/// not be empty, else each reduced dim must have non-zero size. (Compiled
/// code would give the -inf / +inf / index 0 of the initial value.)
void checkNonEmpty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   ArrayRef<int64_t> dims, bool allDims) {
  if (allDims) {
    Value empty;
    for (OpFoldResult s : sizes)
      empty = boolOr(b, loc, empty,
                     indexCmp(b, loc, CmpIPredicate::eq, s, b.getIndexAttr(0)));
    if (empty)
      checkAtRunTime(b, loc, empty,
                     "cannot reduce an empty tensor (0 elements) over all dims",
                     {});
    return;
  }
  for (int64_t d : dims)
    checkAtRunTime(
        b, loc, indexCmp(b, loc, CmpIPredicate::eq, sizes[d], b.getIndexAttr(0)),
        "expected reduction dim " + std::to_string(d) +
            " to have non-zero size",
        {});
}

enum class Kind { Sum, Prod, Max, Min, Any, All, Mean };

/// sum, prod, amax, amin, any, all, mean.
template <typename OpTy, Kind K>
struct SimpleReduction : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(in.getType());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type inElem = inType.getElementType();
    ReduceShape s =
        reduceShape(rw, loc, in, reducedDims(op.getDim(), inType.getRank()));
    if (K == Kind::Max || K == Kind::Min)
      checkNonEmpty(rw, loc, s.inSizes, s.reduced,
                    !op.getDim() || op.getDim()->empty());
    // The accumulator type: f64 for float sums and products, the compute
    // type for float amax/amin (exact).
    Type acc;
    if (K == Kind::Any || K == Kind::All)
      acc = rw.getI1Type();
    else if (isa<FloatType>(inElem))
      acc = (K == Kind::Max || K == Kind::Min) ? computeType(inElem)
                                               : accumulatorType(inElem);
    else if (K == Kind::Sum || K == Kind::Prod)
      acc = rw.getI64Type();
    else
      acc = inElem;
    bool fl = isa<FloatType>(acc);
    Value init;
    switch (K) {
    case Kind::Sum:
    case Kind::Mean:
      init = scalarConst(rw, loc, acc, 0);
      break;
    case Kind::Prod:
      init = scalarConst(rw, loc, acc, 1);
      break;
    case Kind::Any:
      init = scalarConst(rw, loc, acc, 0);
      break;
    case Kind::All:
      init = scalarConst(rw, loc, acc, 1);
      break;
    case Kind::Max:
    case Kind::Min: {
      bool mx = K == Kind::Max;
      if (fl)
        init = scalarConst(rw, loc, acc,
                           mx ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity());
      else if (acc.isInteger(1))
        init = scalarConst(rw, loc, acc, mx ? 0 : 1);
      else {
        unsigned w = acc.getIntOrFloatBitWidth();
        APInt v = isUnsignedInt(acc)
                      ? (mx ? APInt::getMinValue(w) : APInt::getMaxValue(w))
                      : (mx ? APInt::getSignedMinValue(w)
                            : APInt::getSignedMaxValue(w));
        init =
            arith::ConstantOp::create(rw, loc, acc, rw.getIntegerAttr(acc, v));
      }
      break;
    }
    }
    Value out = keptInit(rw, loc, s, acc, init);
    Value r = reduceGeneric(
        rw, loc, in, out, s,
        [&](OpBuilder &b, Location l, ValueRange x,
            ValueRange a) -> SmallVector<Value> {
          Value v = x[0];
          if (K == Kind::Any || K == Kind::All)
            v = toBool(b, l, v);
          else
            v = convertScalar(b, l, v, acc);
          Value r;
          switch (K) {
          case Kind::Sum:
          case Kind::Mean:
            r = fl ? (Value)arith::AddFOp::create(b, l, a[0], v)
                   : (Value)arith::AddIOp::create(b, l, a[0], v);
            break;
          case Kind::Prod:
            r = fl ? (Value)arith::MulFOp::create(b, l, a[0], v)
                   : (Value)arith::MulIOp::create(b, l, a[0], v);
            break;
          case Kind::Any:
            r = arith::OrIOp::create(b, l, a[0], v);
            break;
          case Kind::All:
            r = arith::AndIOp::create(b, l, a[0], v);
            break;
          case Kind::Max:
            r = fl ? (Value)arith::MaximumFOp::create(b, l, a[0], v)
                : acc.isInteger(1)
                    ? (Value)arith::OrIOp::create(b, l, a[0], v)
                : isUnsignedInt(acc)
                    ? (Value)arith::MaxUIOp::create(b, l, a[0], v)
                    : (Value)arith::MaxSIOp::create(b, l, a[0], v);
            break;
          case Kind::Min:
            r = fl ? (Value)arith::MinimumFOp::create(b, l, a[0], v)
                : acc.isInteger(1)
                    ? (Value)arith::AndIOp::create(b, l, a[0], v)
                : isUnsignedInt(acc)
                    ? (Value)arith::MinUIOp::create(b, l, a[0], v)
                    : (Value)arith::MinSIOp::create(b, l, a[0], v);
            break;
          }
          return {r};
        })[0];
    if (K == Kind::Mean) {
      Value n = reducedCount(rw, loc, s, acc);
      r = buildElementwise(rw, loc, r, cast<RankedTensorType>(r.getType()),
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return arith::DivFOp::create(b, l, a[0], n);
                           });
    }
    rw.replaceOp(op, finish(rw, loc, r, s, resultType, op.getKeepdim()));
    return success();
  }
};

/// Broadcasts the kept-dims tensor `v` back over the operand's dims inside a
/// generic: the map from the operand's iteration space.
AffineMap keptMap(MLIRContext *ctx, int64_t rank, const ReduceShape &s) {
  SmallVector<AffineExpr> e;
  for (int64_t d : s.keptDims)
    e.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, e, ctx);
}

/// A generic over the operand's dims reading `in` and the kept-dims tensors
/// `kept`, reducing into `inits`.
SmallVector<Value>
reduceWithKept(OpBuilder &b, Location loc, Value in, ValueRange kept,
               ValueRange inits, const ReduceShape &s,
               llvm::function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                     ValueRange, ValueRange)>
                   body) {
  int64_t rank = cast<RankedTensorType>(in.getType()).getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  for (size_t i = 0; i < kept.size() + inits.size(); ++i)
    maps.push_back(keptMap(ctx, rank, s));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  for (int64_t d : s.reduced)
    iters[d] = utils::IteratorType::reduction;
  SmallVector<Value> ins = {in};
  ins.append(kept.begin(), kept.end());
  auto g = linalg::GenericOp::create(
      b, loc, ValueRange(inits).getTypes(), ins, inits, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl,
                                body(nb, nl, args.take_front(ins.size()),
                                     args.drop_front(ins.size())));
      });
  return SmallVector<Value>(g.getResults());
}

/// var: mean in f64, then the sum of squared deviations in f64, divided by
/// max(0, N - correction).
struct VarLowering : public OpConversionPattern<kt::VarOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::VarOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(in.getType());
    ReduceShape s =
        reduceShape(rw, loc, in, reducedDims(op.getDim(), inType.getRank()));
    Type f64 = rw.getF64Type();
    Value zero = scalarConst(rw, loc, f64, 0);
    Value sum =
        reduceGeneric(rw, loc, in, keptInit(rw, loc, s, f64, zero), s,
                      [&](OpBuilder &b, Location l, ValueRange x,
                          ValueRange a) -> SmallVector<Value> {
                        return {arith::AddFOp::create(
                            b, l, a[0], convertScalar(b, l, x[0], f64))};
                      })[0];
    Value n = reducedCount(rw, loc, s, f64);
    Value ss = reduceWithKept(
        rw, loc, in, sum, keptInit(rw, loc, s, f64, zero), s,
        [&](OpBuilder &b, Location l, ValueRange x,
            ValueRange a) -> SmallVector<Value> {
          Value mean = arith::DivFOp::create(b, l, x[1], n);
          Value d =
              arith::SubFOp::create(b, l, convertScalar(b, l, x[0], f64), mean);
          return {arith::AddFOp::create(b, l, a[0],
                                        arith::MulFOp::create(b, l, d, d))};
        })[0];
    Value denom = arith::MaximumFOp::create(
        rw, loc,
        arith::SubFOp::create(
            rw, loc, n,
            scalarConst(rw, loc, f64, op.getCorrection().convertToDouble())),
        zero);
    Value var =
        buildElementwise(rw, loc, ss, cast<RankedTensorType>(ss.getType()),
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return arith::DivFOp::create(b, l, a[0], denom);
                         });
    rw.replaceOp(op, finish(rw, loc, var, s,
                            cast<RankedTensorType>(op.getResult().getType()),
                            op.getKeepdim()));
    return success();
  }
};

/// logsumexp: m = amax (0 where infinite), log(sum(exp(x - m))) + m. The
/// max and exp are in the compute type, the sum, log and + m in f64.
struct LogsumexpLowering : public OpConversionPattern<kt::LogsumexpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::LogsumexpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(in.getType());
    Type acc = computeType(inType.getElementType());
    Type f64 = rw.getF64Type();
    ReduceShape s =
        reduceShape(rw, loc, in, reducedDims(op.getDim(), inType.getRank()));
    Value ninf =
        scalarConst(rw, loc, acc, -std::numeric_limits<double>::infinity());
    Value mx = reduceGeneric(rw, loc, in, keptInit(rw, loc, s, acc, ninf), s,
                             [&](OpBuilder &b, Location l, ValueRange x,
                                 ValueRange a) -> SmallVector<Value> {
                               return {arith::MaximumFOp::create(
                                   b, l, a[0], convertScalar(b, l, x[0], acc))};
                             })[0];
    auto keptType = cast<RankedTensorType>(mx.getType());
    Value zero = scalarConst(rw, loc, acc, 0);
    mx = buildElementwise(
        rw, loc, mx, keptType, [&](OpBuilder &b, Location l, ValueRange a) {
          Value inf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                            math::AbsFOp::create(b, l, a[0]),
                                            scalarConst(b, l, acc, INFINITY));
          return arith::SelectOp::create(b, l, inf, zero, a[0]);
        });
    Value sum = reduceWithKept(
        rw, loc, in, mx, keptInit(rw, loc, s, f64, scalarConst(rw, loc, f64, 0)),
        s,
        [&](OpBuilder &b, Location l, ValueRange x,
            ValueRange a) -> SmallVector<Value> {
          Value d =
              arith::SubFOp::create(b, l, convertScalar(b, l, x[0], acc), x[1]);
          Value e = convertScalar(b, l, math::ExpOp::create(b, l, d), f64);
          return {arith::AddFOp::create(b, l, a[0], e)};
        })[0];
    Value r = buildElementwise(
        rw, loc, ValueRange{sum, mx}, keptType.clone(f64),
        [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::AddFOp::create(b, l, math::LogOp::create(b, l, a[0]),
                                       convertScalar(b, l, a[1], f64));
        });
    rw.replaceOp(op, finish(rw, loc, r, s,
                            cast<RankedTensorType>(op.getResult().getType()),
                            op.getKeepdim()));
    return success();
  }
};

/// argmax / argmin: a generic with two accumulators (value, index). Strict
/// comparison keeps the first of equal values; NaN beats every number and
/// the first NaN wins.
template <typename OpTy, bool IsMax>
struct ArgReduction : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(in.getType());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elem = inType.getElementType();
    {
      SmallVector<int64_t> dims;
      if (std::optional<int64_t> d = op.getDim(); d && inType.getRank() > 0)
        dims.push_back(kt::wrapDim(*d, inType.getRank()));
      checkNonEmpty(rw, loc, getSizes(rw, loc, in), dims, !op.getDim());
    }
    int64_t dim;
    if (std::optional<int64_t> d = op.getDim()) {
      dim = kt::wrapDim(*d, inType.getRank());
    } else {
      // Flatten to 1-D: the index is into the row-major flattened tensor.
      SmallVector<ReassociationIndices> group(1);
      for (int64_t i = 0; i < inType.getRank(); ++i)
        group[0].push_back(i);
      if (inType.getRank() == 0) {
        in = tensor::ExpandShapeOp::create(
            rw, loc, RankedTensorType::get({1}, elem), in,
            ArrayRef<ReassociationIndices>{},
            ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
      } else {
        int64_t n = inType.hasStaticShape() ? inType.getNumElements()
                                            : ShapedType::kDynamic;
        in = tensor::CollapseShapeOp::create(
            rw, loc, RankedTensorType::get({n}, elem), in, group);
      }
      inType = cast<RankedTensorType>(in.getType());
      dim = 0;
    }
    if (inType.getRank() == 0) {
      // argmax of a scalar along dim 0 is 0.
      Value z = filled(rw, loc, resultType, {},
                       scalarConst(rw, loc, rw.getI64Type(), 0));
      rw.replaceOp(op, z);
      return success();
    }
    ReduceShape s = reduceShape(rw, loc, in, {dim});
    bool fl = isa<FloatType>(elem);
    Value initV;
    if (fl)
      initV = scalarConst(rw, loc, elem,
                          IsMax ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity());
    else {
      unsigned w = elem.getIntOrFloatBitWidth();
      initV = arith::ConstantOp::create(
          rw, loc, elem,
          rw.getIntegerAttr(elem, isUnsignedInt(elem)
                                      ? (IsMax ? APInt::getMinValue(w)
                                               : APInt::getMaxValue(w))
                                      : (IsMax ? APInt::getSignedMinValue(w)
                                               : APInt::getSignedMaxValue(w))));
    }
    Type i64 = rw.getI64Type();
    SmallVector<Value> outs = {
        keptInit(rw, loc, s, elem, initV),
        keptInit(rw, loc, s, i64, scalarConst(rw, loc, i64, 0))};
    SmallVector<Value> r = reduceGeneric(
        rw, loc, in, outs, s,
        [&](OpBuilder &b, Location l, ValueRange x,
            ValueRange a) -> SmallVector<Value> {
          Value v = x[0], cur = a[0];
          Value better;
          if (fl) {
            better = arith::CmpFOp::create(
                b, l, IsMax ? CmpFPredicate::OGT : CmpFPredicate::OLT, v, cur);
            Value vNan = arith::CmpFOp::create(b, l, CmpFPredicate::UNO, v, v);
            Value cNotNan =
                arith::CmpFOp::create(b, l, CmpFPredicate::ORD, cur, cur);
            better = arith::OrIOp::create(
                b, l, better, arith::AndIOp::create(b, l, vNan, cNotNan));
          } else {
            bool u = isUnsignedInt(elem);
            better = arith::CmpIOp::create(
                b, l,
                IsMax ? (u ? CmpIPredicate::ugt : CmpIPredicate::sgt)
                      : (u ? CmpIPredicate::ult : CmpIPredicate::slt),
                v, cur);
          }
          Value idx = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, dim));
          // The first element always replaces the initial value (so an
          // all -inf / INT_MIN row still gives index 0).
          Value first = arith::CmpIOp::create(b, l, CmpIPredicate::eq, idx,
                                              scalarConst(b, l, i64, 0));
          better = arith::OrIOp::create(b, l, better, first);
          return {arith::SelectOp::create(b, l, better, v, cur),
                  arith::SelectOp::create(b, l, better, idx, a[1])};
        });
    Value idx = r[1];
    if (!op.getKeepdim()) {
      rw.replaceOp(op, castTo(rw, loc, idx, resultType));
      return success();
    }
    SmallVector<int64_t> units;
    if (op.getDim())
      units.push_back(dim);
    else
      for (int64_t i = 0; i < resultType.getRank(); ++i)
        units.push_back(i);
    rw.replaceOp(op, insertUnitDims(rw, loc, idx, resultType, units));
    return success();
  }
};


/// The cumulative scans (cumsum, cumprod, logcumsumexp): an scf.for over
/// `dim` whose body combines the slice at k with the accumulator slice (one
/// linalg.generic with two results: the new accumulator and its value
/// rounded to the element type, inserted into the result at k). Floats
/// accumulate in f64 for f32/f64 and in f32 for f16/bf16 (PyTorch's CPU
/// acc_type); integers wrap in their own type.
template <typename OpT>
struct CumulativeLowering : public OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;

  static Value combine(OpBuilder &b, Location loc, Value acc, Value x) {
    bool fl = isa<FloatType>(acc.getType());
    if constexpr (std::is_same_v<OpT, kt::CumsumOp>)
      return fl ? (Value)arith::AddFOp::create(b, loc, acc, x)
                : (Value)arith::AddIOp::create(b, loc, acc, x);
    else if constexpr (std::is_same_v<OpT, kt::CumprodOp>)
      return fl ? (Value)arith::MulFOp::create(b, loc, acc, x)
                : (Value)arith::MulIOp::create(b, loc, acc, x);
    else {
      // PyTorch's _log_add_exp_helper(x, acc): min/max that pass a NaN acc
      // through, max + log1p(exp(min - max)) unless both are the same
      // infinity (then x).
      Value accNan =
          arith::CmpFOp::create(b, loc, CmpFPredicate::UNO, acc, acc);
      Value xLt = arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, x, acc);
      // std::min(x, acc) = acc < x ? acc : x; std::max = x < acc ? acc : x.
      Value accLt = arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, acc, x);
      Value mn = arith::SelectOp::create(
          b, loc, accNan, acc, arith::SelectOp::create(b, loc, accLt, acc, x));
      Value mx = arith::SelectOp::create(
          b, loc, accNan, acc, arith::SelectOp::create(b, loc, xLt, acc, x));
      Value r = arith::AddFOp::create(
          b, loc,
          math::Log1pOp::create(
              b, loc,
              math::ExpOp::create(b, loc,
                                  arith::SubFOp::create(b, loc, mn, mx))),
          mx);
      Value differ = arith::CmpFOp::create(b, loc, CmpFPredicate::UNE, mn, mx);
      Value absMn = math::AbsFOp::create(b, loc, mn);
      Value finite = arith::CmpFOp::create(
          b, loc, CmpFPredicate::ONE, absMn,
          scalarConst(b, loc, mn.getType(),
                      std::numeric_limits<double>::infinity()));
      Value general = arith::OrIOp::create(b, loc, differ, finite);
      return arith::SelectOp::create(b, loc, general, r, x);
    }
  }

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    auto inType = cast<RankedTensorType>(in.getType());
    int64_t rank = inType.getRank();
    if (rank == 0) {
      // One element: combine(init, x) is x for every scan.
      rewriter.replaceOp(op, castTo(rewriter, loc, in, type));
      return success();
    }
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, in);
    if (llvm::is_contained(inType.getShape(), 0)) {
      // No element (statically): nothing to scan, and a slice at offset 0
      // of a size-0 dim would not verify.
      rewriter.replaceOp(
          op, castTo(rewriter, loc, emptyLike(rewriter, loc, inType, sizes),
                     type));
      return success();
    }
    int64_t d = kt::wrapDim(op.getDim(), rank);
    Type elem = inType.getElementType();
    Type acc = isa<FloatType>(elem)
                   ? (isHalf(elem) ? (Type)rewriter.getF32Type()
                                   : (Type)rewriter.getF64Type())
                   : elem;
    double init = std::is_same_v<OpT, kt::CumprodOp> ? 1.0
                  : std::is_same_v<OpT, kt::LogcumsumexpOp>
                      ? -std::numeric_limits<double>::infinity()
                      : 0.0;
    // The slices keep `dim` as a unit dim. A rank-reducing slice that drops
    // a unit dim other than the leading ones (1x4x1 at dim 2 -> 1x4) is
    // broken by MLIR 22's constant-offset folder for tensor.extract_slice,
    // which re-infers the leading-unit-dims reduction (sizes [1, 1, 4]: an
    // out-of-bounds slice that does not verify; fixed upstream by
    // llvm-project PR 178118). Kiln's other rank-reducing slices (im2col's
    // sliceLeading) drop leading dims only.
    SmallVector<OpFoldResult> sliceSizes = sizes;
    sliceSizes[d] = rewriter.getIndexAttr(1);
    SmallVector<int64_t> sliceShape(inType.getShape());
    sliceShape[d] = 1;
    auto accType = RankedTensorType::get(sliceShape, acc);
    auto sliceType = RankedTensorType::get(sliceShape, elem);
    Value accInit = filled(rewriter, loc, accType, sliceSizes,
                           scalarConst(rewriter, loc, acc, init));
    Value result = emptyLike(rewriter, loc, inType, sizes);
    Value n = indexValue(rewriter, loc, sizes[d]);
    Value zero = indexConst(rewriter, loc, 0), one = indexConst(rewriter, loc, 1);
    MLIRContext *ctx = rewriter.getContext();
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, n, one, ValueRange{accInit, result},
        [&](OpBuilder &b, Location l, Value k, ValueRange it) {
          SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[d] = k;
          SmallVector<OpFoldResult> one1 = sliceSizes;
          SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
          Value xs = tensor::ExtractSliceOp::create(b, l, sliceType, in,
                                                    offsets, one1, strides);
          Value ys = emptyLike(b, l, sliceType, sliceSizes);
          int64_t r = sliceShape.size();
          AffineMap id = AffineMap::getMultiDimIdentityMap(r, ctx);
          SmallVector<utils::IteratorType> iters(r,
                                                 utils::IteratorType::parallel);
          auto g = linalg::GenericOp::create(
              b, l, TypeRange{accType, sliceType}, ValueRange{xs},
              ValueRange{it[0], ys}, SmallVector<AffineMap>(3, id), iters,
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value x = args[0];
                if (x.getType() != acc)
                  x = arith::ExtFOp::create(nb, nl, acc, x);
                Value a = combine(nb, nl, args[1], x);
                Value y = a;
                if (a.getType() != elem)
                  y = arith::TruncFOp::create(nb, nl, elem, a);
                linalg::YieldOp::create(nb, nl, ValueRange{a, y});
              });
          Value res = tensor::InsertSliceOp::create(b, l, g.getResult(1), it[1],
                                                    offsets, one1, strides);
          scf::YieldOp::create(b, l, ValueRange{g.getResult(0), res});
        });
    rewriter.replaceOp(op, castTo(rewriter, loc, loop.getResult(1), type));
    return success();
  }
};

/// kt.argsort: a stable bottom-up merge sort of each slice along `dim`
/// (O(n log n) compares per slice, sequential). An scf.for nest visits the
/// slices; per slice, one i64 scratch tensor of 2n positions holds the
/// permutation being merged (the two halves ping-pong as source and
/// destination, so every write is in place), then the sorted positions are
/// written into the result. Elements are read from the operand with
/// tensor.extract; f16/bf16 compare in f32; NaN is larger than every
/// number.
struct ArgsortLowering : public OpConversionPattern<kt::ArgsortOp> {
  using OpConversionPattern::OpConversionPattern;

  /// Whether `a` comes strictly before `b` in the sort order.
  static Value before(OpBuilder &b, Location loc, Value a, Value c, bool desc) {
    Type t = a.getType();
    if (auto ft = dyn_cast<FloatType>(t)) {
      if (isHalf(ft)) {
        a = arith::ExtFOp::create(b, loc, b.getF32Type(), a);
        c = arith::ExtFOp::create(b, loc, b.getF32Type(), c);
      }
      Value lt = arith::CmpFOp::create(
          b, loc, desc ? CmpFPredicate::OGT : CmpFPredicate::OLT, a, c);
      Value aNum = arith::CmpFOp::create(b, loc, CmpFPredicate::ORD, a, a);
      Value cNum = arith::CmpFOp::create(b, loc, CmpFPredicate::ORD, c, c);
      Value one = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
      // Ascending: a number before a NaN; descending: a NaN before a number.
      Value nanOrder =
          desc ? arith::AndIOp::create(
                     b, loc, arith::XOrIOp::create(b, loc, aNum, one), cNum)
               : arith::AndIOp::create(
                     b, loc, aNum, arith::XOrIOp::create(b, loc, cNum, one));
      return arith::OrIOp::create(b, loc, lt, nanOrder);
    }
    // i1 and uint8 (ui8) compare unsigned.
    bool u = t.isInteger(1) || isUnsignedInt(t);
    CmpIPredicate p = desc ? (u ? CmpIPredicate::ugt : CmpIPredicate::sgt)
                           : (u ? CmpIPredicate::ult : CmpIPredicate::slt);
    return arith::CmpIOp::create(b, loc, p, a, c);
  }

  LogicalResult
  matchAndRewrite(kt::ArgsortOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    auto inType = cast<RankedTensorType>(in.getType());
    int64_t rank = inType.getRank();
    Type i64 = rewriter.getI64Type();
    auto outType = RankedTensorType::get(inType.getShape(), i64);
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, in);
    if (rank == 0 || llvm::is_contained(inType.getShape(), 0)) {
      // One element (position 0), or statically none.
      Value r = rank == 0 ? filled(rewriter, loc, outType, sizes,
                                   scalarConst(rewriter, loc, i64, 0))
                          : emptyLike(rewriter, loc, outType, sizes);
      rewriter.replaceOp(op, castTo(rewriter, loc, r, type));
      return success();
    }
    int64_t d = kt::wrapDim(op.getDim(), rank);
    bool desc = op.getDescending();
    Value n = indexValue(rewriter, loc, sizes[d]);
    Value zero = indexConst(rewriter, loc, 0);
    Value one = indexConst(rewriter, loc, 1);
    Value two = indexConst(rewriter, loc, 2);
    Value twoN = arith::MulIOp::create(rewriter, loc, n, two);
    Value scratch = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{ShapedType::kDynamic}, i64,
        ValueRange{twoN});
    Value result = emptyLike(rewriter, loc, outType, sizes);

    // The element of `in` at the slice `outer` (the indices of the other
    // dims) and position `k` (index) along d.
    auto element = [&](OpBuilder &b, Location l, ArrayRef<Value> outer,
                       Value k) {
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.insert(idx.begin() + d, k);
      return tensor::ExtractOp::create(b, l, in, idx).getResult();
    };
    auto toIndex = [](OpBuilder &b, Location l, Value v) -> Value {
      return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
    };
    auto toI64 = [&](OpBuilder &b, Location l, Value v) -> Value {
      return arith::IndexCastOp::create(b, l, b.getI64Type(), v);
    };

    // Sorts one slice: returns the updated scratch and result.
    auto sortSlice = [&](OpBuilder &b, Location l, ArrayRef<Value> outer,
                         Value buf, Value res) -> SmallVector<Value> {
      // buf[k] = k.
      buf = scf::ForOp::create(
                b, l, zero, n, one, ValueRange{buf},
                [&](OpBuilder &fb, Location fl, Value k, ValueRange it) {
                  Value r = tensor::InsertOp::create(fb, fl, toI64(fb, fl, k),
                                                     it[0], ValueRange{k});
                  scf::YieldOp::create(fb, fl, r);
                })
                .getResult(0);
      // Merge passes: runs of `width` from the half at `srcBase` into the
      // other half, until one run covers the slice.
      Type idxT = b.getIndexType();
      auto pass = scf::WhileOp::create(
          b, l, TypeRange{idxT, idxT, buf.getType()},
          ValueRange{one, zero, buf},
          [&](OpBuilder &wb, Location wl, ValueRange args) {
            Value more = arith::CmpIOp::create(wb, wl, CmpIPredicate::ult,
                                               args[0], n);
            scf::ConditionOp::create(wb, wl, more, args);
          },
          [&](OpBuilder &wb, Location wl, ValueRange args) {
            Value width = args[0], srcBase = args[1];
            Value dstBase = arith::SubIOp::create(wb, wl, n, srcBase);
            Value step = arith::MulIOp::create(wb, wl, width, two);
            Value merged =
                scf::ForOp::create(
                    wb, wl, zero, n, step, ValueRange{args[2]},
                    [&](OpBuilder &mb, Location ml, Value lo, ValueRange it) {
                      Value mid = arith::MinUIOp::create(
                          mb, ml, arith::AddIOp::create(mb, ml, lo, width), n);
                      Value hi = arith::MinUIOp::create(
                          mb, ml, arith::AddIOp::create(mb, ml, lo, step), n);
                      Value midM1 = arith::SubIOp::create(mb, ml, mid, one);
                      Value hiM1 = arith::SubIOp::create(mb, ml, hi, one);
                      auto merge = scf::ForOp::create(
                          mb, ml, lo, hi, one, ValueRange{lo, mid, it[0]},
                          [&](OpBuilder &kb, Location kl, Value k,
                              ValueRange st) {
                            Value i = st[0], j = st[1], cur = st[2];
                            Value ic = arith::MinUIOp::create(kb, kl, i, midM1);
                            Value jc = arith::MinUIOp::create(kb, kl, j, hiM1);
                            Value si = tensor::ExtractOp::create(
                                kb, kl, cur,
                                ValueRange{
                                    arith::AddIOp::create(kb, kl, srcBase, ic)});
                            Value sj = tensor::ExtractOp::create(
                                kb, kl, cur,
                                ValueRange{
                                    arith::AddIOp::create(kb, kl, srcBase, jc)});
                            Value xi = element(kb, kl, outer, toIndex(kb, kl, si));
                            Value xj = element(kb, kl, outer, toIndex(kb, kl, sj));
                            Value leftDone = arith::CmpIOp::create(
                                kb, kl, CmpIPredicate::uge, i, mid);
                            Value rightLeft = arith::CmpIOp::create(
                                kb, kl, CmpIPredicate::ult, j, hi);
                            // Stable: the right element goes first only
                            // when it is strictly before the left one.
                            Value takeRight = arith::OrIOp::create(
                                kb, kl, leftDone,
                                arith::AndIOp::create(
                                    kb, kl, rightLeft,
                                    before(kb, kl, xj, xi, desc)));
                            Value v =
                                arith::SelectOp::create(kb, kl, takeRight, sj, si);
                            Value next = tensor::InsertOp::create(
                                kb, kl, v, cur,
                                ValueRange{
                                    arith::AddIOp::create(kb, kl, dstBase, k)});
                            Value i2 = arith::SelectOp::create(
                                kb, kl, takeRight, i,
                                arith::AddIOp::create(kb, kl, i, one));
                            Value j2 = arith::SelectOp::create(
                                kb, kl, takeRight,
                                arith::AddIOp::create(kb, kl, j, one), j);
                            scf::YieldOp::create(kb, kl, ValueRange{i2, j2, next});
                          });
                      scf::YieldOp::create(mb, ml, merge.getResult(2));
                    })
                    .getResult(0);
            scf::YieldOp::create(wb, wl, ValueRange{step, dstBase, merged});
          });
      Value base = pass.getResult(1);
      buf = pass.getResult(2);
      // res[outer, k] = buf[base + k].
      res = scf::ForOp::create(
                b, l, zero, n, one, ValueRange{res},
                [&](OpBuilder &fb, Location fl, Value k, ValueRange it) {
                  Value v = tensor::ExtractOp::create(
                      fb, fl, buf,
                      ValueRange{arith::AddIOp::create(fb, fl, base, k)});
                  SmallVector<Value> idx(outer.begin(), outer.end());
                  idx.insert(idx.begin() + d, k);
                  Value r = tensor::InsertOp::create(fb, fl, v, it[0], idx);
                  scf::YieldOp::create(fb, fl, r);
                })
                .getResult(0);
      return {buf, res};
    };

    // One loop per other dim, carrying the scratch and the result.
    SmallVector<int64_t> others;
    for (int64_t i = 0; i < rank; ++i)
      if (i != d)
        others.push_back(i);
    SmallVector<Value> outer;
    std::function<SmallVector<Value>(OpBuilder &, Location, size_t, Value,
                                     Value)>
        nest = [&](OpBuilder &b, Location l, size_t level, Value buf,
                   Value res) -> SmallVector<Value> {
      if (level == others.size())
        return sortSlice(b, l, outer, buf, res);
      Value ub = indexValue(b, l, sizes[others[level]]);
      auto loop = scf::ForOp::create(
          b, l, zero, ub, one, ValueRange{buf, res},
          [&](OpBuilder &fb, Location fl, Value iv, ValueRange it) {
            outer.push_back(iv);
            SmallVector<Value> r = nest(fb, fl, level + 1, it[0], it[1]);
            outer.pop_back();
            scf::YieldOp::create(fb, fl, r);
          });
      return {loop.getResult(0), loop.getResult(1)};
    };
    SmallVector<Value> done = nest(rewriter, loc, 0, scratch, result);
    rewriter.replaceOp(op, castTo(rewriter, loc, done[1], type));
    return success();
  }
};

/// kt.searchsorted: one linalg.generic over `values` whose body is PyTorch's
/// binary search (an scf.while over [start, end) reading the sequence with
/// tensor.extract): `!(seq[mid] >= v)` (left) or `!(seq[mid] > v)` (right)
/// moves right, as cus_lower_bound / cus_upper_bound, so NaN and unsorted
/// sequences give PyTorch's positions. f16/bf16 compare in f32. Leading dims
/// of an N-D sequence that differ from the values' at run time are the
/// interpreter's error (the search then reads a zero sequence of the
/// values' sizes).
struct SearchsortedLowering : public OpConversionPattern<kt::SearchsortedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kt::SearchsortedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value seq = adaptor.getSortedSequence(), val = adaptor.getValues();
    auto st = cast<RankedTensorType>(seq.getType());
    auto vt = cast<RankedTensorType>(val.getType());
    auto type = cast<RankedTensorType>(op.getResult().getType());
    int64_t sr = st.getRank(), vr = vt.getRank();
    Type i64 = rw.getI64Type();
    auto outType = RankedTensorType::get(vt.getShape(), i64);
    SmallVector<OpFoldResult> vs = getSizes(rw, loc, val),
                              ss = getSizes(rw, loc, seq);
    if (sr > 1) {
      Value anyBad;
      SmallVector<OpFoldResult> safe = ss;
      for (int64_t k = 0; k + 1 < sr; ++k) {
        Value bad = indexCmp(rw, loc, CmpIPredicate::ne, ss[k], vs[k]);
        if (matchPattern(bad, m_Zero()))
          continue;
        SmallVector<Value> values = {
            getValueOrCreateConstantIndexOp(rw, loc, ss[k]),
            getValueOrCreateConstantIndexOp(rw, loc, vs[k])};
        checkAtRunTime(rw, loc, bad,
                       "leading dim " + std::to_string(k) +
                           " of sorted_sequence is {0} but of values {1} at "
                           "run time (they must be equal)",
                       values);
        anyBad = boolOr(rw, loc, anyBad, bad);
        safe[k] = arith::SelectOp::create(
                      rw, loc, bad, getValueOrCreateConstantIndexOp(rw, loc, vs[k]),
                      getValueOrCreateConstantIndexOp(rw, loc, ss[k]))
                      .getResult();
      }
      if (anyBad)
        seq = safeOperand(rw, loc, seq, anyBad, safe);
    }
    Value m = indexValue(rw, loc, ss[sr - 1]);
    bool right = op.getRight();
    Value init = emptyLike(rw, loc, outType, vs);
    AffineMap id = rw.getMultiDimIdentityMap(vr);
    SmallVector<utils::IteratorType> iters(vr, utils::IteratorType::parallel);
    auto g = linalg::GenericOp::create(
        rw, loc, TypeRange{outType}, ValueRange{val}, ValueRange{init},
        SmallVector<AffineMap>{id, id}, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = args[0];
          SmallVector<Value> lead;
          for (int64_t k = 0; k + 1 < sr; ++k)
            lead.push_back(linalg::IndexOp::create(b, l, k));
          Value zero = indexConst(b, l, 0), one = indexConst(b, l, 1);
          Type idxT = b.getIndexType();
          auto loop = scf::WhileOp::create(
              b, l, TypeRange{idxT, idxT}, ValueRange{zero, m},
              [&](OpBuilder &wb, Location wl, ValueRange a) {
                Value more =
                    arith::CmpIOp::create(wb, wl, CmpIPredicate::ult, a[0], a[1]);
                scf::ConditionOp::create(wb, wl, more, a);
              },
              [&](OpBuilder &wb, Location wl, ValueRange a) {
                Value start = a[0], end = a[1];
                Value half = arith::ShRUIOp::create(
                    wb, wl, arith::SubIOp::create(wb, wl, end, start), one);
                Value mid = arith::AddIOp::create(wb, wl, start, half);
                SmallVector<Value> idx = lead;
                idx.push_back(mid);
                Value s = tensor::ExtractOp::create(wb, wl, seq, idx);
                Value x = v;
                Value goRight;
                if (isa<FloatType>(s.getType())) {
                  if (isHalf(s.getType())) {
                    s = arith::ExtFOp::create(wb, wl, wb.getF32Type(), s);
                    x = arith::ExtFOp::create(wb, wl, wb.getF32Type(), x);
                  }
                  // !(s > x) = s <= x or unordered; !(s >= x) = s < x or
                  // unordered.
                  goRight = arith::CmpFOp::create(
                      wb, wl, right ? CmpFPredicate::ULE : CmpFPredicate::ULT,
                      s, x);
                } else {
                  // uint8 (ui8) compares unsigned.
                  bool u = isUnsignedInt(s.getType());
                  goRight = arith::CmpIOp::create(
                      wb, wl,
                      right ? (u ? CmpIPredicate::ule : CmpIPredicate::sle)
                            : (u ? CmpIPredicate::ult : CmpIPredicate::slt),
                      s, x);
                }
                Value s2 = arith::SelectOp::create(
                    wb, wl, goRight, arith::AddIOp::create(wb, wl, mid, one),
                    start);
                Value e2 = arith::SelectOp::create(wb, wl, goRight, end, mid);
                scf::YieldOp::create(wb, wl, ValueRange{s2, e2});
              });
          Value r = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               loop.getResult(0));
          linalg::YieldOp::create(b, l, r);
        });
    rw.replaceOp(op, castTo(rw, loc, g.getResult(0), type));
    return success();
  }
};
/// nonzero: a data-dependent count. One scf.for over the row-major
/// positions counts the elements that are not zero (floats: `une 0`, so NaN
/// counts and -0.0 does not; f16/bf16 compare in f32), a tensor.empty of
/// `count x rank` holds the result, and a second scf.for writes the indices
/// of each counted element into the next row.
struct NonzeroLowering : public OpConversionPattern<kt::NonzeroOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kt::NonzeroOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(in.getType());
    auto type = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = inType.getRank();
    Type i64 = rw.getI64Type();
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, in);
    SmallVector<Value> dims;
    Value zero = indexConst(rw, loc, 0), one = indexConst(rw, loc, 1);
    Value total = one;
    for (OpFoldResult sz : sizes) {
      dims.push_back(indexValue(rw, loc, sz));
      total = arith::MulIOp::create(rw, loc, total, dims.back());
    }
    // The indices of row-major position `lin` and whether it is non-zero.
    auto element = [&](OpBuilder &b, Location l, Value lin,
                       SmallVector<Value> &idx) -> Value {
      idx.assign(rank, Value());
      Value rem = lin;
      for (int64_t d = rank - 1; d >= 0; --d) {
        idx[d] = arith::RemUIOp::create(b, l, rem, dims[d]);
        rem = arith::DivUIOp::create(b, l, rem, dims[d]);
      }
      Value v = tensor::ExtractOp::create(b, l, in, idx);
      if (auto ft = dyn_cast<FloatType>(v.getType())) {
        if (isHalf(ft))
          v = arith::ExtFOp::create(b, l, b.getF32Type(), v);
        Value z = arith::ConstantOp::create(
            b, l, b.getFloatAttr(v.getType(), 0.0));
        return arith::CmpFOp::create(b, l, CmpFPredicate::UNE, v, z);
      }
      Value z = arith::ConstantOp::create(
          b, l, b.getIntegerAttr(v.getType(), 0));
      return arith::CmpIOp::create(b, l, CmpIPredicate::ne, v, z);
    };
    Value count =
        scf::ForOp::create(
            rw, loc, zero, total, one, ValueRange{zero},
            [&](OpBuilder &b, Location l, Value lin, ValueRange it) {
              SmallVector<Value> idx;
              Value nz = element(b, l, lin, idx);
              Value inc = arith::SelectOp::create(b, l, nz, one, zero);
              scf::YieldOp::create(b, l,
                                   ValueRange{arith::AddIOp::create(
                                       b, l, it[0], inc).getResult()});
            })
            .getResult(0);
    // A written static count is checked (the interpreter's message); the
    // code then goes on with that many rows, skipping indices beyond them
    // (zeros where fewer are found).
    Value rows = count;
    if (!type.isDynamicDim(0)) {
      checkResultShape(rw, loc, 0, type,
                       {OpFoldResult(count), rw.getIndexAttr(rank)});
      rows = indexConst(rw, loc, type.getDimSize(0));
    }
    Value init = tensor::EmptyOp::create(
        rw, loc, ArrayRef<int64_t>{ShapedType::kDynamic, rank}, i64,
        ValueRange{rows});
    if (!type.isDynamicDim(0))
      init = linalg::FillOp::create(
                 rw, loc,
                 ValueRange{arith::ConstantOp::create(
                     rw, loc, rw.getI64IntegerAttr(0))},
                 ValueRange{init})
                 .getResult(0);
    Value result =
        scf::ForOp::create(
            rw, loc, zero, total, one, ValueRange{init, zero},
            [&](OpBuilder &b, Location l, Value lin, ValueRange it) {
              SmallVector<Value> idx;
              Value nz = element(b, l, lin, idx);
              nz = arith::AndIOp::create(
                  b, l, nz,
                  arith::CmpIOp::create(b, l, CmpIPredicate::ult, it[1],
                                        rows));
              auto ifOp = scf::IfOp::create(
                  b, l, nz,
                  [&](OpBuilder &tb, Location tl) {
                    Value r = it[0];
                    for (int64_t d = 0; d < rank; ++d) {
                      Value v = arith::IndexCastOp::create(tb, tl, i64, idx[d]);
                      r = tensor::InsertOp::create(
                          tb, tl, v, r,
                          ValueRange{it[1], indexConst(tb, tl, d)});
                    }
                    Value next = arith::AddIOp::create(tb, tl, it[1], one);
                    scf::YieldOp::create(tb, tl, ValueRange{r, next});
                  },
                  [&](OpBuilder &eb, Location el) {
                    scf::YieldOp::create(eb, el, ValueRange{it[0], it[1]});
                  });
              scf::YieldOp::create(b, l, ifOp.getResults());
            })
            .getResult(0);
    rw.replaceOp(op, castTo(rw, loc, result, type));
    return success();
  }
};

/// bincount: a data-dependent length. One scf.for finds the largest element
/// and the first negative one (a run-time error: "bincount only supports
/// non-negative inputs"; negative elements are then skipped), a zero-filled
/// tensor of `max(max + 1, minlength)` holds the result, and a second scf.for
/// adds 1 (or the element's weight, in the weights' type, in order) at each
/// element's value. `?` lengths of self and weights are checked against each
/// other (the loops then stop at the shorter one), and so is a written
/// static result length against the computed one (values beyond it are
/// then skipped).
struct BincountLowering : public OpConversionPattern<kt::BincountOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kt::BincountOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getSelf(), w = adaptor.getWeights();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Type elem = type.getElementType();
    bool unsignedIn = isUnsignedInt(
        cast<RankedTensorType>(op.getSelf().getType()).getElementType());
    Type i64 = rw.getI64Type();
    Value zero = indexConst(rw, loc, 0), one = indexConst(rw, loc, 1);
    OpFoldResult nSize = getSizes(rw, loc, in)[0];
    Value n = indexValue(rw, loc, nSize);
    if (w) {
      OpFoldResult wSize = getSizes(rw, loc, w)[0];
      Value bad = indexCmp(rw, loc, CmpIPredicate::ne, wSize, nSize);
      Value wn = indexValue(rw, loc, wSize);
      if (checkAtRunTime(rw, loc, bad,
                         "weights have length {0} but self has length {1}",
                         ValueRange{wn, n}))
        n = arith::MinUIOp::create(rw, loc, n, wn);
    }
    // Element `i` of self as i64 (ui8 zero-extended).
    auto element = [&](OpBuilder &b, Location l, Value i) -> Value {
      Value v = tensor::ExtractOp::create(b, l, in, ValueRange{i});
      if (v.getType() == i64)
        return v;
      if (unsignedIn)
        return arith::ExtUIOp::create(b, l, i64, v);
      return arith::ExtSIOp::create(b, l, i64, v);
    };
    Value c0 = arith::ConstantOp::create(rw, loc, rw.getI64IntegerAttr(0));
    Value cm1 = arith::ConstantOp::create(rw, loc, rw.getI64IntegerAttr(-1));
    // (largest element or -1, position of the first negative one or n, its
    // value).
    auto scan = scf::ForOp::create(
        rw, loc, zero, n, one, ValueRange{cm1, n, c0},
        [&](OpBuilder &b, Location l, Value i, ValueRange it) {
          Value v = element(b, l, i);
          Value mx = arith::MaxSIOp::create(b, l, it[0], v);
          Value neg = arith::CmpIOp::create(b, l, CmpIPredicate::slt, v, c0);
          Value none = arith::CmpIOp::create(b, l, CmpIPredicate::eq, it[1], n);
          Value first = arith::AndIOp::create(b, l, neg, none);
          Value pos = arith::SelectOp::create(b, l, first, i, it[1]);
          Value val = arith::SelectOp::create(b, l, first, v, it[2]);
          scf::YieldOp::create(b, l, ValueRange{mx, pos, val});
        });
    Value negBad = arith::CmpIOp::create(rw, loc, CmpIPredicate::ne,
                                         scan.getResult(1), n);
    checkAtRunTime(rw, loc, negBad,
                   "bincount only supports non-negative inputs: self[{0}] "
                   "is {1}",
                   ValueRange{scan.getResult(1), scan.getResult(2)});
    Value len = arith::MaxSIOp::create(
        rw, loc,
        arith::AddIOp::create(rw, loc, scan.getResult(0),
                              arith::ConstantOp::create(
                                  rw, loc, rw.getI64IntegerAttr(1))),
        arith::ConstantOp::create(rw, loc,
                                  rw.getI64IntegerAttr(op.getMinlength())));
    len = arith::IndexCastOp::create(rw, loc, rw.getIndexType(), len);
    // A written static length is checked (the interpreter's message); the
    // code then goes on with that length, skipping values beyond it.
    if (!type.isDynamicDim(0)) {
      checkResultShape(rw, loc, 0, type, {OpFoldResult(len)});
      len = indexConst(rw, loc, type.getDimSize(0));
    }
    Value lenI64 = arith::IndexCastOp::create(rw, loc, i64, len);
    auto dynType = RankedTensorType::get({ShapedType::kDynamic}, elem);
    Value zeroElem = arith::ConstantOp::create(rw, loc, rw.getZeroAttr(elem));
    Value init = filled(rw, loc, dynType, {OpFoldResult(len)}, zeroElem);
    Value result =
        scf::ForOp::create(
            rw, loc, zero, n, one, ValueRange{init},
            [&](OpBuilder &b, Location l, Value i, ValueRange it) {
              Value v = element(b, l, i);
              Value ok = arith::AndIOp::create(
                  b, l,
                  arith::CmpIOp::create(b, l, CmpIPredicate::sge, v, c0),
                  arith::CmpIOp::create(b, l, CmpIPredicate::slt, v, lenI64));
              auto ifOp = scf::IfOp::create(
                  b, l, ok,
                  [&](OpBuilder &tb, Location tl) {
                    Value k = arith::IndexCastOp::create(
                        tb, tl, tb.getIndexType(), v);
                    Value cur =
                        tensor::ExtractOp::create(tb, tl, it[0], ValueRange{k});
                    Value next;
                    if (w) {
                      Value wi =
                          tensor::ExtractOp::create(tb, tl, w, ValueRange{i});
                      next = arith::AddFOp::create(tb, tl, cur, wi);
                    } else {
                      next = arith::AddIOp::create(
                          tb, tl, cur,
                          arith::ConstantOp::create(
                              tb, tl, tb.getI64IntegerAttr(1)));
                    }
                    Value r = tensor::InsertOp::create(tb, tl, next, it[0],
                                                       ValueRange{k});
                    scf::YieldOp::create(tb, tl, ValueRange{r});
                  },
                  [&](OpBuilder &eb, Location el) {
                    scf::YieldOp::create(eb, el, ValueRange{it[0]});
                  });
              scf::YieldOp::create(b, l, ifOp.getResults());
            })
            .getResult(0);
    rw.replaceOp(op, castTo(rw, loc, result, type));
    return success();
  }
};
} // namespace

void kiln::populateKTReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SimpleReduction<kt::SumOp, Kind::Sum>,
               SimpleReduction<kt::MeanOp, Kind::Mean>,
               SimpleReduction<kt::ProdOp, Kind::Prod>,
               SimpleReduction<kt::AmaxOp, Kind::Max>,
               SimpleReduction<kt::AminOp, Kind::Min>,
               SimpleReduction<kt::AnyOp, Kind::Any>,
               SimpleReduction<kt::AllOp, Kind::All>, VarLowering,
               LogsumexpLowering, ArgReduction<kt::ArgmaxOp, true>,
               ArgReduction<kt::ArgminOp, false>,
               CumulativeLowering<kt::CumsumOp>, CumulativeLowering<kt::CumprodOp>,
               CumulativeLowering<kt::LogcumsumexpOp>, ArgsortLowering,
               SearchsortedLowering, NonzeroLowering, BincountLowering>(
      patterns.getContext());
}
