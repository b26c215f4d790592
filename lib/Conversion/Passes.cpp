//===- Passes.cpp - Conversion pass registration and kiln-cpu -------------===//
//
// Part of Kiln. The `kiln-cpu` pipeline: lowering to linalg, the backend
// contract check, conv (im2col or direct) and matmul implementation choice,
// thread + register tiling and vectorization on tensors, bufferization,
// OpenBLAS calls, vector lowering, OpenMP threads and LLVM (docs/codegen.md).
// `optimize=false` gives the scalar pipeline of TOOLCHAIN.md.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"
#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::addBufferizationPasses(OpPassManager &pm, unsigned alignment) {
  // tensor.empty is not bufferizable: reuse destinations where possible,
  // allocate the rest.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.bufferAlignment = alignment;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createKilnCopyStridedCallOperandsPass());
}

void kiln::addDeallocationPasses(OpPassManager &pm, bool earlyDealloc) {
  // buffer-deallocation-pipeline's passes, kiln-cpu-early-dealloc (if
  // asked) between the ownership-based deallocation and the simplification.
  pm.addNestedPass<func::FuncOp>(
      memref::createExpandReallocPass(
          memref::ExpandReallocPassOptions{/*emitDeallocs=*/false}));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  if (earlyDealloc)
    pm.addPass(createKilnCPUEarlyDeallocPass());
  pm.addNestedPass<func::FuncOp>(createKilnDeallocSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
}

void kiln::buildKilnCPUPipeline(OpPassManager &pm,
                                const KilnCPUPipelineOptions &options) {
  // User functions named like the runtime functions the lowering calls
  // (@exp, @malloc, @cblas_sgemm) are renamed first.
  pm.addPass(createKilnCPURenameReservedSymbolsPass());
  if (!options.testMiscompile.empty()) {
    auto [op, with] = llvm::StringRef(options.testMiscompile).split(':');
    pm.addPass(createKilnTestMiscompilePass(op, with));
  }
  // oneDNN convs' activations channels-last where convs and pointwise ops
  // meet (before kiln-fuse groups the pointwise ops; the permutes go into
  // the convs' kernels and become the calls' strides).
  // (With matmul=generated kiln-fuse may put convs into its kernels, where
  // they run as direct loops: left NCHW.)
  if (options.convChannelsLast && options.optimize && options.outline &&
      !options.allowPartial && options.matmul != "generated" &&
      (options.conv == "auto" || options.conv == "onednn") &&
      cpu::oneDNNAvailable())
    pm.addPass(createKilnCPUConvChannelsLastPass());
  // Fusion: group kt ops into kernels, lower, form one forall per group.
  if (options.fuse) {
    // Products stay out of fused kernels unless they are generated code
    // anyway: inside a kernel's forall they could not be OpenBLAS calls.
    KilnFusePassOptions fuse;
    fuse.contractions = options.matmul == "generated";
    pm.addPass(createKilnFusePass(fuse));
  }
  // Each kernel in a function of its own: the later stages then work on
  // small functions (compile time linear in the program), function passes
  // run on the context's threads, and identical kernels are compiled once.
  if (options.outline && !options.allowPartial)
    pm.addPass(createKilnCPUOutlineKernelsPass());
  KilnLowerToLinalgPassOptions lower;
  lower.allowPartial = options.allowPartial;
  // exp once per softmax element, stored in the kernel's row tile: only
  // with kernel formation (without it e would be a whole tensor's extra
  // round trip through memory).
  lower.softmaxStoresExp = options.fuse;
  // cross_entropy's row max and sum of exp in one read of the row: the
  // online generic, which kiln-cpu-tile-vectorize lowers to vector loops
  // (lowerOnlineRowStats).
  lower.onlineRowStats = options.fuse;
  // layer_norm's row mean and M2 in one read of the row (lowerRowMoments).
  lower.rowMoments = options.fuse;
  pm.addPass(createKilnLowerToLinalgPass(lower));
  if (options.fuse)
    pm.addPass(createKilnFormKernelsPass());
  if (options.allowPartial)
    return;
  pm.addPass(createKilnVerifyNoKTPass());
  pm.addPass(createKilnCPUVerifySupportedPass());
  // Splat constants stay one scalar (a fill), never a dense global: as fills
  // they are fused into their pointwise consumers, or tiled, vectorized and
  // threaded like other linalg ops.
  pm.addPass(createKilnCPUSplatsToFillsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  bool opt = options.optimize;
  unsigned threads = options.threads ? options.threads : cpu::hostCores();
  if (opt) {
    // Convs first: the matmuls of im2col convs get their implementation
    // from kiln-select-matmul like every other matmul.
    KilnCPUConvIm2colPassOptions conv;
    conv.impl = options.conv;
    conv.threads = threads;
    pm.addPass(createKilnCPUConvIm2colPass(conv));
    // The other constant pads (pools, kt.pad) become a fill + copy too.
    pm.addPass(createKilnCPUPadToCopyPass());
    // Pools: one pointwise op over their window slices.
    pm.addPass(createKilnCPUPoolWindowsPass());
    KilnSelectMatmulPassOptions select;
    select.impl = options.matmul;
    select.threads = threads;
    pm.addPass(createKilnSelectMatmulPass(select));
    pm.addNestedPass<func::FuncOp>(createKilnCPUFuseElementwisePass());
    pm.addPass(createCanonicalizerPass());
    KilnCPUTileVectorizePassOptions tile;
    tile.threads = threads;
    tile.vectorBits = options.vectorBits;
    pm.addNestedPass<func::FuncOp>(createKilnCPUTileVectorizePass(tile));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // After CSE: each oneDNN conv's init in a tensor of its own.
    pm.addPass(createKilnCPUPrivateConvInitsPass());
  }
  // Again for splat constants that folds made since.
  pm.addPass(createKilnCPUSplatsToFillsPass());
  addBufferizationPasses(pm, /*alignment=*/64);
  if (opt) {
    // Temporaries of tiles (partial-reduction accumulators) are allocated
    // once, outside their loops.
    pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  }
  // Kernel results freed after their last use (kiln-cpu-early-dealloc).
  addDeallocationPasses(pm, /*earlyDealloc=*/true);
  pm.addPass(createConvertBufferizationToMemRefPass());
  if (opt) {
    KilnMatmulToBLASPassOptions blas;
    blas.sgemm = options.sgemm;
    blas.threads = threads;
    pm.addPass(createKilnMatmulToBLASPass(blas));
    KilnCPUConvToOneDNNPassOptions onednn;
    onednn.threads = threads;
    pm.addPass(createKilnCPUConvToOneDNNPass(onednn));
    KilnCPULowerVectorsPassOptions lowerVectors;
    lowerVectors.fastExp = options.fastExp ? "auto" : "false";
    pm.addNestedPass<func::FuncOp>(createKilnCPULowerVectorsPass(lowerVectors));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    pm.addPass(createForallToParallelLoopPass());
    VectorTransferToSCFOptions toSCF;
    toSCF.enableFullUnroll(true);
    pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(toSCF));
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (opt) {
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = threads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
    pm.addNestedPass<func::FuncOp>(createKilnInlineAllocaScopesPass());
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Without `optimize`, kernels (scf.forall) run sequentially.
  pm.addPass(createForallToForLoopPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // libm for erf, expm1, log1p, tanh, pow, ...: the same functions as the
  // interpreter, and no inexact expansions (log1p as log(1 + x)). With
  // `optimize`, f32 exp/tanh/erf were approximated by polynomials first.
  pm.addPass(createConvertMathToLibmPass());
  // Out-of-memory errors name the op whose buffer could not be allocated
  // (before the first pass that lowers memref.alloc to malloc:
  // convert-openmp-to-llvm lowers memref ops too).
  pm.addPass(createKilnCPUAllocSitesPass());
  if (opt) {
    ConvertVectorToLLVMPassOptions vec;
    vec.reassociateFPReductions = true;
    vec.vectorContractLowering = vector::VectorContractLowering::OuterProduct;
    pm.addPass(createConvertVectorToLLVMPass(vec));
    pm.addPass(createConvertOpenMPToLLVMPass());
  }
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createKilnCPURestoreInterfaceNamesPass());
}

void kiln::registerKilnCPUPipeline() {
  registerModulePipeline<KilnCPUPipelineOptions>(
      "kiln-cpu",
      "backend=\"inductor\" on CPU: kiln-lower-to-linalg, kiln-verify-no-kt, "
      "matmul choice, tiling + vectorization, bufferization, OpenBLAS calls, "
      "OpenMP threads, LLVM",
      buildKilnCPUPipeline);
}
