//===- ParallelCodegen.h - Machine code of a module on several threads -*- C++ -*-===//
//
// Part of Kiln. LLVM's part of a CPU compile (translation, -O3, machine code)
// ran on one thread: for a model's hundreds of kernel functions it is most of
// the compile time (a resnet18 training step: ~75%, ~0.3 s per kernel
// function). compileToObjects translates the module once, adds the entries'
// packed wrappers, then splits it (llvm::SplitModule) into `parts` modules
// that are optimized (-O3) and turned into machine code on `parts` threads,
// each in an LLVMContext of its own (a bitcode round trip: an LLVMContext is
// not thread-safe). Internal symbols stay in their users' part; calls from
// an entry to a kernel in another part are not inlined. The objects are linked by one LLJIT (CPUBackend.cpp,
// codeFromObjects), as the disk cache's objects are.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_PARALLELCODEGEN_H
#define KILN_BACKEND_CPU_PARALLELCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::cpu {

/// How many pieces the machine code of a module with `kernels` kernel
/// functions is generated in: KILN_CPU_CODEGEN_THREADS if set (1: one
/// thread; N >= 2: N pieces whatever the size, e.g. in tests), else the
/// host's cores (at most `threads`, the compiled code's thread count, when
/// not 0) when the module has at least 8 kernel functions, else 1.
unsigned codegenParts(unsigned kernels, unsigned threads);

struct ObjectsTimes {
  double translate = 0, llvmOpt = 0, codegen = 0;
};

/// The relocatable objects of `module` (LLVM dialect, as kiln-cpu leaves
/// it) for the host, in `parts` pieces (see above). `packed`: the functions
/// that get a packed wrapper `_mlir_<name>(void **args)` (as
/// mlir::ExecutionEngine makes them). `prepare` runs on the LLVM module
/// before -O3. Empty with `error` set on failure.
std::vector<std::string>
compileToObjects(mlir::ModuleOp module, llvm::ArrayRef<std::string> packed,
                 unsigned parts,
                 llvm::function_ref<void(llvm::Module &)> prepare,
                 ObjectsTimes &times, std::string &error);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_PARALLELCODEGEN_H
