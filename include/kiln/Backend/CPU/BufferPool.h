//===- BufferPool.h - Reused large buffers for compiled CPU code -*- C++ -*-===//
//
// Part of Kiln. Compiled code allocates its results and temporaries with
// malloc and frees them with free. Large blocks from glibc are fresh mmaps:
// every call would page-fault and zero each page again (for a 64 MiB result
// that is ~16k faults, a third of a memory-bound kernel's time). The CPU
// backend points the JIT's `malloc` / `free` at this pool instead: blocks of
// at least kMinPooledBytes are kept when freed and handed out again to an
// allocation of the same size class, so a second call touches warm pages.
// Large blocks are also advised as transparent huge pages.
//
// Bounded: at most KILN_CPU_POOL_BYTES (environment, bytes; default 2 GiB,
// 0 keeps none) are kept while unused; past that the least recently
// freed blocks go back to the system. Thread-safe (OpenMP workers may
// allocate). Object files from --emit-object call the real malloc/free.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_BUFFERPOOL_H
#define KILN_BACKEND_CPU_BUFFERPOOL_H

#include <cstddef>
#include <cstdint>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace kiln::cpu {

/// Blocks below this size go straight to malloc/free.
inline constexpr size_t kMinPooledBytes = size_t(1) << 20;

void *poolAlloc(size_t bytes);
/// Frees a pointer from poolAlloc (pooled or not); null is ignored.
void poolFree(void *ptr);

struct BufferPoolStats {
  uint64_t hits = 0, misses = 0; ///< pooled-size allocations
  size_t cachedBytes = 0;        ///< held while unused
  size_t liveBytes = 0;          ///< pooled blocks handed out
};
BufferPoolStats bufferPoolStats();

/// Returns every unused cached block to the system.
void releaseBufferPool();

/// Defines `malloc` and `free` in the engine's JIT dylib as poolAlloc and
/// poolFree (before the module is materialized, i.e. before any lookup).
void registerBufferPoolSymbols(mlir::ExecutionEngine &engine);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_BUFFERPOOL_H
