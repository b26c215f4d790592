//===- RuntimeErrors.cpp - Run-time errors of JIT-compiled CPU code -------===//
//
// Part of Kiln. See kiln/Backend/CPU/RuntimeErrors.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/RuntimeErrors.h"
#include "kiln/rt/BufferPool.h"
#include "kiln/rt/SpecialFunctions.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace kiln::cpu;

llvm::orc::SymbolMap
kiln::cpu::runtimeErrorSymbols(llvm::orc::MangleAndInterner &interner) {
  llvm::orc::SymbolMap map;
  map[interner(kRuntimeErrorFn)] = {
      llvm::orc::ExecutorAddr::fromPtr(&kiln_cpu_runtime_error),
      llvm::JITSymbolFlags::Exported};
  map[interner(kAllocSiteFn)] = {
      llvm::orc::ExecutorAddr::fromPtr(&kiln_cpu_alloc_site),
      llvm::JITSymbolFlags::Exported};
  // kt.special / kt.zeta (kiln/rt/SpecialFunctions.h).
  auto add = [&](const char *name, auto *fn) {
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                           llvm::JITSymbolFlags::Exported};
  };
#define KILN_SPECIAL_ADD(name, fn)                                             \
  add("kiln_cpu_special_" #name, &kiln_cpu_special_##name);
  KILN_SPECIAL_UNARY_FNS(KILN_SPECIAL_ADD)
#undef KILN_SPECIAL_ADD
  add("kiln_cpu_special_polygamma", &kiln_cpu_special_polygamma);
  add("kiln_cpu_special_zeta", &kiln_cpu_special_zeta);
  return map;
}

void kiln::cpu::registerRuntimeErrorSymbol(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    return runtimeErrorSymbols(interner);
  });
}

std::vector<std::string> kiln::cpu::runtimeErrorMessages(ModuleOp module) {
  std::vector<std::string> out;
  if (auto a = module->getAttrOfType<ArrayAttr>(kiln::kRuntimeErrorsAttr))
    for (Attribute m : a)
      out.push_back(cast<StringAttr>(m).str());
  return out;
}

std::optional<std::string>
kiln::cpu::takeRuntimeError(CallContext &context,
                            llvm::ArrayRef<std::string> messages) {
  // Formatting is the runtime's: packages format with the same code
  // (libkiln_rt, the templates from their manifest).
  std::string message;
  if (!rt::takeFormattedError(context, messages.data(), messages.size(),
                              message))
    return std::nullopt;
  return message;
}
