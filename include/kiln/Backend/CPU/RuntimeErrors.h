//===- RuntimeErrors.h - Run-time errors reported by compiled code -*- C++ -*-===//
//
// Part of Kiln. The host side of kiln/Conversion/KTToLinalg/RuntimeChecks.h:
// compiled code calls kiln_cpu_runtime_error(id, a, b) on a failed check;
// the first report of the calling thread is kept until the backend takes it
// after the call. (Generated code runs on the calling thread; a threaded
// backend must forward reports to it.)
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_RUNTIMEERRORS_H
#define KILN_BACKEND_CPU_RUNTIMEERRORS_H

#include "llvm/ADT/ArrayRef.h"

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
/// Forgets a pending report of this thread (call before running code).
void clearRuntimeError();
/// The formatted first report of this thread since clearRuntimeError, if
/// any, and forgets it.
std::optional<std::string>
takeRuntimeError(llvm::ArrayRef<std::string> messages);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_RUNTIMEERRORS_H
