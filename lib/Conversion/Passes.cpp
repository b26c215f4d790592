//===- Passes.cpp - Conversion pass registration and kiln-cpu -------------===//
//
// Part of Kiln. The `kiln-cpu` pipeline: lowering to linalg, the backend
// contract check, then the scalar CPU pipeline of TOOLCHAIN.md. Fusion,
// tiling, vectorization and threads are later steps (docs/codegen.md).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

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

void kiln::buildKilnCPUPipeline(OpPassManager &pm,
                                const KilnCPUPipelineOptions &options) {
  KilnLowerToLinalgPassOptions lower;
  lower.allowPartial = options.allowPartial;
  pm.addPass(createKilnLowerToLinalgPass(lower));
  if (options.allowPartial)
    return;
  pm.addPass(createKilnVerifyNoKTPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // tensor.empty is not bufferizable: reuse destinations where possible,
  // allocate the rest.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // libm for erf, expm1, log1p, tanh, pow, ...: the same functions as the
  // interpreter, and no inexact expansions (log1p as log(1 + x)).
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void kiln::registerKilnCPUPipeline() {
  PassPipelineRegistration<KilnCPUPipelineOptions>(
      "kiln-cpu",
      "backend=\"inductor\" on CPU: kiln-lower-to-linalg, kiln-verify-no-kt, "
      "bufferization, loops, LLVM (scalar code; no fusion, vectorization or "
      "threads yet)",
      buildKilnCPUPipeline);
}
