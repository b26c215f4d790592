//===- Utils.h - Helpers shared by the kt-to-linalg patterns ----*- C++ -*-===//
//
// Part of Kiln. Internal to lib/Conversion/KTToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KTTOLINALG_UTILS_H
#define KILN_LIB_CONVERSION_KTTOLINALG_UTILS_H

#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTTypeInference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::lowering {

using BodyFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                              mlir::ValueRange)>;


/// `v` as an index value (an arith.constant when it is an attribute).
mlir::Value indexValue(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::OpFoldResult v);
/// An index arith.constant.
mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// The size of dim `d` of `x` (1 for rank 0) as an index value (from
/// getSizes: a constant, or tensor.dim for a `?`).
mlir::Value dimSize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    int64_t d);

/// The sizes of `v` (a ranked tensor) as OpFoldResults (tensor.dim for `?`).
llvm::SmallVector<mlir::OpFoldResult>
getSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
/// `tensor.empty` of `type` whose dynamic sizes are taken from `sizes`.
mlir::Value emptyLike(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type,
                      llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// The sizes of the broadcast result `type` of `operands` (NumPy rules,
/// right-aligned). A `?` result dim takes the first operand with a `?` there
/// (dynamic dims are assumed not to broadcast) or a static non-1 size.
llvm::SmallVector<mlir::OpFoldResult>
broadcastSizes(mlir::OpBuilder &b, mlir::Location loc,
               mlir::ValueRange operands, mlir::RankedTensorType type);

/// The indexing map reading `operand` inside an iteration space of rank
/// `rank` whose trailing dims it is broadcast to: static size-1 dims where
/// the result is not static 1 read index 0.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx,
                             mlir::RankedTensorType operand,
                             llvm::ArrayRef<int64_t> resultShape);

/// A pointwise linalg.generic over the broadcast of `operands` into a fresh
/// tensor of `resultType`; `body` gets the operand scalars and returns the
/// result scalar.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange operands,
                             mlir::RankedTensorType resultType, BodyFn body);

/// `operand` broadcast (copied) to `resultType` with sizes `sizes`.
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value operand, mlir::RankedTensorType resultType,
                        llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// True for f16 and bf16 (computed in f32).
bool isHalf(mlir::Type t);
/// True for uint8 (`ui8`): integer ops on it use arith's unsigned forms
/// (the type itself is made signless after lowering: eraseIntegerSignedness).
bool isUnsignedInt(mlir::Type t);
/// The type a float op computes in: f32 for f16/bf16, else `t`.
mlir::Type computeType(mlir::Type t);
/// The type sums and products over float data accumulate in: f64 for every
/// float type (the kt dialect's accumulation rule: a reduction accumulates
/// in double and rounds once to its result type), else `t`.
mlir::Type accumulatorType(mlir::Type t);
/// The f64 `v` rounded to the float type `elem` as the interpreter stores
/// a double (f16/bf16 through f32).
mlir::Value roundFromF64(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         mlir::Type elem);
/// Scalar conversion with PyTorch `.to(dtype)` semantics.
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                          mlir::Type to);
/// A scalar constant of type `t` holding `v` (truncated for integers,
/// `v != 0` for i1).
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type t,
                        double v);
/// `v != 0` as i1 (NaN is true).
mlir::Value toBool(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// `v` with each `?` dim that is 1 at run time, where the result
/// (`resultShape` / `sizes`, right-aligned) is not, broadcast by a copy
/// under an scf.if; `v` itself when it has no such dim. Indexing maps
/// broadcast only static size-1 dims; buildElementwise and broadcastTo call
/// this for every operand.
mlir::Value broadcastDynamicDims(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value v,
                                 llvm::ArrayRef<int64_t> resultShape,
                                 llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// A tensor filled with `value` of type `type` and sizes `sizes`.
mlir::Value filled(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::RankedTensorType type,
                   llvm::ArrayRef<mlir::OpFoldResult> sizes, mlir::Value value);

/// `v` with size-1 dims inserted at the positions `unitDims` (sorted, of the
/// result) of `type` (tensor.expand_shape).
mlir::Value insertUnitDims(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v, mlir::RankedTensorType type,
                           llvm::ArrayRef<int64_t> unitDims);
/// Casts `v` to `type` with tensor.cast when the static info differs.
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                   mlir::Type type);

/// `v` converted elementwise (convertScalar) to element type `elem`.
mlir::Value convertTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                          mlir::Type elem);

/// Registers a run-time error of `op` with message `text` (may use {0} ...
/// {7} for the reported values) in the module's kiln.runtime_errors and
/// declares the error function; returns the message id (the same text at
/// the same location shares one id; see
/// kiln/Conversion/KTToLinalg/RuntimeChecks.h).
int64_t registerRuntimeError(mlir::RewriterBase &rw, mlir::Operation *op,
                             llvm::StringRef text);
/// The same at location `loc`, in the module around `b`'s insertion point.
int64_t registerRuntimeError(mlir::OpBuilder &b, mlir::Location loc,
                             llvm::StringRef text);
/// Where the i1 `failed` is true, reports error `id` with `values` (at most
/// kRuntimeErrorValues integers or indices; null for 0). The caller
/// continues with a safe value.
void emitRuntimeCheck(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value failed, int64_t id, mlir::ValueRange values);
void emitRuntimeCheck(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value failed, int64_t id, mlir::Value a,
                      mlir::Value bv);
/// registerRuntimeError + emitRuntimeCheck, unless `failed` is the constant
/// false (then nothing is emitted or registered). True when it emitted.
bool checkAtRunTime(mlir::OpBuilder &b, mlir::Location loc, mlir::Value failed,
                    llvm::StringRef text, mlir::ValueRange values);
/// A message template for a shape: static sizes (and `?` sizes that fold to
/// constants) as numbers, the others as {k}, appending their values to
/// `values` ("?" once kRuntimeErrorValues are used). The interpreter's
/// shapes print as "[2, 3]" (the defaults); "2x3" is `sep` "x", no brackets.
std::string shapeTemplate(llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<mlir::OpFoldResult> sizes,
                          llvm::SmallVectorImpl<mlir::Value> &values,
                          llvm::StringRef sep = ", ",
                          llvm::StringRef open = "[",
                          llvm::StringRef close = "]");
/// The interpreter's check of a result against its type: reports
/// "result #`index` at run time: expected <type>, got ..." when a static dim
/// of `type` differs from the run-time `sizes`.
void checkResultShape(mlir::OpBuilder &b, mlir::Location loc, unsigned index,
                      mlir::RankedTensorType type,
                      llvm::ArrayRef<mlir::OpFoldResult> sizes);
/// The interpreter's run-time broadcast of `operands` (PyTorch's rule: equal
/// or 1, right-aligned): reports "operands are not broadcast-compatible at
/// run time: dim J is R vs D (operand #K)" for the first operand (then dim)
/// that fails, where R is the broadcast of the operands before it; then the
/// broadcast shape against `resultType`'s static dims (checkResultShape).
void checkBroadcastCompatible(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::ValueRange operands,
                              mlir::RankedTensorType resultType);
/// `v`, or where `failed` (a failed run-time check) is true, a zero-filled
/// tensor of `sizes`: the safe operand the lowering goes on with. The type
/// keeps the static dims of `v` that `sizes` agrees with (else `?`); `v`
/// itself when `failed` is null or the constant false.
mlir::Value safeOperand(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        mlir::Value failed,
                        llvm::ArrayRef<mlir::OpFoldResult> sizes);
/// The sizes of a creation op's result (`size` with each -1 taken from the
/// next of `dynamicSizes`), with the interpreter's run-time checks: a
/// negative dynamic size, a dynamic size other than the result type's
/// static one. The sizes returned are safe (non-negative, the type's).
llvm::SmallVector<mlir::OpFoldResult>
checkCreationSizes(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::RankedTensorType type, mlir::ArrayAttr sizeAttr,
                   mlir::ValueRange dynamicSizes);
/// `x pred y` on index values, folded to a constant when both are constants
/// (or the same value for eq/ne).
mlir::Value indexCmp(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::arith::CmpIPredicate pred, mlir::OpFoldResult x,
                     mlir::OpFoldResult y);
/// i1 or / and, folding constant operands (a null `x` for or is false).
mlir::Value boolOr(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   mlir::Value y);
mlir::Value boolAnd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    mlir::Value y);

/// stack, gather, index_select, embedding (Index.cpp).
void populateKTIndexToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// layer_norm, batch_norm, scaled_dot_product_attention (Norm.cpp).
void populateKTNormToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                    const KTToLinalgOptions &options);
/// conv2d, max_pool2d, avg_pool2d (Convolution.cpp).
void populateKTConvolutionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// nll_loss, cross_entropy (Loss.cpp).
void populateKTLossToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                    const KTToLinalgOptions &options);
/// rand, randn, dropout (Random.cpp).
void populateKTRandomToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KTTOLINALG_UTILS_H
