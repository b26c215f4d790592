//===- KTReductionOps.cpp - kt Reduction ops ------------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTReductionOps.td.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln::kt;

namespace kiln::kt {

/// Result type of a reduction over the optional dim list `dimAttr` (absent or
/// empty: all dims). `elemRule`: 0 = operand element type, 1 = i64 for
/// integer/i1 operands, 2 = i1, 3 = i64.
LogicalResult inferReduction(MLIRContext *ctx, std::optional<Location> loc,
                             StringRef opName, Type selfType, ArrayAttr dimAttr,
                             bool keepdim, int elemRule,
                             SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(selfType);
  int64_t rank = t.getRank();
  SmallVector<int64_t> dims;
  if (dimAttr && !dimAttr.empty()) {
    FailureOr<SmallVector<int64_t>> n =
        normalizeDims(getI64Array(dimAttr), rank, loc, opName);
    if (failed(n))
      return failure();
    dims = *n;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
  }
  Type elem = t.getElementType();
  switch (elemRule) {
  case 1:
    if (isa<IntegerType>(elem))
      elem = IntegerType::get(ctx, 64);
    break;
  case 2:
    elem = IntegerType::get(ctx, 1);
    break;
  case 3:
    elem = IntegerType::get(ctx, 64);
    break;
  default:
    break;
  }
  types.push_back(
      RankedTensorType::get(reducedShape(t.getShape(), dims, keepdim), elem));
  return success();
}

/// Result type of the cumulative scans (cumsum, cumprod, logcumsumexp): the
/// operand's type, once `dim` is in range.
LogicalResult inferCumulative(std::optional<Location> loc, StringRef opName,
                              Type selfType, int64_t dim,
                              SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(selfType);
  if (failed(normalizeDim(dim, t.getRank(), loc, opName)))
    return failure();
  types.push_back(t);
  return success();
}

/// Result type of argsort: the operand's shape with element type i64, once
/// `dim` is in range.
LogicalResult inferArgsort(MLIRContext *ctx, std::optional<Location> loc,
                           StringRef opName, Type selfType, int64_t dim,
                           SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(selfType);
  if (failed(normalizeDim(dim, t.getRank(), loc, opName)))
    return failure();
  types.push_back(RankedTensorType::get(t.getShape(), IntegerType::get(ctx, 64)));
  return success();
}

/// Result type of searchsorted: i64 of the values' shape, once the sequence
/// has rank >= 1, the dtypes agree and an N-D sequence's leading dims match
/// the values' (static sizes; `?` at run time).
LogicalResult inferSearchsorted(MLIRContext *ctx, std::optional<Location> loc,
                                StringRef opName, Type seqType, Type valType,
                                SmallVectorImpl<Type> &types) {
  auto s = cast<RankedTensorType>(seqType);
  auto v = cast<RankedTensorType>(valType);
  if (s.getRank() == 0)
    return emitKTError(loc, opName,
                       "sorted_sequence must have rank >= 1, got rank 0");
  if (s.getElementType() != v.getElementType())
    return emitKTError(loc, opName, "sorted_sequence has element type ",
                       s.getElementType(), " but values has ",
                       v.getElementType(), " (they must be equal)");
  if (s.getRank() > 1) {
    if (v.getRank() != s.getRank())
      return emitKTError(loc, opName, "values has rank ", v.getRank(),
                         " but an N-D sorted_sequence has rank ", s.getRank(),
                         " (they must be equal)");
    for (int64_t k = 0; k + 1 < s.getRank(); ++k) {
      int64_t a = s.getDimSize(k), b = v.getDimSize(k);
      if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
        return emitKTError(loc, opName, "leading dim ", k,
                           " of sorted_sequence is ", a, " but of values ", b,
                           " (they must be equal)");
    }
  }
  types.push_back(RankedTensorType::get(v.getShape(), IntegerType::get(ctx, 64)));
  return success();
}

/// Result type of argmax/argmin over the optional single dim.
LogicalResult inferArgReduction(MLIRContext *ctx, std::optional<Location> loc,
                                StringRef opName, Type selfType,
                                IntegerAttr dimAttr, bool keepdim,
                                SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(selfType);
  int64_t rank = t.getRank();
  Type i64 = IntegerType::get(ctx, 64);
  if (!dimAttr) {
    SmallVector<int64_t> shape;
    if (keepdim)
      shape.assign(rank, 1);
    types.push_back(RankedTensorType::get(shape, i64));
    return success();
  }
  FailureOr<int64_t> d = normalizeDim(dimAttr.getInt(), rank, loc, opName);
  if (failed(d))
    return failure();
  SmallVector<int64_t> dims;
  if (rank > 0)
    dims.push_back(*d);
  types.push_back(
      RankedTensorType::get(reducedShape(t.getShape(), dims, keepdim), i64));
  return success();
}

/// Result type of nonzero: `?xR` of i64 for a rank-R operand (the count is
/// only known at run time).
LogicalResult inferNonzero(MLIRContext *ctx, Type selfType,
                           SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(selfType);
  types.push_back(RankedTensorType::get({ShapedType::kDynamic, t.getRank()},
                                        IntegerType::get(ctx, 64)));
  return success();
}


/// Result type of bincount: `?` of i64, or of the weights' type (the length
/// is only known at run time).
LogicalResult inferBincount(MLIRContext *ctx, std::optional<Location> loc,
                            StringRef opName, Type selfType, Type weightsType,
                            int64_t minlength, SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(selfType);
  if (t.getRank() != 1)
    return emitKTError(loc, opName, "self must have rank 1, got rank ",
                       t.getRank());
  Type elem = IntegerType::get(ctx, 64);
  if (weightsType) {
    auto w = cast<RankedTensorType>(weightsType);
    if (w.getRank() != 1)
      return emitKTError(loc, opName, "weights must have rank 1, got rank ",
                         w.getRank());
    int64_t a = t.getDimSize(0), b = w.getDimSize(0);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitKTError(loc, opName, "weights have length ", b,
                         " but self has length ", a, " (they must be equal)");
    elem = w.getElementType();
  }
  if (minlength < 0)
    return emitKTError(loc, opName, "minlength must be >= 0, got ", minlength);
  types.push_back(RankedTensorType::get({ShapedType::kDynamic}, elem));
  return success();
}

} // namespace kiln::kt

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTReductionOps.cpp.inc"
