//===- ObjectSymbols.cpp - What compiled objects define and need ----------===//
//
// Part of Kiln. See kiln/Backend/CPU/ObjectSymbols.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/ObjectSymbols.h"

#include "llvm/Object/ObjectFile.h"

using namespace llvm;

bool kiln::cpu::isBLASSymbol(StringRef name) {
  return name.starts_with("cblas_") || name.starts_with("openblas_");
}

bool kiln::cpu::isOneDNNSymbol(StringRef name) {
  return name.starts_with("kiln_onednn_");
}

bool kiln::cpu::isOpenMPSymbol(StringRef name) {
  return name.starts_with("__kmpc_") || name.starts_with("omp_");
}

Error kiln::cpu::forEachObjectSymbol(
    MemoryBufferRef object, function_ref<void(StringRef, uint32_t)> fn) {
  Expected<std::unique_ptr<object::ObjectFile>> file =
      object::ObjectFile::createObjectFile(object);
  if (!file)
    return file.takeError();
  for (const object::SymbolRef &sym : (*file)->symbols()) {
    Expected<uint32_t> flags = sym.getFlags();
    Expected<StringRef> name = sym.getName();
    if (!flags || !name) {
      if (!flags)
        consumeError(flags.takeError());
      if (!name)
        consumeError(name.takeError());
      continue;
    }
    fn(*name, *flags);
  }
  return Error::success();
}
