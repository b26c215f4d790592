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
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
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
    SmallVector<OpFoldResult> sliceSizes;
    SmallVector<int64_t> sliceShape;
    for (int64_t i = 0; i < rank; ++i)
      if (i != d) {
        sliceSizes.push_back(sizes[i]);
        sliceShape.push_back(inType.getDimSize(i));
      }
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
          SmallVector<OpFoldResult> one1 = sizes;
          one1[d] = b.getIndexAttr(1);
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
               CumulativeLowering<kt::LogcumsumexpOp>>(patterns.getContext());
}
