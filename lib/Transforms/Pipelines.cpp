//===- Pipelines.cpp - Kiln named pipelines and registration --------------===//
//
// Part of Kiln. The named pipelines of the troubleshooting ladder (see
// docs/passes.md); this file has kiln-eager (capture level) and kiln-aot-eager (+ AOTAutograd).
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {
#define GEN_PASS_REGISTRATION
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

void kiln::buildKilnEagerPipeline(OpPassManager &pm,
                                  const KilnEagerPipelineOptions &options) {
  KilnSplitGraphsPassOptions split;
  split.disallow.assign(options.disallow.begin(), options.disallow.end());
  pm.addPass(createKilnSplitGraphsPass(split));
  pm.addPass(createKilnInlineAllowedPass());
  pm.addPass(createKilnOutlineGraphsPass());
  // Eager autograd: each kg.grad's graph becomes a call of its joint
  // forward+backward function; nothing is partitioned.
  pm.addPass(createKilnAOTAutogradPass());
  pm.addPass(createCanonicalizerPass());
}

void kiln::buildKilnAOTEagerPipeline(
    OpPassManager &pm, const KilnAOTEagerPipelineOptions &options) {
  KilnSplitGraphsPassOptions split;
  split.disallow.assign(options.disallow.begin(), options.disallow.end());
  pm.addPass(createKilnSplitGraphsPass(split));
  pm.addPass(createKilnInlineAllowedPass());
  pm.addPass(createKilnOutlineGraphsPass());
  // Graph functions become pure values: refs, views and in-place ops
  // removed, mutated ref arguments written back by one trailing kt.store
  // (the input-mutation epilogue); checked at the phase boundary.
  pm.addPass(createKilnFunctionalizePass());
  pm.addPass(createKilnVerifyFunctionalPass());
  // Composites to primitives before differentiating, so that the joint (and
  // the partitioner) sees primitive ops, as AOTAutograd traces to aten.
  // Inference batch_norm into the conv before it, while both are whole ops
  // (opt-in: the cpu backend; the interpreter's aot_eager keeps PyTorch's
  // op-by-op rounding).
  if (options.foldConvBN)
    pm.addPass(createKilnFoldConvBatchNormPass());
  KilnDecomposePassOptions decompose;
  decompose.keep.assign(options.keep.begin(), options.keep.end());
  pm.addPass(createKilnDecomposePass(decompose));
  KilnAOTAutogradPassOptions aot;
  aot.partition = options.partition;
  aot.passPrimals = options.passPrimals;
  pm.addPass(createKilnAOTAutogradPass(aot));
  pm.addPass(createCanonicalizerPass());
}

LogicalResult kiln::checkModulePipelineAnchor(
    OpPassManager &pm, StringRef pipeline,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  StringRef anchor = pm.getOpAnchorName();
  if (anchor == ModuleOp::getOperationName() ||
      anchor == OpPassManager::getAnyOpAnchorName())
    return success();
  return errorHandler(pipeline + " runs on a builtin.module and cannot be "
                                 "nested under '" +
                      anchor + "': put it at the top level of the pipeline");
}

void kiln::registerKilnPasses() {
  registerKilnTestPasses();
  registerKilnTransformsPasses();
  registerModulePipeline<KilnEagerPipelineOptions>(
      "kiln-eager",
      "Capture-level passes only (backend=\"eager\"): split graphs at "
      "disallowed ops, trace through allow_in_graph calls, outline graphs, "
      "canonicalize; graphs then run in the interpreter",
      buildKilnEagerPipeline);
  registerModulePipeline<KilnAOTEagerPipelineOptions>(
      "kiln-aot-eager",
      "backend=\"aot_eager\": the kiln-eager passes, kiln-functionalize, "
      "kiln-decompose, then "
      "AOTAutograd: every kg.grad's graph is differentiated and partitioned "
      "into forward and backward graph calls; graphs run in the interpreter",
      buildKilnAOTEagerPipeline);
}
