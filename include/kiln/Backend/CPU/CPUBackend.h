//===- CPUBackend.h - JIT-compiled CPU code for kt functions ----*- C++ -*-===//
//
// Part of Kiln. Compiles a function of kt ops with the `kiln-cpu` pipeline
// and the MLIR ExecutionEngine (LLVM -O3, host CPU), and calls it on host
// tensors through memref descriptors (`_mlir_ciface_<entry>`).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_CPUBACKEND_H
#define KILN_BACKEND_CPU_CPUBACKEND_H

#include "kiln/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace kiln::cpu {

/// Seconds spent compiling.
struct CompileTimes {
  double pipeline = 0; ///< kiln-cpu: kt -> LLVM dialect
  double jit = 0;      ///< LLVM IR translation, -O3, machine code
};

/// Registers what the JIT needs in a context (LLVM IR translations).
void registerCPUBackendDialects(mlir::DialectRegistry &registry);

/// A compiled entry function. Arguments and results are ranked tensors of
/// f32, f64, f16, bf16, i64, i32 or i1 (any rank, `?` dims allowed).
class CPUExecutable {
public:
  ~CPUExecutable();

  /// Compiles `entry` of `module`: a clone of the module (its func.func ops)
  /// goes through `kiln-cpu` and the ExecutionEngine; `module` is unchanged.
  /// The context must have registerCPUBackendDialects' registrations.
  static mlir::FailureOr<std::unique_ptr<CPUExecutable>>
  compile(mlir::ModuleOp module, llvm::StringRef entry, std::string &error,
          CompileTimes *times = nullptr);

  /// Compiles several entries of `module` together: one clone holding the
  /// entries and the functions they reference, one run of `pipeline` (a
  /// textual module pipeline ending in LLVM, e.g. "kiln-cpu{...}"; empty for
  /// kiln-cpu with default options), one JIT module. The executables share
  /// the JIT (it lives while any of them does); result i is `entries[i]`.
  static mlir::FailureOr<llvm::SmallVector<std::unique_ptr<CPUExecutable>>>
  compileAll(mlir::ModuleOp module, llvm::ArrayRef<std::string> entries,
             llvm::StringRef pipeline, std::string &error,
             CompileTimes *times = nullptr);

  /// Calls the entry. Inputs are checked against the argument types; results
  /// (buffers the compiled code allocated) are copied into new tensors and
  /// freed.
  mlir::FailureOr<llvm::SmallVector<interp::Tensor>>
  call(llvm::ArrayRef<interp::Tensor> args, std::string &error) const;

private:
  CPUExecutable() = default;
  std::shared_ptr<mlir::ExecutionEngine> engine;
  std::string symbol;
  struct Sig {
    interp::DType dtype;
    llvm::SmallVector<int64_t> shape; // kDynamic for `?`
  };
  llvm::SmallVector<Sig> argSigs, resultSigs;
  /// Message templates of the run-time checks (RuntimeErrors.h).
  std::shared_ptr<const std::vector<std::string>> runtimeErrors;
};

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_CPUBACKEND_H
