//===- ObjectSymbols.h - What compiled objects define and need --*- C++ -*-===//
//
// Part of Kiln. The CPU backend and packages read the symbol tables of the
// objects they compile: the JIT's disk cache asks whether a cached object
// calls OpenBLAS (to load it before linking), and a package lists the
// shared libraries its object needs. Both walk the symbols here and
// classify them with the same prefixes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_OBJECTSYMBOLS_H
#define KILN_BACKEND_CPU_OBJECTSYMBOLS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>

namespace kiln::cpu {

/// Whether `name` is a function of OpenBLAS (kiln-matmul-to-blas calls
/// cblas_*; user functions with these prefixes are renamed by
/// kiln-cpu-rename-reserved-symbols).
bool isBLASSymbol(llvm::StringRef name);

/// Whether `name` is a function of libkiln_onednn (kiln-cpu-conv-to-onednn
/// calls kiln_onednn_conv2d_f32; runtime/onednn).
bool isOneDNNSymbol(llvm::StringRef name);

/// Whether `name` is a function of the OpenMP runtime (__kmpc_*, omp_*).
bool isOpenMPSymbol(llvm::StringRef name);

/// Calls `fn(name, flags)` (llvm::object::SymbolRef flags) for each symbol
/// of the object in `object`; symbols whose name or flags cannot be read
/// are skipped. An error when the object cannot be read.
llvm::Error
forEachObjectSymbol(llvm::MemoryBufferRef object,
                    llvm::function_ref<void(llvm::StringRef, uint32_t)> fn);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_OBJECTSYMBOLS_H
