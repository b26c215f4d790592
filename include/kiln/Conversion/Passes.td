//===- Passes.td - Kiln conversion passes ------------------*- tablegen -*-===//
//
// Part of Kiln. Lowerings out of the kt dialect (one folder per lowering, all
// declared here) and the verify passes at the codegen phase boundaries.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnLowerToLinalgPass : Pass<"kiln-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "lower kt ops to linalg, tensor, arith and math on tensors";
  let description = [{
    A dialect conversion driven by `populateKTToLinalgPatterns` (see
    `kiln/Conversion/KTToLinalg/KTToLinalg.h`). Every pointwise op becomes a
    `linalg.generic` whose indexing maps broadcast the operands (a static
    size-1 dim reads index 0; a dynamic dim is assumed not to broadcast),
    reductions become `linalg.generic`s with reduction iterators, `matmul`
    and `linear` become `linalg.matmul` / `linalg.batch_matmul` /
    `linalg.dot` (with `linalg.transpose`, broadcasts and
    `tensor.collapse_shape`), softmax and log_softmax become a few
    generics (max, sum of exp, normalization; with `softmax-stores-exp`,
    exp(x - max) is stored once and the result computed in place over it),
    and shape ops become `tensor` ops (`collapse_shape`, `expand_shape`,
    `extract_slice`, `insert_slice`, `pad`) or `linalg.transpose`. f16 and
    bf16 are computed in f32 ("opmath", as PyTorch) and rounded once.

    Without `allow-partial`, a kt op with no lowering (or a case a pattern
    does not handle) fails the pass with `failed to legalize operation
    'kt.<name>'`; with it, such ops stay and `kiln-verify-no-kt` reports them.

    Before:

    ```mlir
    %r = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```

    After:

    ```mlir
    %e = tensor.empty() : tensor<2x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<2x3xf32>
    ```
  }];
  let options = [
    Option<"allowPartial", "allow-partial", "bool", /*default=*/"false",
           "Leave kt ops without a lowering in place instead of failing">,
    Option<"softmaxStoresExp", "softmax-stores-exp", "bool",
           /*default=*/"false",
           "softmax and log_softmax store exp(x - max) once (a "
           "kiln.materialize generic) and finish in place over it, and take "
           "the row max with maxnumf (kiln-cpu sets it with fuse=true: its "
           "kernels keep a row tile in cache)">,
    Option<"onlineRowStats", "online-row-stats", "bool", /*default=*/"false",
           "cross_entropy takes its row max and sum of exp in one generic "
           "with two results (the online form, its exp marked "
           "kiln.online_lse) where the class dim is innermost (kiln-cpu "
           "sets it with fuse=true and lowers that generic to vector loops)">,
    Option<"rowMoments", "row-moments", "bool", /*default=*/"false",
           "layer_norm (f32/f64, its input a block argument) takes its row "
           "mean and M2 in one generic with three results (count, mean, M2: "
           "Welford's step, its divide marked kiln.row_moments) instead of "
           "two passes (kiln-cpu sets it with fuse=true and lowers that "
           "generic to vector loops)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnVerifyNoKTPass : Pass<"kiln-verify-no-kt", "::mlir::ModuleOp"> {
  let summary = "check the codegen contract: no kt op remains";
  let description = [{
    The backend contract after `kiln-lower-to-linalg` (torch-mlir's
    "backend contract" style): emits `'kt.<name>' op was not lowered to
    linalg` at every remaining kt op (all of them, not just the first) and
    fails if there was one. Functions that are not graph code (`kg.program`
    bodies) are not checked.
  }];
}

def KilnCPUVerifySupportedPass
    : Pass<"kiln-cpu-verify-supported", "::mlir::ModuleOp"> {
  let summary = "check that kiln-cpu can compile every op left after lowering";
  let description = [{
    The rest of the CPU backend contract, right after `kiln-verify-no-kt`
    in `kiln-cpu` (`kiln::cpu::verifySupported`): reports every op that
    the later passes cannot compile, at the op's location, naming what is
    unsupported, and fails if there is one: ops of the `kg` dialect
    (captured programs are host code; kiln-cpu compiles func.func graph
    functions) and ops on tensors without a bufferization (e.g. `arith.negf`
    on a tensor, which one-shot bufferization would reject with "op was not
    bufferized").
  }];
}

def KilnCPURenameReservedSymbolsPass
    : Pass<"kiln-cpu-rename-reserved-symbols", "::mlir::ModuleOp"> {
  let summary = "rename user symbols named like runtime functions (exp, malloc)";
  let description = [{
    First pass of `kiln-cpu` (`kiln::cpu::renameReservedSymbols`): every
    function or global defined in the module whose name is one compiled
    code may call as an external function (libm's `exp`, `log`, `cos`,
    ...; `malloc`, `free`, `memcpy`; `kiln_cpu_runtime_error`,
    `cblas_sgemm`, `memrefCopy`, `omp_*`, `__*`, `_mlir_*`) becomes
    `kiln.user.<name>` (uses updated), so that the lowering's calls reach
    the runtime function and not the user's. The renames are recorded in
    the module attribute `kiln.renamed_symbols`.
  }];
}

def KilnCPURestoreInterfaceNamesPass
    : Pass<"kiln-cpu-restore-interface-names", "::mlir::ModuleOp"> {
  let summary = "give C interface wrappers of renamed functions their names";
  let description = [{
    Last pass of `kiln-cpu` (`kiln::cpu::restoreInterfaceNames`): the
    wrapper `_mlir_ciface_kiln.user.<name>` of a function renamed by
    `kiln-cpu-rename-reserved-symbols` becomes `_mlir_ciface_<name>`, the
    symbol the CPU backend (and C callers) look up; the function itself
    keeps its new name. Drops `kiln.renamed_symbols`.
  }];
}


//===----------------------------------------------------------------------===//
// Fast CPU code (lib/Conversion/CPU, docs/codegen.md "Fast CPU code")
//===----------------------------------------------------------------------===//

def KilnSelectMatmulPass : Pass<"kiln-select-matmul", "::mlir::ModuleOp"> {
  let summary = "choose OpenBLAS or generated code for each linalg matmul";
  let description = [{
    Sets `kiln.matmul_impl = "openblas"` or `"generated"` on every
    `linalg.matmul` / `linalg.batch_matmul` whose operands are all f32 or all
    f64 (other element types always use generated code and get no
    attribute). `impl=auto` (the default) picks per shape class from a table
    measured on the development machine (`kiln::cpu::chooseMatmulImpl`,
    numbers in docs/codegen.md); `impl=openblas` / `impl=generated` force one.

    ```mlir
    %r = linalg.matmul {kiln.matmul_impl = "openblas"}
           ins(%a, %b : tensor<256x512xf32>, tensor<512x128xf32>)
           outs(%c : tensor<256x128xf32>) -> tensor<256x128xf32>
    ```
  }];
  let options = [
    Option<"impl", "impl", "std::string", /*default=*/"\"auto\"",
           "auto, openblas or generated">,
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "Threads the code will run on (0: all cores); input of auto">
  ];
}

def KilnCPUConvIm2colPass
    : Pass<"kiln-cpu-conv-im2col", "::mlir::ModuleOp"> {
  let summary = "choose im2col + matmul or a direct loop nest for each conv";
  let description = [{
    A thin driver over `kiln::cpu::selectConvImpl`. Every f32/f64
    `linalg.conv_2d_nchw_fchw` / `linalg.conv_2d_ngchw_gfchw` on tensors
    either stays (marked `kiln.conv_impl = "direct"`; tiled and vectorized
    by `kiln-cpu-tile-vectorize`) or is rewritten into an `scf.for` over the
    batch (and the groups) marked `kiln.conv_impl = "im2col"`: one
    `linalg.generic` copies the sample's patches into a
    `[C*KH*KW, OH*OW]` matrix (strides and dilations in its input map; the
    input is already padded), and a plain `linalg.matmul`
    `W[F, C*KH*KW] x cols` accumulates into the `[F, OH*OW]` slice of the
    init (bias or zeros). 1x1 stride-1 kernels need no copy. Runs before
    `kiln-select-matmul`, which then marks that matmul (OpenBLAS for the
    sizes where im2col is chosen). `impl=auto` (the default) picks per shape
    from a measured table (`kiln::cpu::chooseConvImpl`, docs/codegen.md);
    `im2col` / `direct` force one. Convs inside an `scf.forall` (kiln-fuse
    kernel tiles) and convs with a `?` width stay direct. In both forms the
    conv's zero `tensor.pad` becomes alloc_tensor + fill + `linalg.copy` into
    the interior (vectorized later, instead of a scalar `memref.copy`), and
    its init fill gets its own `alloc_tensor` (so CSE cannot merge two
    convs' inits and make bufferization copy one). An f32 conv given to
    oneDNN whose result's one use is a relu / clamp `linalg.generic` (`v < L
    ? L : v` then `v > H ? H : v`; kiln-cpu-outline-kernels puts a conv's
    kt.relu / kt.clamp into its kernel) absorbs it: the conv gets
    `kiln.conv_clamp = array<f32: L, H>` (-inf / +inf for an absent bound)
    and `kiln-cpu-conv-to-onednn` makes the call clamp its output.

    ```mlir
    %r = scf.for %n = %c0 to %c8 step %c1 iter_args(%acc = %init)
        -> (tensor<8x64x3136xf32>) {
      %x = tensor.extract_slice %xp[%n, 0, 0, 0] [1, 64, 58, 58] [1, 1, 1, 1]
      %p = linalg.generic {kiln.conv_impl = "im2col"} ins(%x) ...
             -> tensor<64x3x3x56x56xf32>
      %cols = tensor.collapse_shape %p [[0, 1, 2], [3, 4]]
      %o = tensor.extract_slice %acc[%n, 0, 0] [1, 64, 3136] [1, 1, 1]
      %m = linalg.matmul ins(%w, %cols : ...) outs(%o : tensor<64x3136xf32>)
      %u = tensor.insert_slice %m into %acc[%n, 0, 0] [1, 64, 3136] [1, 1, 1]
      scf.yield %u : tensor<8x64x3136xf32>
    } {kiln.conv_impl = "im2col"}
    ```
  }];
  let options = [
    Option<"impl", "impl", "std::string", /*default=*/"\"auto\"",
           "auto, im2col, direct or onednn">,
    Option<"onednn", "onednn", "bool", /*default=*/"true",
           "Whether auto may pick oneDNN (where this build has it)">,
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "Threads the code will run on (0: all cores); input of auto">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def KilnCPUPadToCopyPass : Pass<"kiln-cpu-pad-to-copy", "::mlir::ModuleOp"> {
  let summary = "constant tensor.pad as a fill + linalg.copy into the interior";
  let description = [{
    A thin driver over `kiln::cpu::padsAsFillAndCopy`. Every `tensor.pad`
    whose padding value is the same for all elements (a constant such as the
    zeros of avg_pool2d / `kt.pad`, the -inf of max_pool2d, or any value
    defined outside the region; any rank, static or `?` sizes and amounts)
    becomes `bufferization.alloc_tensor` + `linalg.fill` + `linalg.copy` of
    the source into an `extract_slice` of the filled tensor +
    `tensor.insert_slice` back. `kiln-cpu-tile-vectorize` then tiles,
    vectorizes and threads the fill and the copy; a `tensor.pad` would
    bufferize to a scalar fill and an element-by-element `memrefCopy` call.
    A pad whose region computes the value per element stays. Runs in
    `kiln-cpu` (optimize=true) right after `kiln-cpu-conv-im2col` (which
    rewrites conv input pads the same way).

    ```mlir
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %ninf : f32
    } : tensor<8x64x112x112xf32> to tensor<8x64x114x114xf32>
    // becomes
    %e = bufferization.alloc_tensor() : tensor<8x64x114x114xf32>
    %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<8x64x114x114xf32>)
    %w = tensor.extract_slice %f[0, 0, 1, 1] [8, 64, 112, 112] [1, 1, 1, 1]
    %c = linalg.copy ins(%x : tensor<8x64x112x112xf32>) outs(%w : ...)
    %p = tensor.insert_slice %c into %f[0, 0, 1, 1] [8, 64, 112, 112] [1, 1, 1, 1]
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def KilnCPUConvChannelsLastPass
    : Pass<"kiln-cpu-conv-channels-last", "::mlir::ModuleOp"> {
  let summary = "channels-last activations between oneDNN convs (kt level)";
  let description = [{
    A thin driver over `kiln::cpu::convsToChannelsLast`
    (lib/Conversion/CPU/ConvLayout.cpp). oneDNN computes ungrouped f32
    convs in channels-last on this machine; a conv that reads and writes
    NCHW pays a reorder of its input and of its output per call. This pass
    gives each ungrouped 4-D f32 `kt.conv2d` with a static weight, and each
    depthwise one (one input and one output channel per group: libkiln_onednn's
    channels-last depthwise loops), a channels-last twin of its result (of its relu/clamp's where that is the
    conv's only use), runs the pointwise ops that read twins (a resnet's
    residual add and relu) on `[N, H, W, C]` tensors, and feeds a conv a
    channels-last value through `kt.permute [0, 3, 1, 2]`. In `kiln-cpu`
    (optimize=true, oneDNN convs) it runs before `kiln-fuse`;
    `kiln-cpu-outline-kernels` puts the twin's permute into the conv's
    kernel and `kiln-cpu-conv-to-onednn` makes it the call's output
    strides, as it reads the input permute in place: no copies where convs
    and pointwise ops meet. Inference `kt.batch_norm` of a twin becomes
    `x * a + b` on it; a mean/sum/amax over H and W reduces the twin's dims
    1 and 2. A permute back to NCHW (a copy) is left only where a
    channels-last value meets another reader (a pool, a result). A
    depthwise conv's input relu/clamp runs on the twin (and, outlined,
    inside the conv's call). Convs next to another grouped conv are left
    NCHW.

    ```mlir
    %y = kt.conv2d %x, %w : ... -> tensor<8x64x56x56xf32>
    %r = kt.add %y, %z : ...
    // becomes
    %y = kt.conv2d %x, %w : ... -> tensor<8x64x56x56xf32>
    %yl = kt.permute %y {dims = [0, 2, 3, 1]} : ... -> tensor<8x56x56x64xf32>
    %zl = kt.permute %z {dims = [0, 2, 3, 1]} : ...
    %rl = kt.add %yl, %zl : ... -> tensor<8x56x56x64xf32>
    %r = kt.permute %rl {dims = [0, 3, 1, 2]} : ... -> tensor<8x64x56x56xf32>
    ```
  }];
  let dependentDialects = ["::kiln::kt::KTDialect"];
}

def KilnCPUPoolWindowsPass : Pass<"kiln-cpu-pool-windows", "::mlir::ModuleOp"> {
  let summary = "pooling as one pointwise op over its strided window slices";
  let description = [{
    A thin driver over `kiln::cpu::poolsAsWindowSlices`. Every
    `linalg.pooling_nchw_max` / `pooling_nchw_sum` on tensors with a static
    window of at most 64 elements becomes one all-parallel `linalg.generic`
    over the output whose KH*KW inputs are the strided window slices of the
    (padded) input, combined in the pool's own order with its own combiner
    (bit-identical results). `kiln-cpu-tile-vectorize` then vectorizes it
    along the output width; the pooling op, whose window dims are its
    innermost loops, was vectorized one output element at a time. Runs in
    `kiln-cpu` (optimize=true) right after `kiln-cpu-pad-to-copy`.

    ```mlir
    %r = linalg.pooling_nchw_max {strides = dense<2> : tensor<2xi64>, ...}
        ins(%xp, %win : tensor<8x64x114x114xf32>, tensor<3x3xf32>) outs(%init ...)
    // becomes
    %s00 = tensor.extract_slice %xp[0, 0, 0, 0] [8, 64, 56, 56] [1, 1, 2, 2]
    ...
    %s22 = tensor.extract_slice %xp[0, 0, 2, 2] [8, 64, 56, 56] [1, 1, 2, 2]
    %r = linalg.generic {all parallel, identity maps}
        ins(%s00, ..., %s22) outs(%init)  // maximumf(...maximumf(init, s00)...)
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def KilnCPUFuseElementwisePass
    : Pass<"kiln-cpu-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "fuse pointwise linalg.generic producers into their consumers";
  let description = [{
    A thin driver over `kiln::cpu::fuseElementwise`: upstream's linalg
    elementwise fusion, restricted to producers that are all-parallel
    generics with one result, at most `max-body-ops` body ops, no
    `tensor.extract`, and only generics as users (so each becomes dead once
    fused and no intermediate tensor is written to memory). The producer's
    body is recomputed in every consumer. This is the codegen-level fusion of
    memory-bound chains; kernels that `kiln-fuse` formed are fused the same
    way inside their `scf.forall`.

    ```mlir
    %0 = linalg.generic ... ins(%x, %y) { addf } -> tensor<4096xf32>
    %1 = linalg.generic ... ins(%0) { exp } -> tensor<4096xf32>
    // becomes one generic: ins(%x, %y) { addf; exp }
    ```
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "unsigned", /*default=*/"24",
           "Largest producer body (ops) that is fused">
  ];
}

def KilnCPUTileVectorizePass
    : Pass<"kiln-cpu-tile-vectorize", "::mlir::func::FuncOp"> {
  let summary = "tile linalg ops for threads and registers, then vectorize";
  let description = [{
    A thin driver over `kiln::cpu::tileAndVectorize`. Every linalg op on
    tensors that is not inside an `scf.forall` gets one over its outermost
    parallel dim (`threads` iterations; none when threads = 1 or the op has
    fewer than 32768 iterations). Then register tiles (`scf.for`) are
    vectorized with `linalg::vectorize`: pointwise ops by rows of two
    vector registers, single innermost reductions as partial reductions into
    a four-register accumulator, matmuls as 8 x (2 registers) x 1
    outer-product tiles. Matmuls marked `kiln.matmul_impl = "openblas"` are
    left for `kiln-matmul-to-blas`. An op the vectorizer rejects keeps its
    tiles and becomes scalar loops.
  }];
  let options = [
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "Threads (scf.forall iterations) per op; 0: all cores">,
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits; 0: the host's (512 with "
           "AVX-512F, 256 with AVX2)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KilnCPUOutlineKernelsPass
    : Pass<"kiln-cpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "one private func.func per kernel, called from its site";
  let description = [{
    In `kiln-cpu` after `kiln-fuse`, before lowering
    (`kiln::cpu::outlineKernels`): every `kt.fusion` and every `kt` op that
    computes (not a shape, creation or constant op) of a function body
    moves into a private `func.func` of its own (`kiln.kernel_function`),
    called from where it was; constant operands are cloned into it. Kernels
    identical up to value names and locations (a repeated layer) share one
    function. The later stages (lowering, tiling, bufferization, LLVM) then
    work on small functions, so compile time grows linearly with the
    program (docs/codegen.md, "Compile time"). A `kt.conv2d` whose only use
    is a `kt.relu` or `kt.clamp` takes it into its kernel
    (`kernel_conv2d_relu`, `kernel_conv2d_clamp`), where
    `kiln-cpu-conv-im2col` can fold it into a oneDNN call; one whose only
    use is a chain of static slices of H and W from 0 (a strided conv's
    weight gradient) takes them (`kernel_conv2d_slice_slice`), and
    `kiln-cpu-conv-im2col` shrinks the conv to what they keep. A
    `kt.transpose` of the last two dims read only by `kt.matmul`s, and a
    4-D `kt.permute` read only by `kt.conv2d`s (a weight gradient's
    swapped batch and channels), is cloned into each reader's kernel
    instead of being a copy kernel: the product or the oneDNN call reads
    its source through swapped maps or permuted strides. With `stats`, prints
    `kiln-cpu-outline-kernels: K kernels, R reused, C calls`.
  }];
  let options = [
    Option<"stats", "stats", "bool", /*default=*/"false",
           "print the number of kernel functions and calls">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KilnCPUAllocSitesPass
    : Pass<"kiln-cpu-alloc-sites", "::mlir::ModuleOp"> {
  let summary = "name the op of each allocation for out-of-memory errors";
  let description = [{
    In `kiln-cpu`, before the passes that lower `memref.alloc` to malloc
    (`convert-openmp-to-llvm`, `convert-to-llvm`)
    (`kiln::cpu::markAllocationSites`): before each `memref.alloc`, a call
    `kiln_cpu_alloc_site(id)` where `id` is a run-time error template
    (`kiln.runtime_errors`) "<file:line:col>: cannot allocate {0:bytes} for
    tensor<...> in compiled code: out of memory" at the alloc's location,
    i.e. the op that needs the buffer. When that allocation fails (a
    2^40-element intermediate, `ulimit -v`), the call fails with this
    message instead of one that names no op.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnCopyStridedCallOperandsPass
    : Pass<"kiln-copy-strided-call-operands", "::mlir::ModuleOp"> {
  let summary = "pass strided views to identity-layout callees as copies";
  let description = [{
    Right after `one-shot-bufferize` in `kiln-cpu` and `kiln-nvptx`
    (`kiln::cpu::copyStridedCallOperands`): a `func.call` operand that is a
    `memref.cast` from a non-identity layout (a strided or offset view, e.g.
    a `kt.slice` of a middle dim passed to an outlined kernel) to the
    callee's identity-layout argument type becomes a fresh buffer with a
    copy of the view. The cast is accepted statically but the callee reads
    with identity strides and offset 0, so the kernel computed on the wrong
    elements.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def KilnDeallocSimplificationPass
    : Pass<"kiln-dealloc-simplification", "::mlir::func::FuncOp"> {
  let summary = "buffer-deallocation-simplification where it stays cheap";
  let description = [{
    In the deallocation stage of `kiln-cpu` and `kiln-nvptx`
    (`kiln::deallocSimplificationCost`): runs upstream's
    `buffer-deallocation-simplification` on a function unless its
    `bufferization.dealloc` ops would make it slow. The upstream pass
    compares every memref of a dealloc with every other and with every
    retained value through alias analysis; a training forward graph that
    returns ~1000 saved activations ends in one dealloc of ~1100 memrefs
    retaining ~1100 values, which took 143 s of a 152 s `kiln-cpu`
    (densenet121). The cost of a function is the sum over its deallocs of
    memrefs x (memrefs + retained); above `max-cost` the function keeps
    its deallocs as the ownership-based pass made them, and
    `lower-deallocations` turns them into the general run-time check
    (correct, a few pointer comparisons per memref).
  }];
  let options = [
    Option<"maxCost", "max-cost", "uint64_t", /*default=*/"65536",
           "skip the simplification of functions above this cost (0: never "
           "skip)">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def KilnCPUEarlyDeallocPass
    : Pass<"kiln-cpu-early-dealloc", "::mlir::ModuleOp"> {
  let summary = "free kernel results right after their last use";
  let description = [{
    In `kiln-cpu`'s deallocation stage, right after
    `ownership-based-buffer-deallocation`
    (`kiln::cpu::deallocCallResultsEarly`): a buffer returned fresh by a
    call of a kernel function (its `memref.alloc`), that the caller's
    `bufferization.dealloc` frees at the end of the block, is freed by a
    `memref.dealloc` right after its last use (direct or through a view)
    and leaves that dealloc. Returned, yielded or retained buffers, and
    ones that may alias another buffer of the dealloc, are left as they
    were. Peak memory is then the live buffers, not all intermediates, and
    `buffer-deallocation-simplification` no longer sees one dealloc of
    every intermediate (quadratic in the kernel count).

    Before that, a buffer returned fresh by a call and returned by the
    function (directly or through views and casts, once) leaves the
    dealloc's memrefs and retained values: its ownership goes to the
    return (its ownership result is `true`). A training forward graph
    returns hundreds of saved activations; their one dealloc made the
    simplification quadratic (densenet121). A buffer returned twice or with
    a view of it, one another listed or retained value may alias, or one
    that may escape otherwise (another terminator, a clone, an op that may
    return an alias) stays.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnNVPTXMatmulsToCublasPass
    : Pass<"kiln-nvptx-matmuls-to-cublas", "::mlir::ModuleOp"> {
  let summary = "matmul / batch_matmul as calls of cuBLAS through the runtime";
  let description = [{
    In `kiln-nvptx` (`matmul=cublas`, the default), after bufferization
    (`kiln::nvptx::matmulsToCublas`): a host-level `linalg.matmul` or
    `linalg.batch_matmul` with default indexing maps, f32 or f64 operands
    and row-major (identity layout) buffers becomes
    `func.call @kiln_cuda_gemm(dtype, batch, m, n, k, a, b, c)` marked
    `kiln.matmul_impl = "cublas"`: the runtime computes C += A B with
    cuBLAS. Others stay generated kernels.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KilnNVPTXMapReductionsPass
    : Pass<"kiln-nvptx-map-reductions", "::mlir::func::FuncOp"> {
  let summary = "row reductions into block-per-row kernels (warp shuffles, "
                "shared memory)";
  let description = [{
    In `kiln-nvptx`, after bufferization and before
    `convert-linalg-to-parallel-loops` (`kiln::nvptx::mapRowReductions`):
    a host-level linalg op whose innermost loop is a reduction read
    contiguously by its inputs, each output accumulating one combining op
    (add, mul, maximumf/minimumf, maxnumf/minnumf, signed/unsigned max/min,
    and/or/xor; f32, f64, i32, i64), becomes a `gpu.launch` in which a block
    reduces a row: its threads stride over the row with one partial per
    output, `gpu.all_reduce` combines them, thread 0 folds the total into the
    output. Rows are grid-strided over at most `max-blocks` blocks; a static
    reduced size below `min-reduced` is left to one thread per output.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block (at most)">,
    Option<"maxBlocks", "max-blocks", "int64_t", "65535",
           "Most blocks per grid">,
    Option<"minReduced", "min-reduced", "int64_t", "64",
           "Smallest static reduced size given a block per row">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnNVPTXMapToGPUPass
    : Pass<"kiln-nvptx-map-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "host compute into gpu.launch kernels, buffers into device "
                "memory";
  let description = [{
    In `kiln-nvptx`, after bufferization and
    `convert-linalg-to-parallel-loops` (`kiln::nvptx::mapToGPU`): every
    outermost `scf.parallel` becomes a `gpu.launch` of 1-D blocks of
    `block-size` threads running a grid-stride loop over the linearized
    iteration space (innermost dim fastest: coalesced accesses), the grid
    `min(ceil(n / block-size), max-blocks)`, nothing launched when the space
    is empty; other host ops that read or write memref data run in a
    one-thread kernel; `memref.alloc` becomes `gpu.alloc` and a dense
    constant (`memref.get_global`) is copied into a device buffer.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">,
    Option<"maxBlocks", "max-blocks", "int64_t", "65535",
           "Most blocks per grid">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnNVPTXClonesToGPUPass
    : Pass<"kiln-nvptx-clones-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "host bufferization.clone of device buffers as gpu.alloc + "
                "a copy kernel";
  let description = [{
    In `kiln-nvptx`, after the deallocation pipeline and before
    `convert-bufferization-to-memref` (`kiln::nvptx::clonesToGPU`): the
    deallocation pipeline clones a returned buffer the function does not
    own (an argument returned as it is, the same buffer returned twice);
    every such `bufferization.clone` on the host becomes a `gpu.alloc` of
    the clone's type filled by a grid-stride copy kernel, since all host
    buffers are device memory (a host `malloc` + `memcpy` of a device
    pointer would crash).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">,
    Option<"maxBlocks", "max-blocks", "int64_t", "65535",
           "Most blocks per grid">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnNVPTXDeallocsToGPUPass
    : Pass<"kiln-nvptx-deallocs-to-gpu", "::mlir::ModuleOp"> {
  let summary = "memref.dealloc of device buffers as gpu.dealloc";
  let description = [{
    In `kiln-nvptx`, after the deallocation pipeline
    (`kiln::nvptx::deallocsToGPU`): a `memref.dealloc` of anything but a
    host `memref.alloc` (which the lowering of `bufferization.dealloc`
    makes for its own bookkeeping) frees device memory: `gpu.dealloc`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def KilnCPUPrivateConvInitsPass
    : Pass<"kiln-cpu-private-conv-inits", "::mlir::ModuleOp"> {
  let summary = "a fresh tensor for every oneDNN conv's bias or zero init";
  let description = [{
    In `kiln-cpu` after the last CSE before bufferization
    (`kiln::cpu::privatizeConvInits`): the bias broadcast (`kiln.conv_bias`)
    or zero `linalg.fill` that initializes a conv marked
    `kiln.conv_impl = "onednn"` writes into a `bufferization.alloc_tensor` of
    its own instead of a `tensor.empty`. Elementwise fusion's clean-up
    turns such inits into `tensor.empty`s, and CSE merges those of one
    shape; in a kernel with two convs (a chain, kiln-cpu-outline-kernels)
    one-shot bufferization then gives the second conv the first one's output
    buffer, which the first conv's reader (the second conv's padding copy)
    has just read: correct, but that buffer can then no longer go to the
    second conv's call directly (in-kernel padding) nor stay channels-last
    between the two calls (kiln-cpu-conv-to-onednn).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def KilnCPUSplatsToFillsPass
    : Pass<"kiln-cpu-splats-to-fills", "::mlir::ModuleOp"> {
  let summary = "splat tensor constants as tensor.empty + linalg.fill";
  let description = [{
    Right before bufferization in `kiln-cpu`
    (`kiln::cpu::splatConstantsAsFills`): every `arith.constant` of a
    splat tensor (`dense<1.5> : tensor<2147483648xf32>`) becomes
    `linalg.fill` of the scalar into a `tensor.empty`, so that no dense
    global of its elements is ever written out (bufferization would make
    it a `memref.global`, which the LLVM translation materializes: 8 GiB
    for 2^31 floats).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnMatmulToBLASPass : Pass<"kiln-matmul-to-blas", "::mlir::ModuleOp"> {
  let summary = "replace bufferized matmuls marked openblas by cblas calls";
  let description = [{
    After bufferization: a `linalg.matmul` / `linalg.batch_matmul` marked
    `kiln.matmul_impl = "openblas"` becomes a call to `cblas_sgemm` /
    `cblas_dgemm` (row major, no transposes, alpha = beta = 1, one call per
    batch element, skipped when a dim is 0) on the operands' aligned
    pointers plus offsets. A memref without unit inner stride is re-marked
    `"generated"` and becomes loops. With `sgemm=auto` (the default) f32
    products call `kiln_onednn_sgemm` (libkiln_onednn: oneDNN's JIT sgemm,
    cblas_sgemm's arguments plus the thread count) where the build has
    libkiln_onednn; `sgemm=openblas` keeps `cblas_sgemm`.
  }];
  let options = [
    Option<"sgemm", "sgemm", "std::string", /*default=*/"\"auto\"",
           "f32 products: auto, openblas or onednn">,
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "threads of oneDNN's sgemm (0: OpenMP's default)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

def KilnCPUConvToOneDNNPass
    : Pass<"kiln-cpu-conv-to-onednn", "::mlir::ModuleOp"> {
  let summary = "replace bufferized convs marked onednn by oneDNN calls";
  let description = [{
    A thin driver over `kiln::cpu::lowerConvsToOneDNN`. After bufferization:
    an f32 `linalg.conv_2d_nchw_fchw` / `linalg.conv_2d_ngchw_gfchw` marked
    `kiln.conv_impl = "onednn"` (by `kiln-cpu-conv-im2col`) becomes a call of
    `kiln_onednn_conv2d_f32` (libkiln_onednn, runtime/onednn) on the
    operands' aligned pointers plus offsets, their sizes and strides (any
    strided view), the conv's strides and dilations, an accumulate flag and
    the thread count. A zero `linalg.fill` of the output right before the
    conv (nothing with memory effects in between) is dropped and the call
    overwrites. The runtime caches one oneDNN primitive per shape. A conv
    with `kiln.conv_clamp` calls `kiln_onednn_conv2d_post_f32` (the bias or
    a null pointer, the paddings, the bias stride, accumulate, then the two
    f32 bounds), which clamps its output with kt.clamp's NaN rule; such a
    conv that cannot become that call (not bufferized, not f32) is an
    error, since lowered as a plain conv it would lose the clamp. An
    ungrouped conv's operand (or its padding copy's source) written by a
    `linalg.transpose` marked `kiln.conv_view` is passed as the transpose's
    source with permuted sizes and strides, and the transpose and its buffer
    are erased. A transposed conv's scatter form whose full buffer is only
    read through the padding's crop copied out calls
    `kiln_onednn_conv_transpose2d_crop_f32` on the copy's buffer (the crop
    is oneDNN's padding).

    ```mlir
    func.call @kiln_onednn_conv2d_f32(%x, %w, %y, %n, %g, %c, ...)
        {kiln.conv_impl = "onednn"} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, ...) -> ()
    ```
  }];
  let options = [
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "oneDNN's OpenMP threads (0: its default)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

def KilnCPULowerVectorsPass
    : Pass<"kiln-cpu-lower-vectors", "::mlir::func::FuncOp"> {
  let summary = "hoist and lower vector ops towards LLVM (after bufferization)";
  let description = [{
    Hoists loop-invariant vector transfers (the matmul accumulator) out of
    loops, drops unit dims, lowers `vector.contract` to outer products (FMAs),
    `vector.multi_reduction` to `vector.reduction`s, transposes, broadcasts
    and masks, and rewrites f32 `exp`, `tanh` and `erf` into polynomial
    approximations (vectorizable; the other math functions and all f64 ones
    still call libm). f32 `exp` on a host with AVX-512F becomes Kiln's
    14-op form ending in `vscalefps` (`fast-exp`, FastExp.cpp:
    `kiln::cpu::buildFastExpAVX512`), else MLIR's:

    ```mlir
    %e = math.exp %x : vector<16xf32>
    // -kiln-cpu-lower-vectors="fast-exp=avx512":
    %c = arith.minimumf %x, %cst_89 ...; arith.maximumf %c, %cst_m104 ...
    ... 8 math.fma, 1 arith.subf ...
    %e = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%p, %n, ...)
    ```
  }];
  let options = [
    Option<"approximateMath", "approximate-math", "bool", /*default=*/"true",
           "Polynomial approximations of f32 exp/tanh/erf">,
    Option<"fastExp", "fast-exp", "std::string", /*default=*/"\"auto\"",
           "f32 exp with approximate-math: auto (the AVX-512 form where the "
           "host has AVX-512F, else MLIR's), avx512 (always), false (MLIR's "
           "polynomial approximation)">
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::ub::UBDialect"];
}

def KilnInlineAllocaScopesPass
    : Pass<"kiln-inline-alloca-scopes", "::mlir::func::FuncOp"> {
  let summary = "inline memref.alloca_scope ops that hold no alloca";
  let description = [{
    `convert-scf-to-openmp` wraps every parallel loop body in a
    `memref.alloca_scope`, whose region must stay a single block, so
    `convert-scf-to-cf` cannot lower the loops inside it. A scope without a
    `memref.alloca` directly in it frees nothing: its body is inlined.
  }];
}

def KilnFormKernelsPass : Pass<"kiln-form-kernels", "::mlir::ModuleOp"> {
  let summary = "turn each kt.fusion (lowered to linalg) into one scf.forall kernel";
  let description = [{
    Kernel formation (`kiln::formKernels`,
    `kiln/Conversion/KTFusionToLinalg/FormKernels.h`), after
    `kiln-lower-to-linalg` has lowered the bodies of the `kt.fusion` ops
    made by `kiln-fuse`. Per group: linalg elementwise fusion inside the
    group only (a pointwise chain becomes one `linalg.generic`, pointwise
    prologues fold into reductions); then the root (the op producing a
    yielded value) is tiled along its outer parallel dims with `scf.forall`
    and the group's producers are fused into the tile
    (`scf::tileConsumerAndFuseProducersUsingSCF`): softmax over rows becomes
    one forall over row blocks whose body computes max, sum and the
    normalization for its rows; linear + gelu one forall holding the matmul
    tile and the epilogue. The forall gets `kiln.kernel = "<group name>"`
    and the group's location; the `kt.fusion` is inlined away. Outer
    parallel dims: every parallel dim of a reducing root, every parallel
    dim but the last of a contraction or of a pointwise root of rank >= 2;
    the innermost of them is tiled by `tile-rows`, the others by 1; a 1-D
    pointwise root by `tile-elements`. A body that still holds kt ops is
    inlined without forming a kernel (`kiln-verify-no-kt` reports them).
  }];
  let options = [
    Option<"tileRows", "tile-rows", "int64_t", /*default=*/"16",
           "Tile size of the innermost outer parallel dim (at least 1)">,
    Option<"tileElements", "tile-elements", "int64_t", /*default=*/"1024",
           "Tile size of a 1-D pointwise root (at least 1)">,
    Option<"testRestoreFoldedResultCrash", "test-restore-folded-result-crash",
           "bool", /*default=*/"false",
           "Test only (kiln-reduce's tests): restores the fixed defect of "
           "issue 14 #5, a group result that folds to a group input "
           "replaced by the erased block argument (a crash)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // KILN_CONVERSION_PASSES_TD
