//===- Utils.cpp - Helpers shared by the kt-to-linalg patterns ------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;

namespace kiln::lowering {

Value indexValue(OpBuilder &b, Location loc, OpFoldResult v) {
  return getValueOrCreateConstantIndexOp(b, loc, v);
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value dimSize(OpBuilder &b, Location loc, Value x, int64_t d) {
  auto t = cast<RankedTensorType>(x.getType());
  if (t.getRank() == 0)
    return arith::ConstantIndexOp::create(b, loc, 1);
  return getValueOrCreateConstantIndexOp(b, loc, getSizes(b, loc, x)[d]);
}

SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value v) {
  return tensor::getMixedSizes(b, loc, v);
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type,
                ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> dyn;
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(d))
      dyn.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[i]));
  return tensor::EmptyOp::create(b, loc, type, dyn);
}

SmallVector<OpFoldResult> broadcastSizes(OpBuilder &b, Location loc,
                                         ValueRange operands,
                                         RankedTensorType type) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t j = 0; j < rank; ++j) {
    int64_t d = type.getDimSize(j);
    if (!ShapedType::isDynamic(d)) {
      sizes.push_back(b.getIndexAttr(d));
      continue;
    }
    OpFoldResult size;
    // A static size other than 1 is the size; else the dynamic dims of the
    // operands, combined by the broadcasting rule at run time: a `?` dim may
    // be 1 and broadcast against the others.
    for (Value v : operands) {
      auto t = cast<RankedTensorType>(v.getType());
      int64_t i = j - (rank - t.getRank());
      if (i >= 0 && !t.isDynamicDim(i) && t.getDimSize(i) != 1) {
        size = b.getIndexAttr(t.getDimSize(i));
        break;
      }
    }
    if (!size) {
      Value one;
      for (Value v : operands) {
        auto t = cast<RankedTensorType>(v.getType());
        int64_t i = j - (rank - t.getRank());
        if (i < 0 || !t.isDynamicDim(i))
          continue;
        Value dim = tensor::DimOp::create(b, loc, v, i);
        if (!size) {
          size = dim;
          continue;
        }
        if (!one)
          one = arith::ConstantIndexOp::create(b, loc, 1);
        Value cur = getValueOrCreateConstantIndexOp(b, loc, size);
        Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            cur, one);
        size = arith::SelectOp::create(b, loc, isOne, dim, cur).getResult();
      }
    }
    sizes.push_back(size ? size : OpFoldResult(b.getIndexAttr(1)));
  }
  return sizes;
}

AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operand,
                       ArrayRef<int64_t> resultShape) {
  int64_t rank = resultShape.size();
  int64_t offset = rank - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < operand.getRank(); ++i) {
    int64_t j = i + offset;
    if (operand.getDimSize(i) == 1 && resultShape[j] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(j, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// `v`, read by a generic over `resultShape` / `sizes`, with each `?` dim
/// that is 1 at run time while the result's is not broadcast: an scf.if
/// that copies `v` to the result's size in those dims when it happens (the
/// indexing maps can only broadcast static size-1 dims). `v` itself when it
/// has no `?` dim. A `?` dim that neither matches nor broadcasts (a run-time
/// error the op's lowering reports) gives a zero-filled operand of the
/// result's size, so the generic never reads outside `v`.
Value broadcastDynamicDims(OpBuilder &b, Location loc, Value v,
                           ArrayRef<int64_t> resultShape,
                           ArrayRef<OpFoldResult> sizes) {
  auto t = cast<RankedTensorType>(v.getType());
  int64_t offset = resultShape.size() - t.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (t.isDynamicDim(i))
      dims.push_back(i);
  // A dim whose result size is the same tensor.dim of `v`: nothing to do.
  auto isOwnDim = [&](int64_t i) {
    if (resultShape[i + offset] == 1)
      return false;
    auto dim = dyn_cast_if_present<Value>(sizes[i + offset]);
    auto dimOp = dim ? dim.getDefiningOp<tensor::DimOp>() : tensor::DimOp();
    return dimOp && dimOp.getSource() == v && dimOp.getConstantIndex() == i;
  };
  if (llvm::all_of(dims, isOwnDim))
    return v;
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> vDims;
  for (int64_t i = 0; i < t.getRank(); ++i)
    vDims.push_back(tensor::DimOp::create(b, loc, v, i));
  Value needCopy, bad;
  // Static dims of `v` stay static in the copy's type: a tensor.empty with
  // a `?` size that folds to a constant is rewritten into a static one plus a
  // tensor.cast, which upstream's RemoveOutsDependency undoes (it recreates
  // the empty from the cast's sizes): the two patterns then alternate until
  // the greedy driver's rewrite cap (seconds per group).
  SmallVector<OpFoldResult> copySizes = tensor::getMixedSizes(b, loc, v);
  for (int64_t i : dims) {
    OpFoldResult size = resultShape[i + offset] == 1
                            ? OpFoldResult(b.getIndexAttr(1))
                            : sizes[i + offset];
    copySizes[i] = size;
    if (isOwnDim(i))
      continue;
    Value ne = indexCmp(b, loc, arith::CmpIPredicate::ne, vDims[i], size);
    Value notOne = indexCmp(b, loc, arith::CmpIPredicate::ne, vDims[i], one);
    needCopy = boolOr(b, loc, needCopy, ne);
    bad = boolOr(b, loc, bad, boolAnd(b, loc, ne, notOne));
    copySizes[i] = size;
  }
  if (!needCopy || matchPattern(needCopy, m_Zero()))
    return v;
  Type elem = t.getElementType();
  auto broadcastCopy = [&](OpBuilder &tb, Location tl) -> Value {
    Value init = tensor::EmptyOp::create(tb, tl, copySizes, elem);
    SmallVector<AffineMap> maps = {tb.getMultiDimIdentityMap(t.getRank())};
    SmallVector<utils::IteratorType> iters(t.getRank(),
                                           utils::IteratorType::parallel);
    Value zero = arith::ConstantIndexOp::create(tb, tl, 0);
    return linalg::GenericOp::create(
               tb, tl, TypeRange{init.getType()}, ValueRange{},
               ValueRange{init}, maps, iters,
               [&](OpBuilder &nb, Location nl, ValueRange) {
                 SmallVector<Value> idx;
                 for (int64_t i = 0; i < t.getRank(); ++i) {
                   Value k = linalg::IndexOp::create(nb, nl, i);
                   if (llvm::is_contained(dims, i)) {
                     Value isOne = arith::CmpIOp::create(
                         nb, nl, arith::CmpIPredicate::eq, vDims[i], one);
                     k = arith::SelectOp::create(nb, nl, isOne, zero, k);
                   }
                   idx.push_back(k);
                 }
                 linalg::YieldOp::create(
                     nb, nl,
                     ValueRange{tensor::ExtractOp::create(nb, nl, v, idx)});
               })
        .getResult(0);
  };
  auto ifOp = scf::IfOp::create(
      b, loc, needCopy,
      [&](OpBuilder &tb, Location tl) {
        Value copy;
        if (!bad || matchPattern(bad, m_Zero())) {
          copy = broadcastCopy(tb, tl);
        } else {
          // Not broadcast-compatible: the op reports it; a zero-filled
          // operand of the result's size keeps the reads in bounds.
          copy = scf::IfOp::create(
                     tb, tl, bad,
                     [&](OpBuilder &fb, Location fl) {
                       Value init =
                           tensor::EmptyOp::create(fb, fl, copySizes, elem);
                       Value z = linalg::FillOp::create(
                                     fb, fl, scalarConst(fb, fl, elem, 0), init)
                                     .getResult(0);
                       scf::YieldOp::create(fb, fl, z);
                     },
                     [&](OpBuilder &cb, Location cl) {
                       scf::YieldOp::create(cb, cl, broadcastCopy(cb, cl));
                     })
                     .getResult(0);
        }
        copy = tensor::CastOp::create(tb, tl, t, copy);
        scf::YieldOp::create(tb, tl, copy);
      },
      [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, v); });
  return ifOp.getResult(0);
}

/// A pointwise linalg.generic over `operandsIn` broadcast to `resultType`
/// with sizes `sizes` (the common part of buildElementwise and broadcastTo).
static Value broadcastGeneric(OpBuilder &b, Location loc, ValueRange operandsIn,
                              RankedTensorType resultType,
                              ArrayRef<OpFoldResult> sizes, BodyFn body) {
  // A statically empty result has no element to compute: no generic (the
  // CPU pipeline's tiling would slice its operands' empty dims at offset
  // 0, which does not verify: "offset 1 is out-of-bounds: 0 >= 0"; rl24's
  // fuzz finding, kt.where of a tensor<1x0xi64>). The callers' run-time
  // checks of the operands' `?` dims come before.
  if (llvm::is_contained(resultType.getShape(), 0))
    return emptyLike(b, loc, resultType, sizes);
  SmallVector<Value> operands;
  for (Value v : operandsIn)
    operands.push_back(
        broadcastDynamicDims(b, loc, v, resultType.getShape(), sizes));
  Value init = emptyLike(b, loc, resultType, sizes);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value v : operands)
    maps.push_back(broadcastMap(ctx, cast<RankedTensorType>(v.getType()),
                                resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iters(resultType.getRank(),
                                         utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = body(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, ValueRange operandsIn,
                       RankedTensorType resultType, BodyFn body) {
  SmallVector<OpFoldResult> sizes =
      broadcastSizes(b, loc, operandsIn, resultType);
  return broadcastGeneric(b, loc, operandsIn, resultType, sizes, body);
}

Value broadcastTo(OpBuilder &b, Location loc, Value operand,
                  RankedTensorType resultType, ArrayRef<OpFoldResult> sizes) {
  return broadcastGeneric(
      b, loc, ValueRange{operand}, resultType, sizes,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

Type computeType(Type t) {
  return isHalf(t) ? Float32Type::get(t.getContext()) : t;
}

Type accumulatorType(Type t) {
  return isa<FloatType>(t) ? Float64Type::get(t.getContext()) : t;
}

Value roundFromF64(OpBuilder &b, Location loc, Value v, Type elem) {
  if (elem.isF64())
    return v;
  v = arith::TruncFOp::create(b, loc, b.getF32Type(), v);
  return elem.isF32() ? v
                      : arith::TruncFOp::create(b, loc, elem, v).getResult();
}

Value scalarConst(OpBuilder &b, Location loc, Type t, double v) {
  if (auto ft = dyn_cast<FloatType>(t)) {
    bool lost;
    APFloat f(v);
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, f));
  }
  if (t.isInteger(1))
    return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v != 0));
  if (t.isIndex())
    return arith::ConstantIndexOp::create(b, loc, (int64_t)v);
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, (int64_t)v));
}

bool isUnsignedInt(Type t) { return t.isUnsignedInteger(); }

Value toBool(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (t.isInteger(1))
    return v;
  if (isa<FloatType>(t))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                 scalarConst(b, loc, t, 0));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                               scalarConst(b, loc, t, 0));
}

Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (to.isInteger(1))
    return toBool(b, loc, v);
  auto ff = dyn_cast<FloatType>(from);
  auto tf = dyn_cast<FloatType>(to);
  if (ff && tf) {
    // f16 <-> bf16 goes through f32 (exact widening, one rounding).
    if (isHalf(from) && isHalf(to))
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    if (cast<FloatType>(v.getType()).getWidth() < tf.getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (v.getType() == to)
      return v;
    return arith::TruncFOp::create(b, loc, to, v);
  }
  unsigned tw = to.getIntOrFloatBitWidth();
  if (ff) {
    // float -> int: truncate toward zero; to a narrow integer (i16, i8,
    // ui8) through i64, then wrap, as the interpreter stores it.
    if (tw >= 32)
      return arith::FPToSIOp::create(b, loc, to, v);
    Value wide = arith::FPToSIOp::create(b, loc, b.getI64Type(), v);
    return arith::TruncIOp::create(b, loc, to, wide);
  }
  if (tf) {
    if (from.isInteger(1) || isUnsignedInt(from))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth();
  if (fw == tw) // i8 <-> ui8: the same bits
    return arith::BitcastOp::create(b, loc, to, v);
  if (from.isInteger(1) || isUnsignedInt(from))
    return arith::ExtUIOp::create(b, loc, to, v);
  if (fw < tw)
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

Value filled(OpBuilder &b, Location loc, RankedTensorType type,
             ArrayRef<OpFoldResult> sizes, Value value) {
  Value init = emptyLike(b, loc, type, sizes);
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

Value insertUnitDims(OpBuilder &b, Location loc, Value v, RankedTensorType type,
                     ArrayRef<int64_t> unitDims) {
  auto src = cast<RankedTensorType>(v.getType());
  if (src.getRank() == type.getRank())
    return castTo(b, loc, v, type);
  SmallVector<ReassociationIndices> groups;
  if (src.getRank() > 0) {
    llvm::SmallDenseSet<int64_t> units(unitDims.begin(), unitDims.end());
    ReassociationIndices current;
    int64_t srcDim = 0;
    for (int64_t j = 0; j < type.getRank(); ++j) {
      current.push_back(j);
      if (!units.contains(j)) {
        ++srcDim;
        // Trailing unit dims join the last group.
        if (srcDim < src.getRank()) {
          groups.push_back(current);
          current.clear();
        }
      }
    }
    groups.push_back(current);
  }
  SmallVector<OpFoldResult> outShape;
  SmallVector<OpFoldResult> srcSizes = getSizes(b, loc, v);
  int64_t srcDim = 0;
  llvm::SmallDenseSet<int64_t> units(unitDims.begin(), unitDims.end());
  for (int64_t j = 0; j < type.getRank(); ++j) {
    if (units.contains(j))
      outShape.push_back(b.getIndexAttr(1));
    else
      outShape.push_back(srcSizes[srcDim++]);
  }
  return tensor::ExpandShapeOp::create(b, loc, type, v, groups, outShape);
}

Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

Value convertTensor(OpBuilder &b, Location loc, Value v, Type elem) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType() == elem)
    return v;
  return buildElementwise(b, loc, v, t.clone(elem),
                          [&](OpBuilder &nb, Location nl, ValueRange a) {
                            return convertScalar(nb, nl, a[0], elem);
                          });
}

} // namespace kiln::lowering
