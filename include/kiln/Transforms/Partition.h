//===- Partition.h - Joint graph -> forward and backward --------*- C++ -*-===//
//
// Part of Kiln. The library behind `kiln-partition`: splits a joint function
// built by kiln-autodiff (`kg.joint`) into a forward function returning the
// outputs and the values the backward needs ("saved" values), and a backward
// function from the saved values and the output cotangents to the gradients.
// The policies mirror AOTAutograd's partitioners (torch/_functorch/
// partitioners.py): `save-all` is `default_partition`, `mincut` is
// `min_cut_rematerialization_partition`, `recompute-all` is full activation
// checkpointing. See docs/partition.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PARTITION_H
#define KILN_TRANSFORMS_PARTITION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace kiln::partition {

/// Attributes of the forward function: the number of outputs it returns
/// first, then the number of saved values it returns after them. The
/// backward function carries `kg.num_saved` too (its first arguments).
inline constexpr llvm::StringLiteral kNumOutputsAttr = "kg.num_outputs";
inline constexpr llvm::StringLiteral kNumSavedAttr = "kg.num_saved";
/// With `PartitionOptions::passPrimals`: an `array<i64>` attribute of the
/// forward function listing the primals (argument numbers) that are saved
/// values but not forward results: the caller passes these arguments
/// themselves as the backward's first saved arguments, in this order; the
/// forward's `kg.num_saved` results are the backward's next saved arguments.
inline constexpr llvm::StringLiteral kSavedPrimalsAttr = "kg.saved_primals";
/// A unit attribute on a joint (or source) function's argument: the caller
/// overwrites that argument after the forward (BatchNorm running statistics,
/// an input the graph mutates), so a saved primal there is still returned by
/// the forward (a copy of its value before the write) under `passPrimals`.
inline constexpr llvm::StringLiteral kWrittenAttr = "kg.written";

enum class Policy { MinCut, SaveAll, RecomputeAll };

/// "mincut", "save-all", "recompute-all".
std::optional<Policy> parsePolicy(llvm::StringRef name);
llvm::StringRef stringifyPolicy(Policy policy);

struct PartitionOptions {
  Policy policy = Policy::MinCut;
  /// For `mincut` only: 1 = the min-cut (default), 0 = recompute-all; in
  /// between, the saved bytes are at most `R + F * (M - R)` (M: min-cut
  /// bytes, R: recompute-all bytes), choosing which compute-heavy values to
  /// keep saved by a knapsack on their bytes vs. recompute cost.
  double memoryBudget = 1.0;
  /// Size assumed for every `?` dim when counting bytes.
  int64_t dynamicDimSize = 1024;
  /// Eliminate common subexpressions of the joint first (AOTAutograd's
  /// fx_graph_cse).
  bool cse = true;
  /// Keep the joint function (it is erased by default).
  bool keepJoint = false;
  /// Also solve the cut problem by exhaustive search (when it has at most
  /// `verifyOptimalMaxNodes` free nodes) and fail when its optimum differs
  /// from the min-cut's.
  bool verifyOptimal = false;
  unsigned verifyOptimalMaxNodes = 16;
  /// Saved primals (forward arguments the backward reads) are not forward
  /// results: the forward lists them in `kg.saved_primals` and the caller
  /// passes the arguments to the backward (AOTAutograd saves such inputs
  /// with `ctx.save_for_backward` instead of returning copies). Arguments
  /// marked `kg.written` are still returned.
  bool passPrimals = false;
};

/// What a partition did (the data of the report).
struct PartitionResult {
  mlir::func::FuncOp fwd, bwd;
  Policy policy = Policy::MinCut;
  double memoryBudget = 1.0;
  /// Saved values (fwd results after the outputs), of which primals.
  unsigned numSaved = 0, numSavedPrimals = 0;
  /// With passPrimals: the saved primals passed by the caller (not forward
  /// results), a subset of numSavedPrimals.
  unsigned numPassedPrimals = 0;
  /// Bytes of all saved values, and of those that are not primals.
  int64_t savedBytes = 0, savedActivationBytes = 0;
  /// Whether some saved value has a `?` dim (bytes use dynamicDimSize).
  bool dynamic = false;
  int64_t dynamicDimSize = 1024;
  /// Names of the forward ops computed again in the backward, in order.
  llvm::SmallVector<std::string> recomputedOps;
  /// The minimum cut value (scaled capacities; mincut and recompute-all),
  /// and the exhaustive search's optimum when verifyOptimal ran it.
  std::optional<std::string> cutValue, bruteForceValue;
  /// mincut only: the cut's split saved more bytes than save-all's, which
  /// was used instead.
  bool usedSaveAll = false;
  /// Free nodes of the cut problem (those the exhaustive search enumerates).
  unsigned numFreeNodes = 0;
};

/// What the `kg.joint` attribute of a joint function says.
struct JointInfo {
  unsigned numPrimals = 0, numOutputs = 0, numCotangents = 0,
           numGradients = 0;
  mlir::FlatSymbolRefAttr source;
};

/// Reads and checks `kg.joint` against the signature; errors at the function.
mlir::FailureOr<JointInfo> getJointInfo(mlir::func::FuncOp joint);

/// Bytes of a value of type `type`: elements times element size (bool 1
/// byte; `?` dims count as `dynamicDimSize`); index and integer/float scalars
/// count as their width. Sets `dynamic` when a `?` dim was assumed.
int64_t getTypeBytes(mlir::Type type, int64_t dynamicDimSize,
                     bool *dynamic = nullptr);

/// Rewrites each used `result` of a `kt.batch_norm_train` in `fn` (f32 or
/// f64, static channels) as pointwise ops of its input and statistics,
/// `((x - save_mean) * save_invstd) * weight + bias` (channel views of
/// `[C]`), in the op's own rounding order; the op's normalization is then
/// dead and only its statistics are computed. Run by partitionJoint under
/// mincut, where `kt.batch_norm_train` is pinned (never recomputed): the
/// backward recomputes the cheap normalization from the saved input and
/// the (tiny) saved statistics instead of the whole batch norm. Returns the
/// number of ops rewritten.
unsigned splitBatchNormNormalization(mlir::func::FuncOp fn);

/// Splits `joint` into `@<source>_fwd(primals...) -> (outputs..., saved...)`
/// and `@<source>_bwd(saved..., cotangents...) -> (gradients...)`, inserted
/// after the joint, which is erased unless `options.keepJoint`. Errors (at the
/// function) when it is not a well-formed joint or the names are taken.
mlir::FailureOr<PartitionResult>
partitionJoint(mlir::func::FuncOp joint, const PartitionOptions &options);

/// One line: `policy=mincut saved 3 values (12288 bytes, 4096 of
/// activations), recomputed 2 ops: kt.gelu, kt.mul`.
std::string formatReport(const PartitionResult &result);

} // namespace kiln::partition

#endif // KILN_TRANSFORMS_PARTITION_H
