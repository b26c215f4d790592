//===- KTTypeInference.h - Shape rules shared by kt ops ---------*- C++ -*-===//
//
// Part of Kiln. Helpers used by the verifiers and result-type inference of kt
// ops: dim normalization, NumPy broadcasting, element-type checks, and the
// diagnostics they emit ("'kt.add' op ...").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTTYPEINFERENCE_H
#define KILN_DIALECT_KT_IR_KTTYPEINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace kiln::kt {

/// Emits "'<opName>' op <args...>" at `loc` when a location is given (result
/// type inference runs without one when called from builders) and returns
/// failure.
template <typename... Args>
mlir::LogicalResult emitKTError(std::optional<mlir::Location> loc,
                                llvm::StringRef opName, Args &&...args) {
  if (loc) {
    mlir::InFlightDiagnostic diag = mlir::emitError(*loc);
    diag << "'" << opName << "' op ";
    (diag << ... << std::forward<Args>(args));
  }
  return mlir::failure();
}

/// True when `inferred` and `actual` agree: same count, same element types and
/// ranks, and each dim equal or dynamic on one side (a written type may refine
/// an inferred `?`, or relax a static dim to `?`).
bool isCompatibleInferredTypes(mlir::TypeRange inferred, mlir::TypeRange actual);

/// Normalizes a possibly negative dim against `rank` (PyTorch rules: rank 0
/// accepts -1 and 0). Emits "<what> <dim> is out of range for rank <rank>".
mlir::FailureOr<int64_t> normalizeDim(int64_t dim, int64_t rank,
                                      std::optional<mlir::Location> loc,
                                      llvm::StringRef opName,
                                      llvm::StringRef what = "dim");

/// Normalizes a dim of an op that has already verified (PyTorch rules: a
/// negative dim counts from the end; rank 0 takes -1 and 0). For ops whose dim
/// ranges over rank + 1 positions (unsqueeze, stack), pass rank + 1.
inline int64_t wrapDim(int64_t dim, int64_t rank) {
  int64_t bound = rank > 1 ? rank : 1;
  return dim < 0 ? dim + bound : dim;
}

/// Normalizes a list of dims; rejects repeats ("dim 1 appears twice").
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeDims(llvm::ArrayRef<int64_t> dims, int64_t rank,
              std::optional<mlir::Location> loc, llvm::StringRef opName,
              llvm::StringRef what = "dim");

/// Reads an I64ArrayAttr (a dim list) into a vector.
llvm::SmallVector<int64_t> getI64Array(mlir::ArrayAttr attr);

/// NumPy broadcasting of several shapes. A `?` against 1 stays `?`; a `?`
/// against n becomes n (checked when the op runs). Emits "operands #i and #j
/// are not broadcast-compatible: dim d is X vs Y".
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::SmallVector<int64_t>> shapes,
                std::optional<mlir::Location> loc, llvm::StringRef opName);

/// Checks that every type in `types` is a ranked tensor with the element type
/// of the first; emits "operand #i has element type X but operand #0 has Y
/// (insert kt.cast)".
mlir::LogicalResult checkSameElementType(mlir::TypeRange types,
                                         std::optional<mlir::Location> loc,
                                         llvm::StringRef opName);

/// Formats a shape as "2x?x3" for diagnostics.
std::string shapeToString(llvm::ArrayRef<int64_t> shape);

/// True for f32/f64/f16/bf16.
bool isKTFloat(mlir::Type elementType);
/// True for a kt element type: f32, f64, f16, bf16, i64, i32, i16, i8 (the
/// signless integers, signed in arithmetic), ui8 (unsigned) and i1.
bool isKTElementType(mlir::Type elementType);
/// "f32, f64, f16, bf16, i64, i32, i16, i8, ui8, i1": for messages.
extern const char *const kKTElementTypesText;

/// Shape of the reduction of `shape` over `dims` (normalized, any order).
llvm::SmallVector<int64_t> reducedShape(llvm::ArrayRef<int64_t> shape,
                                        llvm::ArrayRef<int64_t> dims,
                                        bool keepdim);

/// Result type of a broadcasting pointwise op: checks the operands share an
/// element type and broadcast; the result has the broadcast shape and the
/// operands' element type (i1 when `boolResult`).
mlir::LogicalResult
inferBroadcastResult(mlir::MLIRContext *ctx, std::optional<mlir::Location> loc,
                     llvm::StringRef opName, mlir::TypeRange operandTypes,
                     bool boolResult,
                     llvm::SmallVectorImpl<mlir::Type> &inferred);

} // namespace kiln::kt

#endif // KILN_DIALECT_KT_IR_KTTYPEINFERENCE_H
