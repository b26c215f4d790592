//===- Decompose.h - Decompositions of composite kt ops ---------*- C++ -*-===//
//
// Part of Kiln. The DecomposableOpInterface (see DecomposeInterface.td), the
// registration of its kt models, and the driver used by `kiln-decompose`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DECOMPOSE_DECOMPOSE_H
#define KILN_DECOMPOSE_DECOMPOSE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "llvm/ADT/DenseSet.h"

#include "kiln/Decompose/DecomposeInterface.h.inc"

namespace kiln::decompose {

/// Attaches the decompositions of kt ops (one file per op family in
/// lib/Decompose). Call before creating the context (or append to its
/// registry).
void registerDecompositions(mlir::DialectRegistry &registry);

/// Resolves op names (e.g. "kt.softmax") of ops to keep. Every name must be a
/// registered op with a decomposition; otherwise an error naming each bad
/// name is emitted at `loc` and failure returned.
llvm::LogicalResult
resolveKeepList(mlir::MLIRContext *ctx, mlir::Location loc,
                llvm::ArrayRef<std::string> names,
                llvm::DenseSet<mlir::OperationName> &keep);

/// Expands every decomposable op under `root` (not `root` itself) whose name
/// is not in `keep`, repeatedly, until only ops without a decomposition or
/// kept ops remain. Each expansion is built at the op's location. Fails (with
/// the error of the decomposition) if one fails, or if expansions do not
/// terminate within a fixed number of rounds.
llvm::LogicalResult
decomposeOps(mlir::Operation *root,
             const llvm::DenseSet<mlir::OperationName> &keep);

/// Expands the decomposable ops under `root` (not `root` itself) for which
/// `expand` holds, once: what their expansions emit is left as it is (e.g.
/// the `kt.softmax` of an expanded `kt.scaled_dot_product_attention`).
llvm::LogicalResult
decomposeOpsIf(mlir::Operation *root,
               llvm::function_ref<bool(mlir::Operation *)> expand);

/// Folds each inference `kt.batch_norm` whose input is a batched f32/f64
/// `kt.conv2d` read by nothing else, with no more weight elements than
/// output elements (`?` dims count 1), into that conv: the conv's weight is
/// scaled per output channel by `weight * rsqrt(running_var + eps)` and the
/// shift becomes its bias (kt ops built before the batch_norm; the conv
/// keeps its location and attributes). Returns how many were folded.
unsigned foldConvBatchNorm(mlir::Operation *root);

/// Checks that every registered kt op of kind `composite` has a
/// decomposition; emits an error at `loc` naming each one that lacks it.
llvm::LogicalResult checkCompositesDecomposable(mlir::MLIRContext *ctx,
                                                mlir::Location loc);

/// The names of the registered ops that have a decomposition, sorted.
llvm::SmallVector<llvm::StringRef>
decomposableOpNames(mlir::MLIRContext *ctx);

} // namespace kiln::decompose

#endif // KILN_DECOMPOSE_DECOMPOSE_H
