//===- KTCreationOps.cpp - kt Creation ops --------------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTCreationOps.td.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::kt {

static std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static bool isKTElem(Type t) { return isKTElementType(t); }

/// Result type of full/rand/randn: `size` with -1 as `?`, element `dtype`.
LogicalResult inferSizedCreation(MLIRContext *ctx, std::optional<Location> loc,
                                 StringRef opName, ArrayAttr sizeAttr,
                                 size_t numDynamic, Type dtype,
                                 SmallVectorImpl<Type> &types) {
  bool floatOnly = opName != "kt.full";
  if (!dtype || !isKTElem(dtype) || (floatOnly && !isKTFloat(dtype)))
    return emitKTError(loc, opName, "dtype ", dtype ? typeStr(dtype) : "<null>",
                       floatOnly ? " must be f32, f64, f16 or bf16"
                                 : " is not a kt element type");
  SmallVector<int64_t> shape;
  size_t dyn = 0;
  for (int64_t d : getI64Array(sizeAttr)) {
    if (d < -1)
      return emitKTError(loc, opName, "size entry ", d,
                         " must be >= 0 or -1 (dynamic)");
    if (d == -1) {
      ++dyn;
      shape.push_back(ShapedType::kDynamic);
    } else {
      shape.push_back(d);
    }
  }
  if (dyn != numDynamic)
    return emitKTError(loc, opName, "size has ", dyn,
                       " dynamic (-1) entries but ", numDynamic,
                       " dynamic_sizes operands were given");
  types.push_back(RankedTensorType::get(shape, dtype));
  return success();
}

LogicalResult inferArange(MLIRContext *ctx, std::optional<Location> loc,
                          StringRef opName, double start, double end,
                          double step, Type dtype,
                          SmallVectorImpl<Type> &types) {
  if (!dtype || !isKTElem(dtype) || dtype.isInteger(1))
    return emitKTError(loc, opName, "dtype ", dtype ? typeStr(dtype) : "<null>",
                       " must be a numeric kt element type (not i1)");
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    return emitKTError(loc, opName, "start, end and step must be finite");
  if (step == 0)
    return emitKTError(loc, opName, "step must be nonzero");
  if ((step > 0 && end < start) || (step < 0 && end > start))
    return emitKTError(loc, opName, "end - start (", end - start,
                       ") and step (", step, ") have different signs");
  if (!isKTFloat(dtype) &&
      (start != std::trunc(start) || end != std::trunc(end) ||
       step != std::trunc(step)))
    return emitKTError(loc, opName,
                       "start, end and step must be integral for dtype ",
                       typeStr(dtype));
  double n = std::ceil((end - start) / step);
  if (n > 9.0e15)
    return emitKTError(loc, opName, "length ", n, " is too large");
  types.push_back(RankedTensorType::get({(int64_t)n}, dtype));
  return success();
}

} // namespace kiln::kt

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTCreationOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<ShapedType>(getValue().getType());
  if (!type || type != getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match result type "
           << getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// FullOp
//===----------------------------------------------------------------------===//

LogicalResult FullOp::verify() {
  double v = getValue().convertToDouble();
  Type t = getDtype();
  if (t.isInteger(1)) {
    if (v != 0.0 && v != 1.0)
      return emitOpError("value ") << v << " must be 0 or 1 for dtype i1";
  } else if (isa<IntegerType>(t)) {
    if (!std::isfinite(v) || v != std::trunc(v))
      return emitOpError("value ") << v << " must be integral for dtype " << t;
    unsigned w = t.getIntOrFloatBitWidth();
    bool isUnsigned = t.isUnsignedInteger();
    double lo = isUnsigned ? 0.0 : -std::ldexp(1.0, w - 1);
    double hi = std::ldexp(1.0, isUnsigned ? w : w - 1);
    if (v < lo || v >= hi)
      return emitOpError("value ") << v << " is out of range for dtype " << t;
  } else if (auto ft = dyn_cast<FloatType>(t); ft && std::isfinite(v)) {
    // As torch.full: a finite value must not overflow the dtype.
    APFloat f(v);
    bool lost;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    if (f.isInfinity())
      return emitOpError("value ") << v << " overflows dtype " << t;
  }
  return success();
}
