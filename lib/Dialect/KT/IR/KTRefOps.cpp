//===- KTRefOps.cpp - kt ops on refs ---------------------------------------===//
//
// Part of Kiln. Verifiers and result-type inference of the ops in
// KTRefOps.td. A view op is verified by the shape rule of its value op
// (KTViewInference.h), run on the ref's tensor type.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Dialect/KT/IR/KTViewInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::kt;

namespace kiln::kt {

/// Result-type inference of view op `ViewOp`: converts its attributes to the
/// properties of `ValueOp` (the same names and types) and runs that op's shape
/// rule on the ref's tensor type; errors name the view op.
template <typename ValueOp, typename ViewOp>
LogicalResult inferView(MLIRContext *ctx, std::optional<Location> loc,
                        StringRef name, typename ViewOp::Adaptor adaptor,
                        SmallVectorImpl<Type> &types) {
  auto ref = dyn_cast<RefType>(adaptor.getSelf().getType());
  if (!ref)
    return emitKTError(loc, name, "operand #0 must be a !kt.ref");
  typename ValueOp::Properties props;
  Attribute attrs = ViewOp::getPropertiesAsAttr(ctx, adaptor.getProperties());
  if (!attrs) // No attribute set: an empty dictionary.
    attrs = DictionaryAttr::get(ctx);
  Location at = loc ? *loc : UnknownLoc::get(ctx);
  if (failed(ValueOp::setPropertiesFromAttr(
          props, attrs, [&] { return mlir::emitError(at); })))
    return failure();
  typename ValueOp::Adaptor valueAdaptor(adaptor.getOperands(), DictionaryAttr(),
                                         props);
  SmallVector<Type> tensorTypes;
  if (failed(inferViewShape(loc, name, ref.getTensorType(), valueAdaptor,
                            tensorTypes)))
    return failure();
  types.push_back(RefType::get(cast<RankedTensorType>(tensorTypes.front())));
  return success();
}

/// Like isCompatibleInferredTypes, for refs: same element type and rank, and
/// each dim equal or `?` on one side.
bool isCompatibleRefTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [l, r] : llvm::zip(inferred, actual)) {
    auto lt = dyn_cast<RefType>(l);
    auto rt = dyn_cast<RefType>(r);
    if (!lt || !rt)
      return false;
    if (!isCompatibleInferredTypes(lt.getTensorType(), rt.getTensorType()))
      return false;
  }
  return true;
}

} // namespace kiln::kt

namespace {

/// True when dims `a` and `b` may be equal (equal, or one is `?`).
bool dimsCompatible(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

/// Checks that `srcType` broadcasts to the shape of the destination ref
/// `dst` without changing it (one-directional NumPy broadcasting) and has
/// its element type.
LogicalResult verifyBroadcastsTo(Operation *op, RefType dst, Type srcType,
                                 StringRef what) {
  auto src = cast<RankedTensorType>(srcType);
  if (src.getElementType() != dst.getElementType())
    return op->emitOpError()
           << what << " has element type " << src.getElementType()
           << " but the destination has " << dst.getElementType()
           << " (insert kt.cast)";
  int64_t sr = src.getRank(), dr = dst.getRank();
  auto fail = [&]() {
    return op->emitOpError()
           << what << " of shape " << shapeToString(src.getShape())
           << " does not broadcast to the destination shape "
           << shapeToString(dst.getShape())
           << " (the destination's shape cannot change)";
  };
  if (sr > dr)
    return fail();
  for (int64_t i = 0; i < sr; ++i) {
    int64_t s = src.getDimSize(sr - 1 - i), d = dst.getDimSize(dr - 1 - i);
    if (s == 1 || dimsCompatible(s, d))
      continue;
    return fail();
  }
  return success();
}

RefType refOf(Value v) { return cast<RefType>(v.getType()); }

} // namespace

//===----------------------------------------------------------------------===//
// load / store / alloc_ref
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       ValueRange operands, DictionaryAttr,
                                       OpaqueProperties, RegionRange,
                                       SmallVectorImpl<Type> &types) {
  auto ref = dyn_cast<RefType>(operands[0].getType());
  if (!ref)
    return emitOptionalError(loc, "'kt.load' op reads a !kt.ref, got ",
                             operands[0].getType());
  types.push_back(ref.getTensorType());
  return success();
}

LogicalResult AllocRefOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  auto value = dyn_cast<RankedTensorType>(operands[0].getType());
  if (!value)
    return emitOptionalError(loc, "'kt.alloc_ref' op takes a ranked tensor, "
                             "got ", operands[0].getType());
  types.push_back(RefType::get(value));
  return success();
}

LogicalResult LoadOp::verify() {
  RankedTensorType expected = refOf(getRef()).getTensorType();
  if (getResult().getType() != expected)
    return emitOpError("result type ")
           << getResult().getType() << " differs from the ref's tensor type "
           << expected;
  return success();
}

LogicalResult StoreOp::verify() {
  RefType ref = refOf(getRef());
  auto value = cast<RankedTensorType>(getValue().getType());
  if (value.getElementType() != ref.getElementType())
    return emitOpError("value has element type ")
           << value.getElementType() << " but the ref has "
           << ref.getElementType() << " (insert kt.cast)";
  bool ok = value.getRank() == ref.getRank();
  for (int64_t i = 0; ok && i < value.getRank(); ++i)
    ok = dimsCompatible(value.getDimSize(i), ref.getDimSize(i));
  if (!ok)
    return emitOpError("value shape ")
           << shapeToString(value.getShape()) << " differs from the ref shape "
           << shapeToString(ref.getShape());
  return success();
}

LogicalResult AllocRefOp::verify() {
  RefType expected =
      RefType::get(cast<RankedTensorType>(getValue().getType()));
  if (getResult().getType() != expected)
    return emitOpError("result type ")
           << getResult().getType() << " differs from " << expected
           << ", the ref type of the initial value";
  return success();
}

//===----------------------------------------------------------------------===//
// In-place ops
//===----------------------------------------------------------------------===//

namespace {
LogicalResult verifyNumericDest(Operation *op, RefType ref) {
  if (ref.getElementType().isSignlessInteger(1))
    return op->emitOpError("destination has element type i1 (expected a "
                           "numeric element type)");
  return success();
}
} // namespace

LogicalResult AddInPlaceOp::verify() {
  if (failed(verifyNumericDest(*this, refOf(getSelf()))))
    return failure();
  return verifyBroadcastsTo(*this, refOf(getSelf()), getOther().getType(),
                            "other");
}
LogicalResult SubInPlaceOp::verify() {
  if (failed(verifyNumericDest(*this, refOf(getSelf()))))
    return failure();
  return verifyBroadcastsTo(*this, refOf(getSelf()), getOther().getType(),
                            "other");
}
LogicalResult MulInPlaceOp::verify() {
  if (failed(verifyNumericDest(*this, refOf(getSelf()))))
    return failure();
  return verifyBroadcastsTo(*this, refOf(getSelf()), getOther().getType(),
                            "other");
}
LogicalResult DivInPlaceOp::verify() {
  RefType ref = refOf(getSelf());
  if (failed(verifyNumericDest(*this, ref)) ||
      failed(verifyBroadcastsTo(*this, ref, getOther().getType(), "other")))
    return failure();
  if (!isKTFloat(ref.getElementType()) && !getRoundingMode())
    return emitOpError("true division needs float operands, got ")
           << ref.getElementType() << ": insert kt.cast or set rounding_mode";
  return success();
}

LogicalResult CopyInPlaceOp::verify() {
  return verifyBroadcastsTo(*this, refOf(getSelf()), getSrc().getType(),
                            "src");
}

LogicalResult ZeroInPlaceOp::verify() { return success(); }

LogicalResult FillInPlaceOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  RefType ref = refOf(getSelf());
  if (value.getRank() != 0)
    return emitOpError("value must be a rank-0 tensor, got rank ")
           << value.getRank();
  if (value.getElementType() != ref.getElementType())
    return emitOpError("value has element type ")
           << value.getElementType() << " but the destination has "
           << ref.getElementType() << " (insert kt.cast)";
  return success();
}

LogicalResult ReluInPlaceOp::verify() {
  return verifyNumericDest(*this, refOf(getSelf()));
}

LogicalResult IndexPutInPlaceOp::verify() {
  RefType ref = refOf(getSelf());
  int64_t k = getIndices().size();
  if (k == 0)
    return emitOpError("needs at least one index tensor");
  if (k > ref.getRank())
    return emitOpError("has ")
           << k << " index tensors but the destination has rank "
           << ref.getRank();
  SmallVector<SmallVector<int64_t>> shapes;
  for (Value i : getIndices())
    shapes.emplace_back(cast<RankedTensorType>(i.getType()).getShape());
  FailureOr<SmallVector<int64_t>> b =
      broadcastShapes(shapes, getLoc(), getOperationName());
  if (failed(b))
    return failure();
  SmallVector<int64_t> target(*b);
  llvm::append_range(target, ref.getShape().drop_front(k));
  RefType targetRef = RefType::get(getContext(), target, ref.getElementType());
  return verifyBroadcastsTo(*this, targetRef, getValues().getType(),
                            "values");
}

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTRefOps.cpp.inc"
