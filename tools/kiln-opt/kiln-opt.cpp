//===- kiln-opt.cpp - Kiln's optimizer driver -----------------------------===//
//
// Part of Kiln. `mlir-opt` with every upstream dialect and pass plus Kiln's
// dialects and passes; every usual mlir-opt flag works.
//
// Unlike mlir-opt, `-o FILE` is written only when the run succeeds: the
// output goes to a temporary next to FILE, renamed onto it at the end
// (kiln/Support/OutputFiles.h). A failing run (a parse error, a failing
// pass, -verify-diagnostics mismatches) leaves FILE as it was, also when FILE
// is the input. Standard output (`-o -`, the default) is written as
// mlir-opt writes it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Autodiff/VJPInterface.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Support/Logging.h"
#include "kiln/Support/OutputFiles.h"
#include "kiln/Support/Trace.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "kiln/Support/ToolErrors.h"
#include "kiln/Support/ForkServer.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;

static llvm::cl::opt<std::string> logsSpec(
    "kiln-logs", llvm::cl::value_desc("topics"),
    llvm::cl::desc("Log what Kiln's passes decide, as KILN_LOGS (which it "
                   "replaces): fusion, partition, codegen, ..., all; +name "
                   "verbose, -name off (docs/debugging.md)"));
static llvm::cl::opt<std::string> traceFile(
    "kiln-trace", llvm::cl::value_desc("file.json"),
    llvm::cl::desc("Write a Chrome trace of every pass run (Perfetto, "
                   "chrome://tracing), as KILN_TRACE"));

static int runMain(int argc, char **argv);

static int toolMain(int argc, char **argv);

int main(int argc, char **argv) {
  // `kiln-opt --fork-server`: the test suite's server of forked runs
  // (kiln/Support/ForkServer.h).
  int serverExit = 0;
  if (kiln::serveForkedRuns(argc, argv, toolMain, serverExit))
    return serverExit;
  return toolMain(argc, argv);
}

static int toolMain(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  kiln::installToolFatalErrorHandlers("kiln-opt");
  int rc = runMain(argc, argv);
  std::string traceError;
  if (!kiln::trace::flush(traceError)) {
    llvm::errs() << "kiln-opt: error: " << traceError << "\n";
    return rc ? rc : EXIT_FAILURE;
  }
  return rc;
}

static int runMain(int argc, char **argv) {
  registerAllPasses();
  kiln::registerKilnPasses();
  kiln::registerKilnConversionPasses();
  kiln::registerKilnCPUPipeline();
  kiln::registerKilnNVPTXPipeline();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // kiln-nvptx translates gpu.module bodies to LLVM IR and PTX.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<kiln::kt::KTDialect, kiln::kg::KGDialect>();
  kiln::autodiff::registerVJPInterfaces(registry);

  // What MlirOptMain(argc, argv, ...) does, except for opening the output.
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, "Kiln optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (logsSpec.getNumOccurrences()) {
    std::string error;
    if (!kiln::logs::configure(logsSpec, error)) {
      llvm::errs() << "kiln-opt: error: --kiln-logs: " << error << "\n";
      return EXIT_FAILURE;
    }
  }
  if (traceFile.getNumOccurrences()) {
    std::string error;
    if (!kiln::trace::open(traceFile, error)) {
      llvm::errs() << "kiln-opt: error: --kiln-trace: " << error << "\n";
      return EXIT_FAILURE;
    }
  }
  // Every pass run recorded when a trace is open (--kiln-trace, KILN_TRACE).
  // (The config's setup function adds the command line's passes: kept.)
  config.setPassPipelineSetupFn(
      [base = MlirOptMainConfig(config)](PassManager &pm) {
        if (failed(base.setupPassPipeline(pm)))
          return failure();
        kiln::trace::instrument(pm);
        return success();
      });
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(MlirOptMain(llvm::outs(),
                                        llvm::MemoryBuffer::getMemBuffer(""),
                                        registry, config));
  if (inputFilename == "-" &&
      llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << "kiln-opt: error: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (outputFilename == "-")
    return asMainReturnCode(
        MlirOptMain(llvm::outs(), std::move(file), registry, config));

  LogicalResult result = failure();
  kiln::OutputFileSet output;
  if (llvm::Error e = output.add(outputFilename, [&](llvm::raw_ostream &os) {
        result = MlirOptMain(os, std::move(file), registry, config);
      })) {
    llvm::errs() << "kiln-opt: error: " << llvm::toString(std::move(e))
                 << "\n";
    return EXIT_FAILURE;
  }
  if (failed(result))
    return EXIT_FAILURE; // `output` removes the temporary
  if (llvm::Error e = output.commit()) {
    llvm::errs() << "kiln-opt: error: " << llvm::toString(std::move(e))
                 << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
