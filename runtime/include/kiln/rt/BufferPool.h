//===- BufferPool.h - Reused large buffers for compiled code ----*- C++ -*-===//
//
// Part of Kiln's compiled-code runtime (runtime/; plain C++17, no LLVM or
// MLIR). Compiled code allocates its results and temporaries with malloc and
// frees them with free. Large blocks from glibc are fresh mmaps: every call
// would page-fault and zero each page again (for a 64 MiB result that is
// ~16k faults, a third of a memory-bound kernel's time). The CPU backend
// points the JIT's `malloc` / `free` / `aligned_alloc` at kiln_rt_malloc /
// kiln_rt_free / kiln_rt_aligned_alloc below: blocks of at least
// kMinPooledBytes are kept when freed and handed out again to an allocation
// of the same size class, so a second call touches warm pages. Large blocks
// are also advised as transparent huge pages.
//
// Bounded: at most KILN_CPU_POOL_BYTES (environment, bytes; default 2 GiB,
// 0 keeps none) are kept while unused; past that the least recently
// freed blocks go back to the system. Thread-safe (OpenMP workers may
// allocate). Object files from --emit-object call the real malloc/free.
//
// AddressSanitizer builds poison a pooled block while it is unused and,
// while it is handed out, its bytes past the requested size (the size class
// rounds up), so instrumented code (Kiln's runtime, the interpreter, an
// embedder's program) that writes past a pooled result or reads one after it
// was freed gets ASan's use-after-poison report. The JIT'd code itself is
// not instrumented: its own loads and stores are not checked.
//
// Failed allocations: compiled code does not check what malloc returns, so
// kiln_rt_malloc never returns null to it. Calls run through
// `invokeCompiled`, which tracks the blocks the code allocates in the call's
// CallContext (CallContext.h). Results and large temporaries are allocated
// at the top level of the compiled function (on the calling thread, outside
// any OpenMP parallel region); when such an allocation fails, the call is
// abandoned right there (a longjmp back to invokeCompiled: the generated code
// holds no resources but its blocks, which are then freed) and returns the
// error, naming the op whose allocation failed (its location, from the
// allocation site the code gave: kiln_cpu_alloc_site below) and the size.
// Inside a parallel region code allocates only per-thread tiles and
// slices, smaller than the results allocated before the region, and a worker
// cannot leave the region early: a failure there is reported and aborts the
// process.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RT_BUFFERPOOL_H
#define KILN_RT_BUFFERPOOL_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kiln::rt {

struct CallContext;

/// Blocks below this size go straight to malloc/free.
inline constexpr size_t kMinPooledBytes = size_t(1) << 20;

void *poolAlloc(size_t bytes);
/// Frees a pointer from poolAlloc (pooled or not); null is ignored.
void poolFree(void *ptr);
/// In AddressSanitizer builds, makes the bytes of the block `ptr` (from
/// poolAlloc, pooled or not) from `usedBytes` on unaddressable until it is
/// freed. The CPU backend calls it with the extent of the results it hands
/// out, which is less than what the code asked for (compiled code pads an
/// allocation to align it). A no-op in other builds.
void poolPoisonTail(void *ptr, size_t usedBytes);
/// Whether this translation unit is built with AddressSanitizer (pooled
/// blocks poisoned; callers skip the bookkeeping poolPoisonTail needs when
/// it is false).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_POOL_POISON 1
#endif
#endif
#if !defined(KILN_POOL_POISON) && defined(__SANITIZE_ADDRESS__)
#define KILN_POOL_POISON 1
#endif
#ifdef KILN_POOL_POISON
inline constexpr bool kPoolPoisoning = true;
#else
inline constexpr bool kPoolPoisoning = false;
#endif

struct BufferPoolStats {
  uint64_t hits = 0, misses = 0; ///< pooled-size allocations
  size_t cachedBytes = 0;        ///< held while unused
  size_t liveBytes = 0;          ///< pooled blocks handed out
};
BufferPoolStats bufferPoolStats();

/// Returns every unused cached block to the system.
void releaseBufferPool();

/// Calls the packed entry `fn` of compiled code on `args`, for `call` (the
/// caller holds a CallScope of it; CallContext.h). Returns the error
/// "cannot allocate N bytes (...) in compiled code: out of memory" when a
/// top-level allocation of the code failed (the call was abandoned and every
/// block it still held freed). Calls on different threads may overlap.
std::optional<std::string> invokeCompiled(CallContext &call,
                                          void (*fn)(void **), void **args);

} // namespace kiln::rt

/// What compiled code's malloc / free / aligned_alloc resolve to: the pool
/// with the failure handling above.
///
/// kiln_cpu_alloc_site(id): compiled code calls it right before each
/// allocation (kiln-cpu-alloc-sites, kiln/Conversion/CPU/CPUCodegen.h): `id`
/// is a run-time error template ("<file:line:col>: cannot allocate
/// {0:bytes} for tensor<...> ...") naming the op that allocates. The next
/// allocation on the same thread takes it; when that allocation fails at
/// the top level, the call's error is the template with the byte count
/// (unless a run-time error was reported first).
extern "C" {
void kiln_cpu_alloc_site(int64_t id);
void *kiln_rt_malloc(size_t bytes);
void kiln_rt_free(void *ptr);
void *kiln_rt_aligned_alloc(size_t align, size_t bytes);
}

#endif // KILN_RT_BUFFERPOOL_H
