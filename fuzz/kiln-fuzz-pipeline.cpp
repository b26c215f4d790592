//===- kiln-fuzz-pipeline.cpp - libFuzzer harness: the named pipelines ----===//
//
// Part of Kiln (docs/debugging.md, "Fuzzing"). The first byte picks a named
// pipeline (bits 0-2) and where the program comes from (bit 7): the rest of
// the bytes as MLIR text (mutated lit tests), or a program the generator
// (kiln/Testing/ProgramGenerator.h) builds from them, with size-0 dims when
// bit 6 is set (since gen28 the default generator, version 3: kg programs
// with ref arguments written in place for about 2 in 3 inputs long enough
// to read past version 2's program). Bit 3 (since fz27; no older seed sets it) picks `kiln-nvptx`
// instead, its options from bits 0-2: `block-reduce=false` (bit 0),
// `matmul=kernel` (bit 1), `emit=bin` (bit 2: ptxas assembles the PTX, a
// subprocess, so an eighth of the inputs; otherwise emit=isa, in process).
// Programs that do not
// parse and verify are skipped. Findings: a crash or sanitizer report; a
// pass that leaves invalid IR without failing (every pass's output is
// verified); a pipeline that fails without an error, or with an error that
// has no location.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"
#include "kiln/Testing/Differential.h"
#include "kiln/Transforms/Passes.h"
#include "kiln/Autodiff/VJPInterface.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

static const char *const kPipelines[] = {
    "kiln-eager",     "kiln-aot-eager", "kiln-functionalize",
    "kiln-decompose", "kiln-autodiff",  "kiln-partition",
    "kiln-fuse",      "kiln-cpu",
};

/// The kiln-nvptx pipeline with the options that bits 0-2 of `byte0` pick.
static std::string nvptxPipeline(uint8_t byte0) {
  std::string options;
  if (byte0 & 1)
    options += " block-reduce=false";
  if (byte0 & 2)
    options += " matmul=kernel";
  options += byte0 & 4 ? " emit=bin" : " emit=isa";
  return "kiln-nvptx{" + options.substr(1) + "}";
}

namespace {
/// Verifies the IR after every pass that succeeded.
struct VerifyEachPass : PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (succeeded(verify(op)))
      return;
    fprintf(stderr, "pass '%s' succeeded but left IR that does not verify\n",
            pass->getArgument().str().c_str());
    abort();
  }
};
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  kiln::registerKilnPasses();
  kiln::registerKilnConversionPasses();
  kiln::registerKilnCPUPipeline();
  kiln::registerKilnNVPTXPipeline();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    kiln::testing::registerTestingDialects(*r);
    kiln::autodiff::registerVJPInterfaces(*r);
    // kiln-nvptx translates gpu.module bodies to LLVM IR and PTX.
    registerAllToLLVMIRTranslations(*r);
    return r;
  }();
  std::string pipeline = kPipelines[data[0] % std::size(kPipelines)];
  if (data[0] & 0x08)
    pipeline = nvptxPipeline(data[0]);
  bool generated = data[0] & 0x80;
  std::string text;
  if (generated) {
    // Bit 6: the generator's size-0 dims (GeneratorOptions::zeroDims).
    kiln::testing::GeneratorOptions gen;
    gen.zeroDims = data[0] & 0x40;
    text = kiln::testing::generateProgram(llvm::ArrayRef(data + 1, size - 1),
                                          gen)
               .text;
  }
  else
    text.assign(reinterpret_cast<const char *>(data + 1), size - 1);

  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  unsigned errors = 0, unlocated = 0;
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      ++errors;
      if (isa<UnknownLoc>(diag.getLocation()))
        ++unlocated;
    }
    llvm::raw_string_ostream(diagnostics)
        << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  if (generated && errors) {
    fprintf(stderr, "the generator's program does not verify:\n%s\n%s",
            text.c_str(), diagnostics.c_str());
    abort();
  }
  errors = unlocated = 0;
  diagnostics.clear();

  PassManager pm(&context, ModuleOp::getOperationName());
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<VerifyEachPass>());
  if (failed(parsePassPipeline(pipeline, pm))) {
    fprintf(stderr, "pipeline '%s' is not registered\n", pipeline.c_str());
    abort();
  }
  if (succeeded(pm.run(*module)))
    return 0;
  if (errors == 0 || unlocated) {
    fprintf(stderr,
            "pipeline '%s' failed %s:\n%s\n-- program --\n%s\n",
            pipeline.c_str(),
            errors ? "with an error that has no location"
                   : "without an error",
            diagnostics.c_str(), text.c_str());
    abort();
  }
  return 0;
}
