//===- NVPTXBackend.cpp - Compiled GPU code as a host object --------------===//
//
// Part of Kiln. See kiln/Backend/NVPTX/NVPTXBackend.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/NVPTX/NVPTXBackend.h"
#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Support/ThreadDiagnostics.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace kiln;

std::string kiln::nvptx::pipelineString(const CodeOptions &o) {
  return llvm::formatv("kiln-nvptx{{chip={0} features={1} emit={2} "
                       "block-size={3} max-blocks={4} fuse={5} "
                       "block-reduce={6} matmul={7}}",
                       o.chip, o.features, o.emit, o.blockSize, o.maxBlocks,
                       o.fuse ? "true" : "false",
                       o.blockReduce ? "true" : "false", o.matmul)
      .str();
}

static void setPipelineOptions(const nvptx::CodeOptions &o,
                               KilnNVPTXPipelineOptions &pipe) {
  pipe.chip = o.chip;
  pipe.features = o.features;
  pipe.emit = o.emit;
  pipe.blockSize = o.blockSize;
  pipe.maxBlocks = o.maxBlocks;
  pipe.fuse = o.fuse;
  pipe.blockReduce = o.blockReduce;
  pipe.matmul = o.matmul;
}

LogicalResult kiln::nvptx::verifyOptions(const CodeOptions &o,
                                         std::string &error) {
  KilnNVPTXPipelineOptions pipe;
  setPipelineOptions(o, pipe);
  return verifyKilnNVPTXPipelineOptions(pipe, error);
}

void kiln::nvptx::registerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

/// `_mlir__mlir_ciface_<entry>(void **args)`: calls the C interface
/// `_mlir_ciface_<entry>` with *args[i] as its i-th parameter (and stores a
/// non-void result at args[n]), the calling convention of CPU packages.
static void addPackedWrapper(llvm::Module &m, llvm::Function *f) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy},
                                       /*isVarArg=*/false);
  auto *w = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                   "_mlir_" + f->getName(), m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", w));
  llvm::Value *args = w->getArg(0);
  llvm::SmallVector<llvm::Value *> callArgs;
  for (auto [i, param] : llvm::enumerate(f->args())) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptrTy, args, i);
    llvm::Value *addr = b.CreateLoad(ptrTy, slot);
    callArgs.push_back(b.CreateLoad(param.getType(), addr));
  }
  llvm::Value *result = b.CreateCall(f, callArgs);
  if (!f->getReturnType()->isVoidTy()) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptrTy, args, f->arg_size());
    b.CreateStore(result, b.CreateLoad(ptrTy, slot));
  }
  b.CreateRetVoid();
}

LogicalResult kiln::nvptx::compileObject(ModuleOp module,
                                         ArrayRef<std::string> entries,
                                         const CodeOptions &options,
                                         StringRef objectPath,
                                         std::string &error,
                                         unsigned *kernels) {
  if (failed(verifyOptions(options, error))) {
    error = "kiln-nvptx: " + error;
    return failure();
  }
  if (failed(pruneToEntries(module, entries, error)))
    return failure();
  MLIRContext *ctx = module.getContext();
  for (const std::string &entry : entries)
    module.lookupSymbol<func::FuncOp>(entry)->setAttr(
        "llvm.emit_c_interface", UnitAttr::get(ctx));

  {
    std::string diags;
    llvm::raw_string_ostream os(diags);
    ThreadDiagnosticHandler handler(
        ctx,
        [&](Diagnostic &d) {
          os << formatLocationStack(d.getLocation()).front() << ": " << d
             << "\n";
        },
        /*takeUnowned=*/true);
    PassManager pm(ctx);
    KilnNVPTXPipelineOptions pipe;
    setPipelineOptions(options, pipe);
    if (failed(buildKilnNVPTXPipeline(pm, pipe)) || failed(pm.run(module))) {
      error = "kiln-nvptx failed:\n" + diags;
      while (!error.empty() && error.back() == '\n')
        error.pop_back();
      return failure();
    }
  }
  if (kernels) {
    // Kernel functions launched (a gpu.binary holds every kernel of one
    // host function).
    llvm::StringSet<> names;
    module.walk([&](gpu::LaunchFuncOp launch) {
      std::string name;
      llvm::raw_string_ostream os(name);
      os << launch.getKernel();
      names.insert(name);
    });
    *kernels = names.size();
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "kiln_gpu_package");
  if (!llvmModule) {
    error = "translating the host code to LLVM IR failed";
    return failure();
  }
  std::unique_ptr<llvm::TargetMachine> tm =
      cpu::hostTargetMachine(/*pic=*/true, error);
  if (!tm)
    return failure();
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  for (const std::string &entry : entries) {
    llvm::Function *f = llvmModule->getFunction("_mlir_ciface_" + entry);
    if (!f) {
      error = "the host code has no C interface for @" + entry;
      return failure();
    }
    addPackedWrapper(*llvmModule, f);
  }
  cpu::optimizeHostModule(*llvmModule, tm.get());
  return cpu::emitObjectFile(*llvmModule, *tm, objectPath, error);
}
