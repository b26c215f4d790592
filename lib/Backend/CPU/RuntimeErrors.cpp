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

using namespace mlir;

namespace {
struct Pending {
  bool set = false;
  int64_t id = 0, a = 0, b = 0;
};
thread_local Pending pending;
} // namespace

extern "C" void kiln_cpu_runtime_error(int64_t id, int64_t a, int64_t b) {
  if (!pending.set)
    pending = {true, id, a, b};
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

void kiln::cpu::clearRuntimeError() { pending = Pending(); }

std::optional<std::string>
kiln::cpu::takeRuntimeError(llvm::ArrayRef<std::string> messages) {
  if (!pending.set)
    return std::nullopt;
  Pending p = pending;
  pending = Pending();
  if (p.id < 0 || p.id >= (int64_t)messages.size())
    return "run-time error #" + std::to_string(p.id) + " (no message)";
  return formatRuntimeError(messages[p.id], p.a, p.b);
}
