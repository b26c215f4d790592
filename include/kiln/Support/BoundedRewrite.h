//===- BoundedRewrite.h - Greedy rewriting with a cap that reports -*- C++ -*-===//
//
// Part of Kiln. Some upstream pattern sets undo each other on some IR (e.g.
// tensor.empty's ReplaceEmptyTensorStaticShapeDims and linalg's
// RemoveOutsDependency on a generic whose init is a tensor.cast of an empty):
// the greedy driver then rewrites until its cap, which costs seconds per
// function and stays invisible, since the IR it leaves is still correct.
// applyPatternsBounded caps the rewriting like the driver does and, when the
// cap is reached, emits a warning at the op it was asked to report on, naming
// the patterns that applied most: a compile-time defect that tests (and
// users) see, instead of a silent slowdown.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_BOUNDEDREWRITE_H
#define KILN_SUPPORT_BOUNDEDREWRITE_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

/// The text every non-convergence warning starts with (tests match it).
inline constexpr const char *kNotConvergedMessage =
    "rewriting did not converge";

/// Applies `patterns` greedily to `region` under `config` (its caps on
/// iterations and rewrites; its listener, if any, still gets every
/// notification). When the driver stops without converging, emits a warning
/// at `reportOn`: "<what>: rewriting did not converge after N rewrites (most
/// applied: P (n), Q (m)); the result is correct but compiling took longer
/// than it should: please report it". Returns whether it converged.
mlir::LogicalResult applyPatternsBounded(mlir::Region &region,
                                         const mlir::FrozenRewritePatternSet &patterns,
                                         mlir::GreedyRewriteConfig config,
                                         mlir::Operation *reportOn,
                                         llvm::StringRef what);

/// The same over the regions of `op` (as applyPatternsGreedily(op, ...)).
mlir::LogicalResult applyPatternsBounded(mlir::Operation *op,
                                         const mlir::FrozenRewritePatternSet &patterns,
                                         mlir::GreedyRewriteConfig config,
                                         llvm::StringRef what);

} // namespace kiln

#endif // KILN_SUPPORT_BOUNDEDREWRITE_H
