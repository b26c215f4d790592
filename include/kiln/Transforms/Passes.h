//===- Passes.h - Kiln capture-level passes ---------------------*- C++ -*-===//
//
// Part of Kiln. Declarations of the passes in Passes.td and of the named
// pipelines built from them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PASSES_H
#define KILN_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Transforms/Passes.h.inc"

/// Options of the `kiln-eager` pipeline (`backend="eager"`).
struct KilnEagerPipelineOptions
    : public mlir::PassPipelineOptions<KilnEagerPipelineOptions> {
  ListOption<std::string> disallow{
      *this, "disallow",
      llvm::cl::desc("Ops moved out of graphs into breaks "
                     "(disallow_in_graph), e.g. kt.abs,kt.exp")};
};

/// Appends the `kiln-eager` pipeline to `pm` (a module pass manager):
/// kiln-split-graphs{disallow=...}, kiln-inline-allowed, kiln-outline-graphs,
/// kiln-aot-autograd{partition=none} (kg.grad differentiated, not
/// partitioned), canonicalize.
void buildKilnEagerPipeline(mlir::OpPassManager &pm,
                            const KilnEagerPipelineOptions &options);

/// Options of the `kiln-aot-eager` pipeline (`backend="aot_eager"`).
struct KilnAOTEagerPipelineOptions
    : public mlir::PassPipelineOptions<KilnAOTEagerPipelineOptions> {
  ListOption<std::string> disallow{
      *this, "disallow",
      llvm::cl::desc("Ops moved out of graphs into breaks "
                     "(disallow_in_graph), e.g. kt.abs,kt.exp")};
  Option<std::string> partition{
      *this, "partition",
      llvm::cl::desc("How kg.grad's joint graphs are split: mincut (default), "
                     "save-all, recompute-all, or none (no split)"),
      llvm::cl::init("mincut")};
  ListOption<std::string> keep{
      *this, "keep",
      llvm::cl::desc("Composite ops kiln-decompose keeps, e.g. kt.softmax")};
  Option<bool> foldConvBN{
      *this, "fold-conv-bn",
      llvm::cl::desc("Fold inference batch_norm into the conv2d before it "
                     "(kiln-fold-conv-batch-norm, before kiln-decompose); "
                     "the Python cpu backend sets it"),
      llvm::cl::init(false)};
  Option<bool> passPrimals{
      *this, "pass-primals",
      llvm::cl::desc("kiln-aot-autograd's pass-primals: saved graph inputs "
                     "are passed to the backward's graph call, not returned "
                     "(copied) by the forward"),
      llvm::cl::init(false)};
};

/// Appends the `kiln-aot-eager` pipeline to `pm`: kiln-split-graphs
/// (`disallow`), kiln-inline-allowed, kiln-outline-graphs,
/// kiln-functionalize, kiln-verify-functional, kiln-fold-conv-batch-norm
/// (when `fold-conv-bn`), kiln-decompose (`keep`),
/// kiln-aot-autograd{partition=...}, canonicalize.
void buildKilnAOTEagerPipeline(mlir::OpPassManager &pm,
                               const KilnAOTEagerPipelineOptions &options);

/// Registers every Kiln pass and named pipeline with the global registry.
void registerKilnPasses();

/// For the builders of Kiln's named pipelines (kiln-eager, kiln-aot-eager,
/// kiln-cpu, kiln-nvptx), whose passes run on a builtin.module: fails with
/// an error through `errorHandler` when `pm` is nested under another op
/// (`func.func(kiln-cpu)`), where adding their module passes would be
/// LLVM's fatal error "Can't add pass ...". Op-agnostic (`any(...)`) and
/// module pass managers pass.
mlir::LogicalResult
checkModulePipelineAnchor(mlir::OpPassManager &pm, llvm::StringRef pipeline,
                          llvm::function_ref<mlir::LogicalResult(
                              const llvm::Twine &)> errorHandler);

/// Registers a named Kiln pipeline over a module (PassPipelineRegistration
/// with the anchor check above).
template <typename Options>
void registerModulePipeline(
    llvm::StringRef arg, llvm::StringRef description,
    void (*build)(mlir::OpPassManager &, const Options &)) {
  mlir::registerPassPipeline(
      arg, description,
      [arg, build](mlir::OpPassManager &pm, llvm::StringRef text,
                   llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
                       errorHandler) -> mlir::LogicalResult {
        Options options;
        if (mlir::failed(options.parseFromString(text)) ||
            mlir::failed(checkModulePipelineAnchor(pm, arg, errorHandler)))
          return mlir::failure();
        build(pm, options);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(Options());
      });
}

/// Test-only passes that plant bugs (lib/Transforms/TestPasses.cpp):
/// -kiln-test-crash-on{op=...} aborts, -kiln-test-miscompile{op=... with=...}
/// replaces each `op` by a `with` op; registered by registerKilnPasses.
void registerKilnTestPasses();
std::unique_ptr<mlir::Pass> createKilnTestMiscompilePass(llvm::StringRef op,
                                                         llvm::StringRef with);

} // namespace kiln

#endif // KILN_TRANSFORMS_PASSES_H
