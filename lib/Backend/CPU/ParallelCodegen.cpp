//===- ParallelCodegen.cpp - Machine code of a module on several threads --===//
//
// Part of Kiln. See kiln/Backend/CPU/ParallelCodegen.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/ParallelCodegen.h"

#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace mlir;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// `_mlir_<name>(void **args)`: calls `name` with *args[i] as argument i and
/// stores a result (if any) through args[n], n the number of arguments.
LogicalResult addPackedWrapper(llvm::Module &m, StringRef name,
                               std::string &error) {
  llvm::Function *f = m.getFunction(name);
  if (!f || f->isDeclaration()) {
    error = "no function '" + name.str() + "' in the LLVM module";
    return failure();
  }
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {ptr}, false);
  auto *wrapper = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, "_mlir_" + name, m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::Value *list = wrapper->getArg(0);
  SmallVector<llvm::Value *> args;
  for (llvm::Argument &a : f->args()) {
    llvm::Value *slot = b.CreateGEP(ptr, list, b.getInt64(a.getArgNo()));
    args.push_back(b.CreateLoad(a.getType(), b.CreateLoad(ptr, slot)));
  }
  llvm::CallInst *call = b.CreateCall(f, args);
  if (!call->getType()->isVoidTy()) {
    llvm::Value *slot = b.CreateGEP(ptr, list, b.getInt64(f->arg_size()));
    b.CreateStore(call, b.CreateLoad(ptr, slot));
  }
  b.CreateRetVoid();
  return success();
}

/// One part's times: -O3 and machine code.
struct PartTimes {
  double opt = 0, codegen = 0;
};

/// The object of the module in `bitcode`, parsed into a context of this
/// thread's own, optimized (-O3) and turned into machine code; empty with
/// `error` set on failure.
std::string objectOfBitcode(StringRef bitcode, llvm::TargetMachine *tm,
                            PartTimes &times, std::string &error) {
  auto t0 = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "kiln-part"), ctx);
  if (!module) {
    error = "reading a part back: " + llvm::toString(module.takeError());
    return {};
  }
  kiln::cpu::optimizeHostModule(**module, tm);
  times.opt = secondsSince(t0);
  auto t1 = std::chrono::steady_clock::now();
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return {};
  }
  pm.run(**module);
  times.codegen = secondsSince(t1);
  return std::string(object.str());
}

} // namespace

unsigned kiln::cpu::codegenParts(unsigned kernels, unsigned threads) {
  if (const char *s = std::getenv("KILN_CPU_CODEGEN_THREADS")) {
    char *end = nullptr;
    unsigned long v = std::strtoul(s, &end, 10);
    if (end != s && *end == '\0' && v >= 1)
      return std::min<unsigned long>(v, 64);
  }
  unsigned cores = std::max(1u, hostCores());
  return kernels >= 8 ? (threads ? std::min(threads, cores) : cores) : 1;
}

std::vector<std::string> kiln::cpu::compileToObjects(
    ModuleOp module, ArrayRef<std::string> packed, unsigned parts,
    llvm::function_ref<void(llvm::Module &)> prepare, ObjectsTimes &times,
    std::string &error) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<llvm::TargetMachine> tm = hostTargetMachine(false, error);
  if (!tm)
    return {};
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(module, ctx);
  if (!m) {
    error = "translation to LLVM IR failed";
    return {};
  }
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple());
  for (const std::string &name : packed)
    if (failed(addPackedWrapper(*m, name, error)))
      return {};
  prepare(*m);
  times.translate = secondsSince(t0);

  // Split before -O3: each part is optimized and turned into machine code
  // on a thread of its own (-O3 was the largest single-threaded phase of a
  // model's compile). SplitModule keeps each internal global or function
  // in the part of its users, so a kernel's constants and private helpers
  // stay with it; what crosses parts are calls from the entries to the
  // kernels, which are not inlined into the entries any more.
  auto t2 = std::chrono::steady_clock::now();
  std::vector<std::string> bitcodes;
  llvm::SplitModule(*m, std::max(1u, parts),
                    [&](std::unique_ptr<llvm::Module> part) {
                      std::string bc;
                      llvm::raw_string_ostream os(bc);
                      llvm::WriteBitcodeToFile(*part, os);
                      os.flush();
                      bitcodes.push_back(std::move(bc));
                    });
  m.reset();
  // A target machine per thread, made here (target registration is not
  // thread-safe).
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (size_t i = 0; i < bitcodes.size(); ++i) {
    machines.push_back(hostTargetMachine(false, error));
    if (!machines.back())
      return {};
  }
  std::vector<std::string> objects(bitcodes.size()), errors(bitcodes.size());
  std::vector<PartTimes> partTimes(bitcodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < bitcodes.size(); ++i)
    threads.emplace_back([&, i] {
      objects[i] = objectOfBitcode(bitcodes[i], machines[i].get(),
                                   partTimes[i], errors[i]);
    });
  if (!bitcodes.empty())
    objects[0] = objectOfBitcode(bitcodes[0], machines[0].get(), partTimes[0],
                                 errors[0]);
  for (std::thread &t : threads)
    t.join();
  // The parts run side by side: llvm-opt is the longest part's -O3, codegen
  // the rest of the threads' wall time.
  double wall = secondsSince(t2);
  for (const PartTimes &p : partTimes)
    times.llvmOpt = std::max(times.llvmOpt, p.opt);
  times.codegen = std::max(0.0, wall - times.llvmOpt);
  for (size_t i = 0; i < objects.size(); ++i)
    if (objects[i].empty()) {
      error = "machine code of part " + std::to_string(i) + ": " + errors[i];
      return {};
    }
  return objects;
}
