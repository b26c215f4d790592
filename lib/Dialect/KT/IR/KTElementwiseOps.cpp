//===- KTElementwiseOps.cpp - kt Elementwise ops --------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTElementwiseOps.td.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Dialect/KT/IR/KTTypeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace kiln::kt;

//===----------------------------------------------------------------------===//
// Result type inference helpers (used by the inferImpl code in the .td)
//===----------------------------------------------------------------------===//

namespace kiln::kt::ew {

/// The shape of `operand` (a ranked tensor) with element type `elem`.
LogicalResult inferSameShapeResult(Type operand, Type elem,
                                   SmallVectorImpl<Type> &types) {
  auto t = dyn_cast<RankedTensorType>(operand);
  if (!t)
    return failure();
  types.push_back(RankedTensorType::get(t.getShape(), elem));
  return success();
}


LogicalResult inferCastResult(std::optional<Location> loc, StringRef opName,
                              Type operand, Type dtype,
                              SmallVectorImpl<Type> &types) {
  if (!dtype || !isKTElementType(dtype))
    return emitKTError(loc, opName, "dtype ", dtype,
                       " is not a kt element type (", kKTElementTypesText,
                       ")");
  return inferSameShapeResult(operand, dtype, types);
}

LogicalResult inferWhereResult(MLIRContext *, std::optional<Location> loc,
                               StringRef opName, TypeRange operands,
                               SmallVectorImpl<Type> &types) {
  if (operands.size() != 3)
    return failure();
  SmallVector<SmallVector<int64_t>> shapes;
  for (Type t : operands) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      return failure();
    shapes.emplace_back(rt.getShape());
  }
  auto cond = cast<RankedTensorType>(operands[0]);
  if (!cond.getElementType().isInteger(1))
    return emitKTError(loc, opName, "condition has element type ",
                       cond.getElementType(), " but must be i1");
  if (failed(checkSameElementType(operands.drop_front(), loc, opName)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes, loc, opName);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(
      *shape, cast<RankedTensorType>(operands[1]).getElementType()));
  return success();
}

} // namespace kiln::kt::ew

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTElementwiseOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult DivOp::verify() {
  Type elem = cast<RankedTensorType>(getSelf().getType()).getElementType();
  if (!isKTFloat(elem) && !getRoundingMode())
    return emitOpError("true division needs float operands, got ")
           << elem << ": insert kt.cast or set rounding_mode";
  return success();
}

LogicalResult ClampOp::verify() {
  if (!getMin() && !getMax())
    return emitOpError("needs at least one of min and max");
  Type elem = cast<RankedTensorType>(getSelf().getType()).getElementType();
  if (!isKTFloat(elem)) {
    for (auto [name, v] : {std::pair<StringRef, std::optional<llvm::APFloat>>{
                               "min", getMinAttr() ? std::optional(getMinAttr().getValue()) : std::nullopt},
                           {"max", getMaxAttr() ? std::optional(getMaxAttr().getValue()) : std::nullopt}}) {
      if (!v)
        continue;
      double d = v->convertToDouble();
      if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > 9.2e18)
        return emitOpError(name) << " = " << d << " is not an integer but self has element type " << elem;
    }
  }
  return success();
}

LogicalResult SpecialOp::verify() {
  bool isPolygamma = getFn() == SpecialFn::polygamma;
  if (isPolygamma && !getN())
    return emitOpError("fn = polygamma needs the order n");
  if (!isPolygamma && getN())
    return emitOpError("n is an attribute of fn = polygamma only, not of fn = ")
           << stringifySpecialFn(getFn());
  if (auto n = getNAttr(); n && n.getInt() < 0)
    return emitOpError("n = ") << n.getInt() << " must be >= 0";
  return success();
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

namespace {

/// True when the constant `cst` is a splat equal to `value` (0 or 1) and
/// combining `x` with it cannot change `x`'s type: the op's result type equals
/// the type of `x` and every static dim of `cst` is 1 or the same static dim
/// of `x` (a `?` of `x` could be 1 and broadcast).
bool isNeutral(Attribute cst, Value x, Value other, Type resultType,
               int64_t value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(cst);
  if (!dense || !dense.isSplat() || x.getType() != resultType)
    return false;
  if (isa<FloatType>(dense.getElementType())) {
    APFloat v = dense.getSplatValue<APFloat>();
    // x + (-0.0) == x for every x; x + 0.0 turns -0.0 into 0.0.
    if (value == 0 && !(v.isZero() && v.isNegative()))
      return false;
    if (value == 1 && !v.isExactlyValue(1.0))
      return false;
  } else {
    APInt v = dense.getSplatValue<APInt>();
    if (v.getSExtValue() != value)
      return false;
  }
  auto xt = cast<RankedTensorType>(x.getType());
  auto ct = cast<RankedTensorType>(other.getType());
  if (ct.getRank() > xt.getRank())
    return false;
  int64_t off = xt.getRank() - ct.getRank();
  for (int64_t i = 0; i < ct.getRank(); ++i) {
    int64_t c = ct.getDimSize(i), d = xt.getDimSize(off + i);
    if (c == ShapedType::kDynamic)
      return false;
    if (c != 1 && c != d)
      return false;
  }
  return true;
}

/// Folds a binary op on two splat constants to a splat of the (static)
/// result type.
template <typename FF, typename FI>
Attribute foldBinarySplat(Attribute a, Attribute b, Type resultType, FF ff,
                          FI fi) {
  auto rt = dyn_cast<RankedTensorType>(resultType);
  auto da = dyn_cast_or_null<DenseElementsAttr>(a);
  auto db = dyn_cast_or_null<DenseElementsAttr>(b);
  if (!rt || !rt.hasStaticShape() || !da || !db || !da.isSplat() ||
      !db.isSplat())
    return {};
  if (isa<FloatType>(da.getElementType())) {
    APFloat x = da.getSplatValue<APFloat>(), y = db.getSplatValue<APFloat>();
    ff(x, y);
    return DenseElementsAttr::get(rt, x);
  }
  APInt x = da.getSplatValue<APInt>(), y = db.getSplatValue<APInt>();
  if (x.getBitWidth() == 1)
    return {};
  return DenseElementsAttr::get(rt, fi(x, y));
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (Attribute r = foldBinarySplat(
          adaptor.getSelf(), adaptor.getOther(), getType(),
          [](APFloat &x, const APFloat &y) {
            x.add(y, APFloat::rmNearestTiesToEven);
          },
          [](const APInt &x, const APInt &y) { return x + y; }))
    return r;
  if (isNeutral(adaptor.getOther(), getSelf(), getOther(), getType(), 0))
    return getSelf();
  if (isNeutral(adaptor.getSelf(), getOther(), getSelf(), getType(), 0))
    return getOther();
  return {};
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Attribute r = foldBinarySplat(
          adaptor.getSelf(), adaptor.getOther(), getType(),
          [](APFloat &x, const APFloat &y) {
            x.subtract(y, APFloat::rmNearestTiesToEven);
          },
          [](const APInt &x, const APInt &y) { return x - y; }))
    return r;
  // x - 0.0 == x for every x (-0.0 - 0.0 = -0.0); x - (-0.0) is not.
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOther());
      dense && dense.isSplat() && isa<FloatType>(dense.getElementType())) {
    APFloat v = dense.getSplatValue<APFloat>();
    if (v.isPosZero()) {
      // Reuse the neutral-shape check with an equivalent "-0.0 for add" test.
      auto negZero = DenseElementsAttr::get(
          cast<ShapedType>(dense.getType()),
          APFloat::getZero(v.getSemantics(), /*Negative=*/true));
      if (isNeutral(negZero, getSelf(), getOther(), getType(), 0))
        return getSelf();
    }
    return {};
  }
  if (isNeutral(adaptor.getOther(), getSelf(), getOther(), getType(), 0))
    return getSelf();
  return {};
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Attribute r = foldBinarySplat(
          adaptor.getSelf(), adaptor.getOther(), getType(),
          [](APFloat &x, const APFloat &y) {
            x.multiply(y, APFloat::rmNearestTiesToEven);
          },
          [](const APInt &x, const APInt &y) { return x * y; }))
    return r;
  if (isNeutral(adaptor.getOther(), getSelf(), getOther(), getType(), 1))
    return getSelf();
  if (isNeutral(adaptor.getSelf(), getOther(), getSelf(), getType(), 1))
    return getOther();
  return {};
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getSelf().getDefiningOp<NegOp>())
    return inner.getSelf();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getSelf());
  auto rt = cast<RankedTensorType>(getType());
  if (!dense || !dense.isSplat() || !rt.hasStaticShape())
    return {};
  if (isa<FloatType>(dense.getElementType())) {
    APFloat v = dense.getSplatValue<APFloat>();
    v.changeSign();
    return DenseElementsAttr::get(rt, v);
  }
  APInt v = dense.getSplatValue<APInt>();
  return DenseElementsAttr::get(rt, -v);
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getSelf().getType() == getType())
    return getSelf();
  return {};
}
