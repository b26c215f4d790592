//===- kiln-compile.cpp - Write deployable packages -----------------------===//
//
// Part of Kiln. Compiles the func.func or kg.program entries of an MLIR file
// with the CPU backend (or kiln-nvptx for a GPU) and writes them as one package: a shared object with
// the host code and its manifest, which libkiln_rt (runtime/, no LLVM or
// MLIR) loads and runs. A thin driver over kiln::package::writePackage
// (kiln/Package/Package.h); see docs/packages.md.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Backend/NVPTX/NVPTXBackend.h"
#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Package/Package.h"
#include "kiln/Support/ToolErrors.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kiln;
namespace cl = llvm::cl;

static cl::OptionCategory category("kiln-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::cat(category),
                                      cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> outputFile("o", cl::cat(category), cl::Required,
                                       cl::desc("The package to write (.so)"),
                                       cl::value_desc("file"));
static cl::list<std::string>
    entries("entry", cl::cat(category), cl::CommaSeparated,
            cl::desc("func.func or kg.program entries to package (default: "
                     "the module's only kg.program, else its only public "
                     "function)"));
static cl::opt<std::string> backend(
    "backend", cl::cat(category), cl::init("cpu"),
    cl::desc("cpu (host code) or nvptx (CUDA: kernels for an NVIDIA GPU "
             "plus host code that launches them; alias cuda)"));
static cl::opt<std::string>
    chip("chip", cl::cat(category), cl::init("sm_90a"),
         cl::desc("nvptx: the GPU architecture (sm_80, sm_90a, ...)"));
static cl::opt<std::string>
    ptxFeatures("ptx-features", cl::cat(category), cl::init("+ptx80"),
                cl::desc("nvptx: the PTX ISA version (+ptx80)"));
static cl::opt<std::string> emit(
    "emit", cl::cat(category), cl::init("bin"),
    cl::desc("nvptx: bin (cubin, assembled now by ptxas for --chip) or isa "
             "(PTX, compiled by the driver when the package loads)"));
static cl::opt<unsigned>
    blockSize("block-size", cl::cat(category), cl::init(256),
              cl::desc("nvptx: threads per block (1 to 1024)"));
static cl::opt<bool> gpuFuse("gpu-fuse", cl::cat(category), cl::init(true),
                             cl::desc("nvptx: fuse elementwise ops into "
                                      "their consumers' kernels"));
static cl::opt<bool> gpuBlockReduce(
    "gpu-block-reduce", cl::cat(category), cl::init(true),
    cl::desc("nvptx: row reductions as a block per row (warp shuffles)"));
static cl::opt<std::string> gpuMatmul(
    "gpu-matmul", cl::cat(category), cl::init("cublas"),
    cl::desc("nvptx: f32/f64 matmuls as cuBLAS calls through libkiln_rt "
             "(cublas) or generated kernels (kernel)"));
static cl::opt<unsigned> threads(
    "cpu-threads", cl::cat(category), cl::init(0),
    cl::desc("Threads of the generated code and OpenBLAS (0: all cores)"));
static cl::opt<std::string>
    matmul("matmul", cl::cat(category), cl::init("auto"),
           cl::desc("Matmul implementation (auto, openblas or generated)"));
static cl::opt<std::string>
    sgemm("sgemm", cl::cat(category), cl::init("auto"),
          cl::desc("Library of f32 products that go to a BLAS call (auto: "
                   "oneDNN's sgemm where libkiln_onednn is built, else "
                   "OpenBLAS; openblas; onednn)"));
static cl::opt<std::string>
    conv("conv", cl::cat(category), cl::init("auto"),
         cl::desc("Convolution implementation (auto, im2col, direct or onednn)"));
static cl::opt<bool> optimize(
    "cpu-optimize", cl::cat(category), cl::init(true),
    cl::desc("Tile, vectorize and thread (false: scalar single-threaded "
             "code, which needs no libomp)"));
static cl::opt<bool> fuse("cpu-fuse", cl::cat(category), cl::init(true),
                          cl::desc("Run kiln-fuse and kiln-form-kernels"));
static cl::opt<std::string>
    linker("linker", cl::cat(category),
           cl::desc("Linker (default: ld.lld-22, ld.lld, then ld on PATH)"),
           cl::value_desc("program"));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "kiln-compile: error: " << msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  kiln::initToolSignals(); // e.g. SIGXFSZ under `ulimit -f`
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "Kiln: compile the entries of an MLIR file for this CPU (or, with "
          "--backend=nvptx,\nfor an NVIDIA GPU) into a package (a shared "
          "object with its manifest) that\nlibkiln_rt runs without the "
          "compiler. See docs/packages.md and docs/gpu.md.\n"))
    return 1;
  if (backend != "cpu" && backend != "nvptx" && backend != "cuda")
    return fail("--backend must be cpu or nvptx (alias cuda), not '" +
                backend + "'");
  if (matmul != "auto" && matmul != "openblas" && matmul != "generated")
    return fail("--matmul must be auto, openblas or generated, not '" +
                matmul + "'");
  if (sgemm != "auto" && sgemm != "openblas" && sgemm != "onednn")
    return fail("--sgemm must be auto, openblas or onednn, not '" + sgemm +
                "'");
  if (conv != "auto" && conv != "im2col" && conv != "direct" &&
      conv != "onednn")
    return fail("--conv must be auto, im2col, direct or onednn, not '" + conv +
                "'");

  DialectRegistry registry;
  registry.insert<kt::KTDialect, kg::KGDialect, func::FuncDialect>();
  cpu::registerCPUBackendDialects(registry);
  nvptx::registerDialects(registry);
  MLIRContext context(registry);
  bool hadError = false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      hadError = true;
    llvm::errs() << kiln::formatLocationStack(diag.getLocation()).front()
                 << ": "
                 << (diag.getSeverity() == DiagnosticSeverity::Error
                         ? "error"
                         : "note")
                 << ": " << diag.str() << "\n";
    return success();
  });

  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail("cannot read '" + inputFile + "': " + errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("invalid IR in '" + inputFile + "'");

  package::PackageOptions options;
  options.entries.assign(entries.begin(), entries.end());
  options.cpu.threads = threads;
  options.cpu.matmul = matmul;
  options.cpu.sgemm = sgemm;
  options.cpu.conv = conv;
  options.cpu.optimize = optimize;
  options.cpu.fuse = fuse;
  options.linker = linker;
  if (backend != "cpu") {
    options.device = "cuda";
    options.gpu.chip = chip;
    options.gpu.features = ptxFeatures;
    options.gpu.emit = emit;
    options.gpu.blockSize = blockSize;
    options.gpu.fuse = gpuFuse;
    options.gpu.blockReduce = gpuBlockReduce;
    options.gpu.matmul = gpuMatmul;
  }
  std::string error;
  if (failed(package::writePackage(*module, options, outputFile, error)))
    return fail(error);
  return 0;
}
