//===- Fusion.h - kiln-fuse: grouping kt ops into kernels -------*- C++ -*-===//
//
// Part of Kiln. The library behind `kiln-fuse`: a greedy, Inductor-style
// fusion planner over the top-level kt ops of a function body, scored by an
// estimate of the bytes each kernel moves, and the materialization of each
// group as a `kt.fusion` region op. See docs/codegen.md, "Fusion".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_FUSION_H
#define KILN_TRANSFORMS_FUSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::fusion {

/// Knobs of the planner.
struct FuseOptions {
  /// Largest group, in kt ops (Inductor's max_fusion_size is 64).
  unsigned maxGroupSize = 64;
  /// The size assumed for a `?` dim when estimating bytes.
  int64_t assumedDimSize = 128;
  /// Whether matmul, linear and conv2d may join groups (else they stay
  /// alone, e.g. to remain OpenBLAS calls).
  bool contractions = true;
};

/// One kernel of a plan: its kt ops, and the bytes it reads and writes.
struct KernelInfo {
  std::string name;
  std::vector<std::string> ops; // op names, in block order
  int64_t bytesRead = 0, bytesWritten = 0;
};

/// What fusing one block did.
struct FusionStats {
  unsigned kernelsBefore = 0, kernelsAfter = 0;
  int64_t bytesBefore = 0, bytesAfter = 0;
  /// The planner's work: candidate pairs scored, cycle checks, and groups
  /// those checks visited (linear in the ops; a compile-time guard).
  unsigned pairsScored = 0, cycleChecks = 0;
  uint64_t cycleVisits = 0;
  /// Every kernel after fusion (groups and ops left alone), in block order.
  std::vector<KernelInfo> kernels;
};

/// The most estimateBytes returns (2^53 - 1 bytes, 8 PiB): a type may name
/// more elements than any machine holds (tensor<4611686018427387904xf32>,
/// more than 2^63 bytes); the estimate saturates instead of overflowing,
/// and the planner's sums of up to 1024 such estimates stay in range.
constexpr int64_t kMaxEstimatedBytes = (int64_t(1) << 53) - 1;

/// Estimated bytes of a ranked tensor value (`?` dims count as
/// `assumedDimSize`; i1 is one byte per element), at most
/// kMaxEstimatedBytes.
int64_t estimateBytes(mlir::Value v, const FuseOptions &options);

/// Groups the top-level kt ops of `block` and wraps every group of two or
/// more ops (and every composite op that lowers to several loops: softmax,
/// log_softmax, layer_norm) in a `kt.fusion` named `<prefix>fused_<ops>_<n>`.
/// Returns the statistics of the plan. Never fails: ops that cannot be fused
/// stay as they are.
FusionStats fuseBlock(mlir::Block &block, const FuseOptions &options,
                      llvm::StringRef namePrefix = "");

/// Prints the report of one function: kernels and bytes before and after,
/// then one line per kernel.
void printFusionReport(llvm::raw_ostream &os, llvm::StringRef function,
                       const FusionStats &stats);

} // namespace kiln::fusion

#endif // KILN_TRANSFORMS_FUSION_H
