//===- RuntimeErrors.h - Run-time errors reported by compiled code -*- C++ -*-===//
//
// Part of Kiln. The host side of kiln/Conversion/KTToLinalg/RuntimeChecks.h:
// compiled code calls kiln_cpu_runtime_error(id, v0, ..., v7) on a failed
// check;
// the first report made during a call, by any thread (generated code runs on
// OpenMP worker threads too), is kept until the backend takes it after the
// call. The slot is process-wide, so a call holds a RuntimeErrorScope from
// before the code runs until the report is taken: CPU calls in one process
// run one at a time (each one already uses every core it was compiled for).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_RUNTIMEERRORS_H
#define KILN_BACKEND_CPU_RUNTIMEERRORS_H

#include "llvm/ADT/ArrayRef.h"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class ModuleOp;
} // namespace mlir

namespace kiln::cpu {

/// Makes kiln_cpu_runtime_error resolvable by the JIT-compiled code.
void registerRuntimeErrorSymbol(mlir::ExecutionEngine &engine);
/// The message templates of a lowered module (its kiln.runtime_errors).
std::vector<std::string> runtimeErrorMessages(mlir::ModuleOp module);
/// Held by a call while its compiled code runs: serializes calls and forgets
/// any earlier report when it starts.
class RuntimeErrorScope {
public:
  RuntimeErrorScope();
  ~RuntimeErrorScope();
  RuntimeErrorScope(const RuntimeErrorScope &) = delete;
  RuntimeErrorScope &operator=(const RuntimeErrorScope &) = delete;

private:
  std::unique_lock<std::mutex> lock;
};
/// The formatted first report since the current RuntimeErrorScope began, if
/// any, and forgets it. Call while holding the scope.
std::optional<std::string>
takeRuntimeError(llvm::ArrayRef<std::string> messages);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_RUNTIMEERRORS_H
