//===- RuntimeErrors.cpp - Run-time errors reported by compiled code ------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/RuntimeErrors.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <mutex>

using namespace mlir;

namespace {
struct Pending {
  bool set = false;
  int64_t id = 0;
  int64_t values[kiln::kRuntimeErrorValues] = {};
};
// Process-wide: reports come from whichever thread ran the failing element
// (the calling thread or an OpenMP worker).
std::mutex pendingMutex;
Pending pending;
// Held by the RuntimeErrorScope of the call whose code is running.
std::mutex callMutex;
} // namespace

extern "C" void kiln_cpu_runtime_error(int64_t id, int64_t v0, int64_t v1,
                                       int64_t v2, int64_t v3, int64_t v4,
                                       int64_t v5, int64_t v6, int64_t v7) {
  static_assert(kiln::kRuntimeErrorValues == 8, "update the signature");
  std::lock_guard<std::mutex> guard(pendingMutex);
  if (!pending.set)
    pending = {true, id, {v0, v1, v2, v3, v4, v5, v6, v7}};
}

void kiln::cpu::registerRuntimeErrorSymbol(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner(kRuntimeErrorFn)] = {
        llvm::orc::ExecutorAddr::fromPtr(&kiln_cpu_runtime_error),
        llvm::JITSymbolFlags::Exported};
    return map;
  });
}

std::vector<std::string> kiln::cpu::runtimeErrorMessages(ModuleOp module) {
  std::vector<std::string> out;
  if (auto a = module->getAttrOfType<ArrayAttr>(kRuntimeErrorsAttr))
    for (Attribute m : a)
      out.push_back(cast<StringAttr>(m).str());
  return out;
}

kiln::cpu::RuntimeErrorScope::RuntimeErrorScope()
    : lock(callMutex) {
  std::lock_guard<std::mutex> guard(pendingMutex);
  pending = Pending();
}

kiln::cpu::RuntimeErrorScope::~RuntimeErrorScope() {
  std::lock_guard<std::mutex> guard(pendingMutex);
  pending = Pending();
}

std::optional<std::string>
kiln::cpu::takeRuntimeError(llvm::ArrayRef<std::string> messages) {
  Pending p;
  {
    std::lock_guard<std::mutex> guard(pendingMutex);
    p = pending;
    pending = Pending();
  }
  if (!p.set)
    return std::nullopt;
  if (p.id < 0 || p.id >= (int64_t)messages.size())
    return "run-time error #" + std::to_string(p.id) + " (no message)";
  return formatRuntimeError(messages[p.id], p.values);
}
