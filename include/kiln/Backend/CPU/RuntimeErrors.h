//===- RuntimeErrors.h - Run-time errors of JIT-compiled CPU code -*- C++ -*-===//
//
// Part of Kiln. The JIT side of kiln/Conversion/KTToLinalg/RuntimeChecks.h:
// the per-call state itself (CallContext, CallScope, the OMPT tool that
// follows OpenMP workers, kiln_cpu_runtime_error) is in the compiled-code
// runtime, kiln/rt/CallContext.h (runtime/, no LLVM or MLIR); this adds
// what needs the ExecutionEngine or the lowered module.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_RUNTIMEERRORS_H
#define KILN_BACKEND_CPU_RUNTIMEERRORS_H

#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"
#include "kiln/rt/CallContext.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class ModuleOp;
} // namespace mlir

namespace kiln::cpu {

static_assert(rt::kCallErrorValues == kiln::kRuntimeErrorValues,
              "the runtime and the lowering disagree on "
              "kiln_cpu_runtime_error's signature");

using rt::CallContext;
using rt::CallScope;
using rt::callsRunConcurrently;
using rt::currentCall;
using rt::initializeOpenMP;
using rt::prepareOpenMPTool;

/// Makes kiln_cpu_runtime_error resolvable by the JIT-compiled code.
void registerRuntimeErrorSymbol(mlir::ExecutionEngine &engine);
/// The symbol registerRuntimeErrorSymbol defines, for another JIT (code
/// loaded from the disk cache, DiskCache.h).
llvm::orc::SymbolMap runtimeErrorSymbols(llvm::orc::MangleAndInterner &interner);
/// The message templates of a lowered module (its kiln.runtime_errors).
std::vector<std::string> runtimeErrorMessages(mlir::ModuleOp module);

/// The formatted first report of the call, if any, and forgets it.
std::optional<std::string>
takeRuntimeError(CallContext &context, llvm::ArrayRef<std::string> messages);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_RUNTIMEERRORS_H
