//===- FormKernels.h - One kernel per kt.fusion -----------------*- C++ -*-===//
//
// Part of Kiln. Kernel formation at the linalg-on-tensors level: after
// kiln-lower-to-linalg has lowered the body of each kt.fusion, its linalg ops
// are fused (elementwise producers into consumers), the group's root is tiled
// along its outer parallel dims with scf.forall and the remaining producers
// are fused into the tile; the forall gets `kiln.kernel = "<name>"` and the
// kt.fusion is inlined away. See docs/codegen.md, "Fusion".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KTFUSIONTOLINALG_FORMKERNELS_H
#define KILN_CONVERSION_KTFUSIONTOLINALG_FORMKERNELS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace kiln {

struct KernelFormationOptions {
  /// Tile size of the innermost outer parallel dim (rows per tile).
  int64_t tileRows = 16;
  /// Tile size of a 1-D pointwise root.
  int64_t tileElements = 1024;
  /// Test only (default off): restores the defect fixed in 0780d11 (issue
  /// 14 #5): a group result that folds to a group input is replaced by the
  /// block argument that inlining erases (use after free, a crash). It
  /// exists so that kiln-reduce's tests can minify a real crash
  /// (test/Tools/kiln-reduce/form-kernels-crash.test).
  bool testRestoreFoldedResultCrash = false;
};

/// The attribute naming a kernel's scf.forall.
inline constexpr llvm::StringLiteral kKernelAttrName = "kiln.kernel";

/// Forms one kernel from every kt.fusion under `root` and removes the
/// kt.fusion ops (their bodies are inlined in place). A body that still holds
/// kt ops (not lowered) is inlined without forming a kernel.
llvm::LogicalResult formKernels(mlir::Operation *root,
                                const KernelFormationOptions &options);

} // namespace kiln

#endif // KILN_CONVERSION_KTFUSIONTOLINALG_FORMKERNELS_H
