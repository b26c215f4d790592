//===- Passes.td - Kiln capture-level passes ---------------*- tablegen -*-===//
//
// Part of Kiln. Passes over kg.program: the IR-level form of the seeds'
// tracing controls (disallow_in_graph, allow_in_graph, fullgraph=True,
// explain()) and graph outlining. Each pass is a thin driver over a function
// of kiln/Transforms/Transforms.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnSplitGraphsPass : Pass<"kiln-split-graphs", "::mlir::ModuleOp"> {
  let summary = "disallow_in_graph: split graphs at disallowed ops into breaks";
  let description = [{
    Every inline `kg.graph` whose body holds an op named in `disallow` is
    split at it: the ops before form one graph, the disallowed op moves into
    a `kg.break "disallowed op <name>"` (run eagerly on the host, with the
    op's location), the ops after form the next graph. Values that cross
    become graph results and operands; program order is kept. The first piece
    keeps the graph's name, later pieces get `<name>_1`, `<name>_2`, ...
    (made unique in the module).

    Naming something that is not a graph op (an unregistered name, or a
    host-only op such as `kg.host_call` or `kg.break`) is an error: to keep a
    function out of graphs, put it in a `kg.break` (`disable`). Only inline
    graphs are split; a disallowed op in a graph function (after
    `kiln-outline-graphs`) is an error.

    Before (`-kiln-split-graphs{disallow=kt.abs}`):

    ```mlir
    %y = kg.graph @f_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      %1 = kt.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
      %2 = kt.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %2 : tensor<4xf32>
    }
    ```

    After:

    ```mlir
    %0 = kg.graph @f_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %n = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %n : tensor<4xf32>
    }
    %1 = kg.break "disallowed op kt.abs" -> tensor<4xf32> {
      %b = kt.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %b : tensor<4xf32>
    }
    %y = kg.graph @f_g0_1(%1) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %e = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %e : tensor<4xf32>
    }
    ```
  }];
  let options = [
    ListOption<"disallow", "disallow", "std::string",
               "Ops to move out of graphs (disallow_in_graph), e.g. kt.abs,kt.exp">
  ];
  let dependentDialects = ["::kiln::kg::KGDialect", "::kiln::kt::KTDialect"];
}

def KilnHoistConstantsPass : Pass<"kiln-hoist-constants", "::mlir::ModuleOp"> {
  let summary = "freezing: compute what depends only on constant arguments once";
  let description = [{
    `args` names program arguments (indices) whose contents the caller
    promises not to change between calls (the session option
    `constant_args`; the Python package's `options={"freezing": True}`
    marks a module's parameters and buffers so, as PyTorch's freezing
    assumes). In each outlined `kg.graph` of a `kg.program` whose graph
    function is called from that one place, the kt ops computed from such
    arguments alone (literals such as `kt.full` may join; refs never count;
    an op whose result has more elements than its largest operand stays, so
    a broadcast still fuses where it is read) move into a new graph function
    `<graph>_constant`, called by a `kg.graph` marked `kg.constant_graph`
    right before the graph; the graph function takes its results as extra
    trailing arguments. The runtime keeps a constant graph's results across
    calls and runs it again only after the constant memory changed
    (docs/runtime.md, "Constant arguments"), e.g. batch norm folded into a
    convolution's weights (`kiln-fold-conv-bn`) is computed once.

    Before (`-kiln-hoist-constants{args=1,2}`):

    ```mlir
    func.func private @p_g0(%x: tensor<4xf32>, %w: tensor<4xf32>,
                            %s: tensor<4xf32>) -> tensor<4xf32>
        attributes {kg.graph_function} {
      %ws = kt.mul %w, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %y = kt.add %x, %ws : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
    kg.program @p(%x: tensor<4xf32>, %w: tensor<4xf32>, %s: tensor<4xf32>)
        -> tensor<4xf32> {
      %0 = kg.graph @p_g0(%x, %w, %s) : (...) -> tensor<4xf32>
      kg.return %0 : tensor<4xf32>
    }
    ```

    After: `@p_g0_constant(%w, %s)` computes `%ws`; the program runs
    `%c = kg.graph @p_g0_constant(%w, %s) {kg.constant_graph}` and then
    `kg.graph @p_g0(%x, %w, %s, %c)`, whose function reads `%c` instead of
    computing `kt.mul`.
  }];
  let options = [
    ListOption<"args", "args", "unsigned",
               "Program argument indices whose contents stay constant">
  ];
  let dependentDialects = ["::kiln::kg::KGDialect", "::kiln::kt::KTDialect"];
}

def KilnInlineAllowedPass : Pass<"kiln-inline-allowed", "::mlir::ModuleOp"> {
  let summary = "allow_in_graph: trace through calls to allowed functions";
  let description = [{
    A `func.call` inside a graph (an inline `kg.graph` region or a graph
    function) whose callee carries the unit attribute `kg.allow_in_graph`
    stays an opaque call at capture level (TorchDynamo treats the function as
    a black box). This pass inlines such calls, as AOT Autograd traces
    through them: the callee's single-block body is cloned at the call, and
    each inlined op's location becomes `callsite(<callee op loc> at <call
    loc>)`, so the inlined frame stays visible. Allowed functions calling
    allowed functions are inlined too. A multi-block callee, a declaration or
    a recursive chain is an error. Callees left without a use are erased when
    private.

    Before:

    ```mlir
    func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32>
        attributes {kg.allow_in_graph} {
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":3:8)
      return %0 : tensor<4xf32>
    }
    // in a graph:
    %1 = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":10:4)
    ```

    After (`@helper` is erased):

    ```mlir
    %1 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
        loc(callsite("m.py":3:8 at "m.py":10:4))
    ```
  }];
  let dependentDialects = ["::kiln::kg::KGDialect",
                           "::mlir::func::FuncDialect"];
}

def KilnCheckFullgraphPass : Pass<"kiln-check-fullgraph", "::mlir::ModuleOp"> {
  let summary = "fullgraph=True / export: fail on any graph break";
  let description = [{
    Emits `graph break in @<program>: <reason>` at the location of every
    `kg.break` in the module (all of them, not just the first) and fails if
    there was one; passes silently otherwise. Host calls count only through
    the break that holds them.

    ```mlir
    kg.break "call_function print" { ... } loc("t2.py":16:4)
    // t2.py:16:4: error: graph break in @toy_example: call_function print
    ```
  }];
}

def KilnExplainPass : Pass<"kiln-explain", "::mlir::ModuleOp"> {
  let summary = "explain(): report graphs, breaks, ops and break reasons";
  let description = [{
    Prints, per `kg.program`, what `torch._dynamo.explain()` reports: the
    graph count, the graph break count, the number of kt ops in graphs, each
    break's reason with its source stack (file:line:col, innermost frame
    first), and the kt ops of each graph in order. The IR is unchanged.

    ```
    Program: @toy_example
    Graph Count: 3
    Graph Break Count: 1
    Op Count: 6
    Break Reasons:
      Break Reason 1:
        Reason: call_function print
        User Stack:
          t2.py:16:4
    Ops per Graph:
      Graph 1: @toy_example_g0
        kt.abs
        kt.constant
        kt.add
        kt.div
      Graph 2: @toy_example_g1
      ...
    ```
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "File to write the report to (default: stdout)">
  ];
}

def KilnOutlineGraphsPass : Pass<"kiln-outline-graphs", "::mlir::ModuleOp"> {
  let summary = "move inline graph regions into graph functions";
  let description = [{
    Each inline `kg.graph` becomes a private `func.func` named by its callee
    (made unique if the name is taken) with the unit attribute
    `kg.graph_function`, and the `kg.graph` becomes the outlined form (no
    region) calling it. Locations and attributes of the moved ops are kept.

    Before:

    ```mlir
    %y = kg.graph @p_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
    ```

    After:

    ```mlir
    func.func private @p_g0(%a: tensor<4xf32>) -> tensor<4xf32>
        attributes {kg.graph_function} {
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    // in the program:
    %y = kg.graph @p_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KilnInlineGraphsPass : Pass<"kiln-inline-graphs", "::mlir::ModuleOp"> {
  let summary = "move graph functions back into inline graph regions";
  let description = [{
    The reverse of `kiln-outline-graphs`: each outlined `kg.graph` gets a
    copy of its graph function's body as its region (`func.return` becomes
    `kg.yield`); private graph functions left without a use are erased.

    Before:

    ```mlir
    func.func private @p_g0(%a: tensor<4xf32>) -> tensor<4xf32>
        attributes {kg.graph_function} {
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    %y = kg.graph @p_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    ```

    After:

    ```mlir
    %y = kg.graph @p_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::kiln::kg::KGDialect"];
}

def KilnAutodiffPass : Pass<"kiln-autodiff", "::mlir::ModuleOp"> {
  let summary = "reverse-mode autodiff: build joint forward+backward functions";
  let description = [{
    For every `func.func` with the unit attribute `kg.differentiate`, builds
    `@<name>_joint(primals..., cotangents...) -> (outputs..., gradients...)`
    next to it (see `kiln::autodiff::buildJointFunction`): one cotangent
    argument per float result, one gradient per argument that requires grad
    (the bool argument attribute `kg.requires_grad`, by default every float
    tensor argument). The forward ops are cloned, then the vector-Jacobian
    rules of the ops (`DifferentiableOpInterface`) are emitted in reverse
    order at the locations of the forward ops; gradients of values used
    several times are summed with `kt.add`. An op without a rule whose result
    is needed for a gradient is an error at its location. The original
    function is kept (the attribute is removed).

    Before:

    ```mlir
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> attributes {kg.differentiate} {
      %0 = kt.sin %x : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    ```

    After (besides `@f`):

    ```mlir
    func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>)
        -> (tensor<3xf32>, tensor<3xf32>)
        attributes {kg.joint = {num_outputs = 1 : i64, num_primals = 1 : i64, source = @f}} {
      %0 = kt.sin %x : (tensor<3xf32>) -> tensor<3xf32>
      %1 = kt.cos %x : (tensor<3xf32>) -> tensor<3xf32>
      %2 = kt.mul %ct, %1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %0, %2 : tensor<3xf32>, tensor<3xf32>
    }
    ```

    The `kg.joint` attribute records the number of primals and outputs and
    the source function (read by `kiln-partition`).

    With `expand-attention` (the default), every
    `kt.scaled_dot_product_attention` of a function to differentiate is first
    expanded into its math form (`kiln-decompose`'s expansion: `q k^T`,
    scale, mask, `kt.softmax`, `p v`), so the backward reads the forward's
    probabilities and `kiln-partition` chooses between saving them (the
    min-cut never recomputes a product) and recomputing them (a memory
    budget below 1). `expand-attention=false` keeps the op and its rule,
    which recomputes `q k^T` and the softmax in the backward.

    `fold-norm-activation` (on by default) then folds the gradient mask of a
    `kt.relu` or `kt.clamp` 0..6 that follows a `kt.batch_norm_train` into
    its `kt.batch_norm_backward` (`activation = relu / relu6` with the bias:
    `autodiff::foldNormActivationMasks`); on since its two sums are one read
    on the CPU (docs/codegen.md, "Convolution training, round 11");
    `fold-norm-activation=false` keeps the mask ops.
  }];
  let options = [
    Option<"expandAttention", "expand-attention", "bool", /*default=*/"true",
           "expand kt.scaled_dot_product_attention into its math ops before "
           "differentiating (the backward reuses the probabilities)">,
    Option<"foldNormActivation", "fold-norm-activation", "bool",
           /*default=*/"true",
           "fold the gradient mask of a relu / relu6 after "
           "kt.batch_norm_train into its kt.batch_norm_backward">,
  ];
  let dependentDialects = ["::kiln::kt::KTDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnPartitionPass : Pass<"kiln-partition", "::mlir::ModuleOp"> {
  let summary = "split joint functions into forward and backward functions";
  let description = [{
    For every `func.func` with a `kg.joint` attribute (built by
    `kiln-autodiff`), builds `@<source>_fwd(primals...) -> (outputs...,
    saved...)` (attributes `kg.num_outputs`, `kg.num_saved`) and
    `@<source>_bwd(saved..., cotangents...) -> (gradients...)`, then erases
    the joint (unless `keep-joint`). A thin driver over
    `kiln::partition::partitionJoint` (include/kiln/Transforms/Partition.h).

    Policies (AOTAutograd's partitioners, see docs/partition.md):
    * `save-all`: `default_partition`: the forward computes what the outputs
      need and saves every such value (primals included) the backward reads.
    * `recompute-all`: full activation checkpointing: saves only primals and
      values that cannot be recomputed (random ops, ops with effects); the
      backward recomputes everything else, matmuls included.
    * `mincut` (default): `min_cut_rematerialization_partition`: a minimum
      cut of the node-split graph with capacities in bytes (weighted by the
      distance from the backward, doubled for values no op would
      materialize), compute-heavy ops (contractions, attention) and random
      ops never recomputed, primals pinned to the forward, ties broken
      toward fewer recomputed ops. `memory-budget` in [0, 1] moves between
      it (1) and recompute-all (0).

    With `report`, a remark per joint gives the saved values and bytes and
    the recomputed ops; `print-report` prints a table to stderr.

    With `pass-primals` (what the Python training path runs), a saved
    primal is not a forward result: the forward's `kg.saved_primals =
    array<i64: ...>` lists those arguments, which the caller passes as the
    backward's first saved arguments (AOTAutograd keeps such inputs with
    `ctx.save_for_backward` instead of returning copies); `kg.num_saved` on
    the forward counts the saved values it still returns. A primal whose
    argument carries `kg.written` (the caller overwrites it after the
    forward) is still returned.

    Before (after kiln-autodiff):

    ```mlir
    func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>)
        -> (tensor<3xf32>, tensor<3xf32>)
        attributes {kg.joint = {num_outputs = 1 : i64, num_primals = 1 : i64, source = @f}} {
      %0 = kt.sin %x : (tensor<3xf32>) -> tensor<3xf32>
      %1 = kt.cos %x : (tensor<3xf32>) -> tensor<3xf32>
      %2 = kt.mul %ct, %1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %0, %2 : tensor<3xf32>, tensor<3xf32>
    }
    ```

    After (`policy=mincut`):

    ```mlir
    func.func @f_fwd(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
        attributes {kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64} {
      %0 = kt.sin %x : (tensor<3xf32>) -> tensor<3xf32>
      return %0, %x : tensor<3xf32>, tensor<3xf32>
    }
    func.func @f_bwd(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32>
        attributes {kg.num_saved = 1 : i64} {
      %0 = kt.cos %x : (tensor<3xf32>) -> tensor<3xf32>
      %1 = kt.mul %ct, %0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %1 : tensor<3xf32>
    }
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"mincut\"",
           "mincut, save-all or recompute-all">,
    Option<"memoryBudget", "memory-budget", "double", /*default=*/"1.0",
           "mincut only: 1 = min-cut, 0 = recompute-all, in between a "
           "knapsack on saved bytes vs recompute cost">,
    Option<"dynamicDimSize", "dynamic-dim-size", "int64_t",
           /*default=*/"1024", "size counted for each ? dim in bytes">,
    Option<"keepJoint", "keep-joint", "bool", /*default=*/"false",
           "keep the joint function">,
    Option<"cse", "cse", "bool", /*default=*/"true",
           "eliminate common subexpressions of the joint first (as "
           "AOTAutograd's fx_graph_cse)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "emit a remark per joint: saved values, bytes, recomputed ops">,
    Option<"printReport", "print-report", "bool", /*default=*/"false",
           "print a table of the partitions to stderr">,
    Option<"verifyOptimal", "verify-optimal", "bool", /*default=*/"false",
           "check the min-cut against an exhaustive search on small graphs "
           "(an error when they differ, a remark when they agree)">,
    Option<"verifyOptimalMaxNodes", "verify-optimal-max-nodes", "unsigned",
           /*default=*/"16", "largest graph (free nodes) searched exhaustively">,
    Option<"passPrimals", "pass-primals", "bool", /*default=*/"false",
           "saved primals are not forward results: `kg.saved_primals` on "
           "the forward lists the arguments the caller passes to the "
           "backward (arguments marked `kg.written` are still returned)">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KilnAOTAutogradPass : Pass<"kiln-aot-autograd", "::mlir::ModuleOp"> {
  let summary = "AOTAutograd for kg.grad: joint or forward/backward graph calls";
  let description = [{
    Replaces every `kg.grad %loss wrt(...)` with graph calls (see
    `docs/training.md`). The graph computing the loss (outlined first if it
    is inline) is differentiated with respect to the graph inputs named by
    the `kg.grad`, with the loss's cotangent a constant 1:
    `@g_joint(inputs...) -> (outputs..., gradients...)`.

    * `partition=none` (the default; the `kiln-eager` rung): the graph
      becomes a call of `@g_joint`, and the `kg.grad`'s results are its
      gradients.
    * `partition=save-all|recompute-all|mincut` (the `kiln-aot-eager` rung):
      the joint is split by `kiln-partition`'s library into
      `@g_fwd(inputs...) -> (outputs..., saved...)`, called in place of the
      graph, and `@g_bwd(saved...) -> (gradients...)`, called in place of the
      `kg.grad`. `memory-budget` and `report` are kiln-partition's.

    Before:

    ```mlir
    %loss = kg.graph @step_g0(%w, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
    %gw = kg.grad %loss wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
    ```

    After (`partition=none`):

    ```mlir
    %0:2 = kg.graph @step_g0_joint(%w, %x) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
    ```
  }];
  let options = [
    Option<"partition", "partition", "std::string", /*default=*/"\"none\"",
           "none (call the joint), save-all, recompute-all or mincut">,
    Option<"memoryBudget", "memory-budget", "double", /*default=*/"1.0",
           "mincut's memory budget in [0, 1] (see kiln-partition)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "emit kiln-partition's report as a remark per graph">,
    Option<"foldNormActivation", "fold-norm-activation", "bool",
           /*default=*/"true",
           "fold the gradient mask of a relu / relu6 after "
           "kt.batch_norm_train into its kt.batch_norm_backward in the "
           "joint (as kiln-autodiff's option)">,
    Option<"passPrimals", "pass-primals", "bool", /*default=*/"false",
           "a saved graph input is not a forward result: the backward's "
           "graph call takes the input itself (kiln-partition's "
           "pass-primals; partition policies only)">
  ];
  let dependentDialects = ["::kiln::kt::KTDialect",
                           "::kiln::kg::KGDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnFoldConvBatchNormPass
    : Pass<"kiln-fold-conv-batch-norm", "::mlir::ModuleOp"> {
  let summary = "fold inference batch_norm into the conv2d it normalizes";
  let description = [{
    A thin driver over `kiln::decompose::foldConvBatchNorm`. Each
    `kt.batch_norm` (inference form: running statistics; training mode is
    `kt.batch_norm_train`, never folded) whose input is a batched (rank 4)
    f32 or f64 `kt.conv2d` that nothing else reads, with no more weight
    elements than output elements (`?` dims count 1: the fold reads and
    writes the weights on every call), becomes that conv with a
    scaled weight and a new bias, computed by kt ops from the statistics
    and affine parameters (a small per-call computation over the weights
    instead of a pass over the activations):

    ```
    s  = weight * rsqrt(running_var + eps)
    w' = conv.weight * s[O, 1, 1, 1]
    b' = (conv.bias - running_mean) * s + bias
    ```

    Before:

    ```mlir
    %y = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
    %r = kt.batch_norm %y, %m, %v weight %g bias %b : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
    ```

    After: kt.add/rsqrt/mul/unsqueeze/neg ops computing `w'` and `b'`, then
    `%r = kt.conv2d %x, %w', %b' {padding = [1, 1]}`. The results differ
    from the unfolded form by rounding only. `kiln-aot-eager{fold-conv-bn}`
    runs it before `kiln-decompose`; the Python package's `cpu` backend
    turns it on.
  }];
  let dependentDialects = ["::kiln::kt::KTDialect"];
}

def KilnDecomposePass : Pass<"kiln-decompose", "::mlir::ModuleOp"> {
  let summary = "expand composite kt ops into primitive kt ops";
  let description = [{
    Expands every op with a decomposition (`DecomposableOpInterface`, see
    `kiln::decompose::decomposeOps`) into simpler kt ops, repeatedly, until
    only primitives and the ops named in `keep` remain: softmax, log_softmax,
    layer_norm, batch_norm, nll_loss, cross_entropy,
    scaled_dot_product_attention (every op of kind `composite`), and gelu,
    silu, var, logsumexp, linear. A decomposition may emit other composites
    (cross_entropy emits log_softmax and nll_loss), which are expanded in
    turn unless kept. The emitted ops carry the composite's location. The
    formulas are PyTorch's decompositions (see docs/decompose.md).

    `keep=kt.softmax,kt.layer_norm` leaves those ops in place; a name that is
    not a registered op with a decomposition is an error naming it.
    `check-complete` also checks that every registered kt op of kind
    `composite` has a decomposition (an error naming each one that lacks it).

    Before:

    ```mlir
    %r = kt.softmax %x {dim = -1} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    ```

    After:

    ```mlir
    %0 = kt.amax %x {dim = [-1], keepdim = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
    %1 = kt.sub %x, %0 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
    %2 = kt.exp %1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %3 = kt.sum %2 {dim = [-1], keepdim = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
    %r = kt.div %2, %3 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
    ```
  }];
  let options = [
    ListOption<"keep", "keep", "std::string",
               "Decomposable ops to leave in place, e.g. kt.softmax,kt.gelu">,
    Option<"checkComplete", "check-complete", "bool", /*default=*/"false",
           "Also check that every composite kt op has a decomposition">,
  ];
  let dependentDialects = ["::kiln::kt::KTDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnFunctionalizePass : Pass<"kiln-functionalize", "::mlir::ModuleOp"> {
  let summary = "remove refs, views and in-place ops (AOTAutograd functionalization)";
  let description = [{
    Rewrites every `func.func` body and `kg.graph` region that uses `!kt.ref`
    values into value semantics (docs/functionalization.md): each base
    buffer (a ref argument or a `kt.alloc_ref`) gets a current value; a
    `kt.load` of a view becomes the value view op (`kt.slice`, ...) of the
    base's current value; a store or in-place op through a chain of views
    becomes the new value of the view (`kt.add`, `kt.where` for copy_/fill_/
    zero_ broadcasts, ...) written back to the base with the inverse of each
    view: `kt.slice_scatter`, `kt.select_scatter`, and the inverse reshape/
    transpose/permute/squeeze/unsqueeze. Ref arguments stay refs: each one
    used is read by one leading `kt.load`, and each one written gets one
    trailing `kt.store` of its final value (the input-mutation epilogue).

    ```mlir
    func.func @f(%x: !kt.ref<3x4xf32>, %y: tensor<3xf32>) {
      %t = kt.view_transpose %x {dim0 = 0, dim1 = 1} : (!kt.ref<3x4xf32>) -> !kt.ref<4x3xf32>
      %v = kt.view_slice %t {start = 1, end = 3} : (!kt.ref<4x3xf32>) -> !kt.ref<2x3xf32>
      kt.add_ %v, %y : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
      return
    }
    // becomes
    func.func @f(%x: !kt.ref<3x4xf32>, %y: tensor<3xf32>) {
      %0 = kt.load %x : (!kt.ref<3x4xf32>) -> tensor<3x4xf32>
      %1 = kt.transpose %0 {dim0 = 0, dim1 = 1} : ...
      %2 = kt.slice %1 {end = 3, start = 1} : ...
      %3 = kt.add %2, %y : ...
      %4 = kt.slice_scatter %1, %3 {end = 3, start = 1} : ...
      %5 = kt.transpose %4 {dim0 = 0, dim1 = 1} : ...
      kt.store %5, %x : (tensor<3x4xf32>, !kt.ref<3x4xf32>) -> ()
      return
    }
    ```

    Errors (at the op): a write through `kt.view_expand`, `kt.index_put_`
    (no value form yet), a ref used inside a nested region or by a non-ref
    op (func.call, ...), a returned ref.
  }];
  let dependentDialects = ["::kiln::kt::KTDialect",
                           "::mlir::tensor::TensorDialect"];
}

def KilnVerifyFunctionalPass : Pass<"kiln-verify-functional", "::mlir::ModuleOp"> {
  let summary = "check that no ref remains (the functionalization contract)";
  let description = [{
    Checks every `func.func` body and `kg.graph` region: no `!kt.ref` value
    and no ref op remains, except ref arguments of the body used only by one
    leading `kt.load` (at the start of the body) and one trailing `kt.store`
    (right before the terminator). Reports every offending op at its
    location and fails if there was one.

    ```mlir
    kt.add_ %x, %y : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    // error: 'kt.add_' uses a !kt.ref after functionalization (only one
    // leading kt.load and one trailing kt.store per ref argument may remain;
    // run kiln-functionalize)
    ```
  }];
}

def KilnFusePass : Pass<"kiln-fuse", "::mlir::ModuleOp"> {
  let summary = "group kt ops into kernels (kt.fusion) by a bytes-moved cost model";
  let description = [{
    For the top-level kt ops of every `func.func` body, an Inductor-style
    greedy planner (`kiln::fusion::fuseBlock`, `kiln/Transforms/Fusion.h`)
    merges groups linked by a value (producer -> consumer) or reading a
    common value (horizontal) while that saves bytes moved: the score of a
    merge is cost(A) + cost(B) - cost(A u B), the cost of a group being the
    bytes of the values it reads from outside plus the bytes of the values
    it writes (used outside it). Legal merges: pointwise chains of one
    shape; pointwise prologues and epilogues of a reduction (same rows:
    the reduced operand's shape, the kept shape or the reduced shape);
    reductions over the same operand shape and dims (softmax written out);
    a contraction (matmul, linear) with a pointwise epilogue of its result
    shape or a pointwise prologue of operand 0 (unless `contractions=false`:
    then contractions stay alone). A merge that would create a
    cycle (a path from one group through another group back into it) or a
    group larger than `max-group-size` ops is refused.

    Each group of two or more ops, and each softmax, log_softmax or
    layer_norm alone, becomes a `kt.fusion` (see the kt dialect). With
    `report`, prints per function the kernels and estimated bytes before
    and after, and one line per kernel, to stdout.

    Before:

    ```mlir
    %0 = kt.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
    ```

    After:

    ```mlir
    %1 = kt.fusion "fused_add_exp_0" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %0 = kt.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %e = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
      kt.yield %e : tensor<4xf32>
    }
    ```
  }];
  let options = [
    Option<"maxGroupSize", "max-group-size", "unsigned", /*default=*/"64",
           "Largest fusion group, in kt ops (at least 1)">,
    Option<"assumedDimSize", "assumed-dim-size", "int64_t", /*default=*/"128",
           "Size assumed for a ? dim when estimating bytes (at least 1)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print kernels and bytes moved before/after per function">,
    Option<"contractions", "contractions", "bool", /*default=*/"true",
           "Let matmul, linear and conv2d join groups (kiln-cpu turns this "
           "off unless matmul=generated: a product inside a fused kernel is "
           "generated code, never an OpenBLAS call)">
  ];
  let dependentDialects = ["::kiln::kt::KTDialect"];
}

#endif // KILN_TRANSFORMS_PASSES_TD
