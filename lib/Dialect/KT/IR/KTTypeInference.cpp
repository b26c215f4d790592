//===- KTTypeInference.cpp - Shape rules shared by kt ops -----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTTypeInference.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;

namespace kiln::kt {

bool isCompatibleInferredTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [l, r] : llvm::zip(inferred, actual)) {
    if (l == r)
      continue;
    auto lt = dyn_cast<RankedTensorType>(l);
    auto rt = dyn_cast<RankedTensorType>(r);
    if (!lt || !rt || lt.getElementType() != rt.getElementType() ||
        lt.getRank() != rt.getRank() || lt.getEncoding() != rt.getEncoding())
      return false;
    for (auto [a, b] : llvm::zip(lt.getShape(), rt.getShape()))
      if (a != b && !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b))
        return false;
  }
  return true;
}

FailureOr<int64_t> normalizeDim(int64_t dim, int64_t rank,
                                std::optional<Location> loc, StringRef opName,
                                StringRef what) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    return emitKTError(loc, opName, what, " ", dim,
                       " is out of range for rank ", rank, " (expected [",
                       -bound, ", ", bound - 1, "])");
  return dim < 0 ? dim + bound : dim;
}

FailureOr<SmallVector<int64_t>> normalizeDims(ArrayRef<int64_t> dims,
                                              int64_t rank,
                                              std::optional<Location> loc,
                                              StringRef opName,
                                              StringRef what) {
  SmallVector<int64_t> result;
  for (int64_t d : dims) {
    FailureOr<int64_t> n = normalizeDim(d, rank, loc, opName, what);
    if (failed(n))
      return failure();
    if (llvm::is_contained(result, *n))
      return emitKTError(loc, opName, what, " ", *n, " appears twice");
    result.push_back(*n);
  }
  return result;
}

SmallVector<int64_t> getI64Array(ArrayAttr attr) {
  SmallVector<int64_t> result;
  if (!attr)
    return result;
  for (Attribute a : attr)
    result.push_back(cast<IntegerAttr>(a).getInt());
  return result;
}

std::string shapeToString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "[] (rank 0)";
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += "x";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s;
}

FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<SmallVector<int64_t>> shapes,
                std::optional<Location> loc, StringRef opName) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> result(rank, 1);
  // Which operand fixed each result dim (for the diagnostic).
  SmallVector<int64_t> source(rank, -1);
  for (auto [i, s] : llvm::enumerate(shapes)) {
    size_t off = rank - s.size();
    for (auto [j, d] : llvm::enumerate(s)) {
      int64_t &r = result[off + j];
      if (d == 1)
        continue;
      if (r == 1) {
        r = d;
        source[off + j] = i;
        continue;
      }
      if (ShapedType::isDynamic(d))
        continue; // r is static n (checked at run time) or already `?`.
      if (ShapedType::isDynamic(r)) {
        r = d;
        source[off + j] = i;
        continue;
      }
      if (r != d)
        return emitKTError(loc, opName, "operands #", source[off + j],
                           " and #", i,
                           " are not broadcast-compatible: result dim ",
                           off + j, " is ", r, " vs ", d, " (shapes ",
                           shapeToString(shapes[source[off + j]]), " and ",
                           shapeToString(s), ")");
    }
  }
  return result;
}

LogicalResult checkSameElementType(TypeRange types, std::optional<Location> loc,
                                   StringRef opName) {
  if (types.empty())
    return success();
  Type first = cast<ShapedType>(types.front()).getElementType();
  for (auto [i, t] : llvm::enumerate(types)) {
    Type e = cast<ShapedType>(t).getElementType();
    if (e != first) {
      std::string a, b;
      llvm::raw_string_ostream(a) << e;
      llvm::raw_string_ostream(b) << first;
      return emitKTError(loc, opName, "operand #", i, " has element type ", a,
                         " but operand #0 has ", b,
                         "; operands must share an element type (insert "
                         "kt.cast)");
    }
  }
  return success();
}

bool isKTFloat(Type t) { return isa<Float32Type, Float64Type, Float16Type, BFloat16Type>(t); }

bool isKTElementType(Type t) {
  if (isKTFloat(t))
    return true;
  auto it = dyn_cast_or_null<IntegerType>(t);
  if (!it)
    return false;
  if (it.isUnsigned())
    return it.getWidth() == 8;
  return it.isSignless() &&
         llvm::is_contained(llvm::ArrayRef<unsigned>{1, 8, 16, 32, 64},
                            it.getWidth());
}

const char *const kKTElementTypesText =
    "f32, f64, f16, bf16, i64, i32, i16, i8, ui8, i1";

SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<int64_t> result;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (llvm::is_contained(dims, (int64_t)i)) {
      if (keepdim)
        result.push_back(1);
      continue;
    }
    result.push_back(d);
  }
  return result;
}

LogicalResult inferBroadcastResult(MLIRContext *ctx, std::optional<Location> loc,
                                   StringRef opName, TypeRange operandTypes,
                                   bool boolResult,
                                   SmallVectorImpl<Type> &inferred) {
  if (failed(checkSameElementType(operandTypes, loc, opName)))
    return failure();
  SmallVector<SmallVector<int64_t>> shapes;
  for (Type t : operandTypes)
    shapes.push_back(llvm::to_vector(cast<ShapedType>(t).getShape()));
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes, loc, opName);
  if (failed(shape))
    return failure();
  Type elem = boolResult ? IntegerType::get(ctx, 1)
                         : cast<ShapedType>(operandTypes.front()).getElementType();
  inferred.push_back(RankedTensorType::get(*shape, elem));
  return success();
}

} // namespace kiln::kt
