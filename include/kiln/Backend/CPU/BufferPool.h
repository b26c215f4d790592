//===- BufferPool.h - Reused large buffers for JIT-compiled code -*- C++ -*-===//
//
// Part of Kiln. The pool itself and the call path with its failure handling
// are in the compiled-code runtime, kiln/rt/BufferPool.h (runtime/, no LLVM
// or MLIR); this points a JIT's malloc / aligned_alloc / free at it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_BUFFERPOOL_H
#define KILN_BACKEND_CPU_BUFFERPOOL_H

#include "kiln/rt/BufferPool.h"

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace kiln::cpu {

using rt::BufferPoolStats;
using rt::bufferPoolStats;
using rt::invokeCompiled;
using rt::kMinPooledBytes;
using rt::poolAlloc;
using rt::poolFree;
using rt::releaseBufferPool;

/// Defines `malloc`, `aligned_alloc` and `free` in the engine's JIT dylib as
/// kiln_rt_malloc, kiln_rt_aligned_alloc and kiln_rt_free (before the module
/// is materialized, i.e. before any lookup).
void registerBufferPoolSymbols(mlir::ExecutionEngine &engine);
/// The symbols registerBufferPoolSymbols defines, for another JIT (code
/// loaded from the disk cache, DiskCache.h).
llvm::orc::SymbolMap bufferPoolSymbols(llvm::orc::MangleAndInterner &interner);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_BUFFERPOOL_H
