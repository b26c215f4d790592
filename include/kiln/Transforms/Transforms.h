//===- Transforms.h - Capture-level transformations -------------*- C++ -*-===//
//
// Part of Kiln. The library functions behind the capture-level passes, public
// so that the runtime, the C API and tools can call them without a pass
// manager. Each pass in Passes.td is a thin driver over one of these.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_TRANSFORMS_H
#define KILN_TRANSFORMS_TRANSFORMS_H

#include "kiln/Dialect/KG/IR/KGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

//===----------------------------------------------------------------------===//
// disallow_in_graph: kiln-split-graphs
//===----------------------------------------------------------------------===//

/// Checks that every entry of `names` is an op that can appear in a graph (a
/// registered op that is not host-only, see kg::isAllowedInGraph). On failure
/// emits one error per bad name at `loc` and returns failure.
mlir::LogicalResult verifyDisallowList(mlir::MLIRContext *ctx,
                                       llvm::ArrayRef<std::string> names,
                                       mlir::Location loc);

/// The pieces an inline graph was split into, in program order.
struct SplitGraphResult {
  /// The graphs holding the ops between disallowed ops (empty runs give no
  /// graph).
  llvm::SmallVector<kg::GraphOp> graphs;
  /// One `kg.break "disallowed op <name>"` per disallowed op.
  llvm::SmallVector<kg::BreakOp> breaks;
};

/// Splits the inline graph `graph` at every op of its body (top level) for
/// which `isDisallowed` holds: the ops before form one graph, the disallowed
/// op moves into a kg.break (with the op's location), the ops after form the
/// next graph. Values crossing become graph results and operands. The first
/// piece keeps the graph's callee name; the others get names made unique
/// with `usedNames` (`@g0_1`, `@g0_2`, ...), which is updated. Returns
/// failure (with an error) for an outlined graph or a disallowed op nested in
/// a region of another op. If nothing is disallowed the graph is left alone
/// and the result holds just `graph`. `graph` is erased when split.
mlir::FailureOr<SplitGraphResult>
splitGraphAt(kg::GraphOp graph,
             llvm::function_ref<bool(mlir::Operation *)> isDisallowed,
             llvm::StringSet<> &usedNames);

/// As above, with the names in use taken from the enclosing module.
mlir::FailureOr<SplitGraphResult>
splitGraphAt(kg::GraphOp graph,
             llvm::function_ref<bool(mlir::Operation *)> isDisallowed);

/// Splits every inline graph under `module` at ops whose names are in
/// `disallow`. Ops in graph functions (outlined graphs) are not split: a
/// disallowed op there is an error. Returns the number of breaks made.
mlir::FailureOr<unsigned> splitGraphs(mlir::ModuleOp module,
                                      llvm::ArrayRef<std::string> disallow);

/// Every symbol name and kg.graph callee name under `module`.
llvm::StringSet<> collectGraphNames(mlir::ModuleOp module);

/// Returns `base` if not in `used`, else `base_1`, `base_2`, ...; inserts the
/// result into `used`.
std::string makeUniqueName(llvm::StringRef base, llvm::StringSet<> &used);

//===----------------------------------------------------------------------===//
// allow_in_graph: kiln-inline-allowed
//===----------------------------------------------------------------------===//

/// Unit attribute marking a func.func as allow_in_graph: calls to it stay
/// opaque at capture level.
inline constexpr llvm::StringLiteral kAllowInGraphAttr = "kg.allow_in_graph";

/// Inlines (traces through) `call`, whose callee must be a single-block
/// func.func: its ops are cloned before the call with the callee's arguments
/// mapped to the call's operands, and each cloned op's location becomes
/// CallSiteLoc(callee op location, call location). Returns the cloned ops
/// (top level) and erases the call. Fails (with an error at the call) for a
/// missing callee, a declaration or a multi-block body.
mlir::FailureOr<llvm::SmallVector<mlir::Operation *>>
inlineCall(mlir::func::CallOp call, mlir::SymbolTable &symbols);

/// Inlines every call, inside a graph (an inline kg.graph region or a graph
/// function), to a func.func marked `kg.allow_in_graph`, repeatedly (an
/// allowed function may call another). Afterwards erases inlined callees that
/// are private and have no use left. Returns the number of calls inlined.
mlir::FailureOr<unsigned> inlineAllowedCalls(mlir::ModuleOp module);

//===----------------------------------------------------------------------===//
// fullgraph=True: kiln-check-fullgraph
//===----------------------------------------------------------------------===//

/// Calls `fn(op, reason)` for each graph break under `root`, in program
/// order: every kg.break (with its reason), and every kg.to_host, where data
/// leaves the graphs for the host: "generic_jump" when its value decides host
/// control flow (TorchDynamo's data-dependent jump, e.g. `if x.sum() < 0`),
/// else "Tensor.item()".
void forEachGraphBreak(
    mlir::Operation *root,
    llvm::function_ref<void(mlir::Operation *op, llvm::StringRef reason)> fn);

/// Emits "graph break in @<program>: <reason>" at the location of every
/// graph break under `module` (see forEachGraphBreak); fails if there was
/// any.
mlir::LogicalResult checkFullgraph(mlir::ModuleOp module);

//===----------------------------------------------------------------------===//
// explain(): kiln-explain
//===----------------------------------------------------------------------===//

/// What torch._dynamo.explain() reports, for one kg.program.
struct ExplainReport {
  struct Break {
    std::string reason;
    /// The source frames of the break, innermost first (file:line:col).
    llvm::SmallVector<std::string> stack;
  };
  struct Graph {
    std::string name;
    /// Names of the kt ops of the graph, in order.
    llvm::SmallVector<std::string> ops;
  };
  std::string program;
  llvm::SmallVector<Graph> graphs;
  llvm::SmallVector<Break> breaks;
  /// Number of kt ops in all graphs.
  unsigned opCount = 0;
};

/// Builds the report for `program`. Outlined graphs are looked up in the
/// enclosing module.
ExplainReport explainProgram(kg::ProgramOp program);

/// Prints `report` as text ("Graph Count: 3", ...).
void printExplainReport(const ExplainReport &report, llvm::raw_ostream &os);

/// Keeps in `module` only the func.func `entries` (each must have a body)
/// and the functions they reference, transitively; every other op of the
/// module (kg.programs, unused functions) is erased. What a backend
/// compiles.
mlir::LogicalResult pruneToEntries(mlir::ModuleOp module,
                                   llvm::ArrayRef<std::string> entries,
                                   std::string &error);

/// Source frames of `loc`, innermost first: a FileLineColLoc gives
/// "file:line:col", a CallSiteLoc its callee's frames then its caller's, a
/// NameLoc its child's (or the name), a FusedLoc its first known frames.
llvm::SmallVector<std::string> formatLocationStack(mlir::Location loc);

//===----------------------------------------------------------------------===//
// Outlining: kiln-outline-graphs, kiln-inline-graphs
//===----------------------------------------------------------------------===//

/// Moves the region of the inline graph `graph` into a new private func.func
/// (attribute `kg.graph_function`) named by the graph's callee, made unique
/// in `symbols` if taken, placed before the graph's top-level enclosing op;
/// the graph becomes the outlined form calling it. Locations and attributes
/// of the moved ops are kept.
mlir::FailureOr<mlir::func::FuncOp> outlineGraph(kg::GraphOp graph,
                                                 mlir::SymbolTable &symbols);

/// The reverse of outlineGraph: copies the body of the graph function called
/// by the outlined `graph` into its region (func.return becomes kg.yield).
/// The function is left in place; see inlineGraphs.
mlir::LogicalResult inlineGraph(kg::GraphOp graph, mlir::SymbolTable &symbols);

/// Unit attribute of a kg.graph whose results depend only on constant
/// arguments (kiln-hoist-constants): the runtime keeps its results across
/// calls until the constant memory changes.
inline constexpr llvm::StringLiteral kConstantGraphAttr = "kg.constant_graph";

/// kiln-hoist-constants: in each outlined graph of `program` called once,
/// the kt ops computed from the program arguments `constantArgs` alone
/// (refs excluded; literals such as kt.full may join; no op whose result is
/// larger than its largest operand) move into a new graph function
/// `<graph>_constant` (inserted in `symbols`), called by a kg.graph marked
/// kConstantGraphAttr right before the graph, whose results the graph
/// function takes as extra trailing arguments. Returns how many graphs were
/// split.
mlir::FailureOr<unsigned>
hoistConstantGraphs(kg::ProgramOp program,
                    llvm::ArrayRef<unsigned> constantArgs,
                    mlir::SymbolTable &symbols);

/// Outlines every inline graph under `module`. Returns how many.
mlir::FailureOr<unsigned> outlineGraphs(mlir::ModuleOp module);

/// Inlines every outlined graph under `module`, then erases the private graph
/// functions left without a use. Returns how many graphs were inlined.
mlir::FailureOr<unsigned> inlineGraphs(mlir::ModuleOp module);

//===----------------------------------------------------------------------===//
// AOTAutograd for kg.grad: kiln-aot-autograd
//===----------------------------------------------------------------------===//

/// The partition policies of kiln-aot-autograd: `none` (call the joint
/// function: the eager rung) or one of kiln-partition's.
inline constexpr llvm::StringLiteral kPartitionPolicies[] = {
    "none", "save-all", "recompute-all", "mincut"};

/// Emits an error at `loc` and fails unless `policy` is one of
/// kPartitionPolicies.
mlir::LogicalResult verifyPartitionPolicy(llvm::StringRef policy,
                                          mlir::Location loc);

struct AOTAutogradOptions {
  /// `none`, `save-all`, `recompute-all` or `mincut`.
  std::string partition = "none";
  /// kiln-partition's memory budget for `mincut` (1 = the min-cut, 0 =
  /// recompute-all).
  double memoryBudget = 1.0;
  /// Emit kiln-partition's report as a remark per partitioned graph.
  bool report = false;
  /// Fold relu / relu6 gradient masks into kt.batch_norm_backward in the
  /// joint (autodiff::foldNormActivationMasks; kiln-autodiff's option).
  bool foldNormActivation = true;
  /// kiln-partition's passPrimals: a saved primal is not a forward result;
  /// the backward call takes the forward graph's input itself (the forward
  /// lists them in `kg.saved_primals`). An error with partition `none`.
  bool passPrimals = false;
};

/// Replaces `grad` with graph calls. The graph computing its loss is
/// outlined if it is inline; its function `@g` is differentiated with
/// respect to the graph inputs named by `grad` (kiln::autodiff), the loss's
/// cotangent seeded with 1, giving
/// `@g_joint(inputs...) -> (outputs..., gradients in wrt order...)`. With
/// partition `none` the graph becomes a call of `@g_joint` and the kg.grad's
/// results its gradients; otherwise the joint is partitioned into
/// `@g_fwd(inputs...) -> (outputs..., saved...)`, called in place of the
/// graph, and `@g_bwd(saved...) -> (gradients...)`, called in place of the
/// kg.grad. `@g` is erased when it is private and left unused. Fails with an
/// error at the op that cannot be differentiated, or at `grad` when another
/// kg.grad differentiates the same graph.
mlir::LogicalResult lowerGrad(kg::GradOp grad,
                              const AOTAutogradOptions &options);

/// lowerGrad on every kg.grad under `module`, in program order; stops at the
/// first failure.
mlir::LogicalResult lowerGrads(mlir::ModuleOp module,
                               const AOTAutogradOptions &options);

} // namespace kiln

#endif // KILN_TRANSFORMS_TRANSFORMS_H
