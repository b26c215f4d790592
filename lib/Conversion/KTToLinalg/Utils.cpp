//===- Utils.cpp - Helpers shared by the kt-to-linalg patterns ------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;

namespace kiln::lowering {

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
    // Prefer an operand's dynamic dim, then any static size other than 1.
    for (Value v : operands) {
      auto t = cast<RankedTensorType>(v.getType());
      int64_t i = j - (rank - t.getRank());
      if (i >= 0 && t.isDynamicDim(i)) {
        size = tensor::DimOp::create(b, loc, v, i).getResult();
        break;
      }
    }
    if (!size)
      for (Value v : operands) {
        auto t = cast<RankedTensorType>(v.getType());
        int64_t i = j - (rank - t.getRank());
        if (i >= 0 && t.getDimSize(i) != 1) {
          size = b.getIndexAttr(t.getDimSize(i));
          break;
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

Value buildElementwise(OpBuilder &b, Location loc, ValueRange operands,
                       RankedTensorType resultType, BodyFn body) {
  SmallVector<OpFoldResult> sizes =
      broadcastSizes(b, loc, operands, resultType);
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

Value broadcastTo(OpBuilder &b, Location loc, Value operand,
                  RankedTensorType resultType, ArrayRef<OpFoldResult> sizes) {
  Value init = emptyLike(b, loc, resultType, sizes);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {
      broadcastMap(ctx, cast<RankedTensorType>(operand.getType()),
                   resultType.getShape()),
      b.getMultiDimIdentityMap(resultType.getRank())};
  SmallVector<utils::IteratorType> iters(resultType.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{operand},
             ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, args[0]);
             })
      .getResult(0);
}

bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

Type computeType(Type t) {
  return isHalf(t) ? Float32Type::get(t.getContext()) : t;
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
  if (ff) // float -> int: truncate toward zero.
    return arith::FPToSIOp::create(b, loc, to, v);
  if (tf) {
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (from.isInteger(1))
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
