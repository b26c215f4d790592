//===- BufferPool.cpp - Reused large buffers for compiled code ------------===//
//
// Part of Kiln's compiled-code runtime. See kiln/rt/BufferPool.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/rt/BufferPool.h"
#include "kiln/rt/CallContext.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <list>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// AddressSanitizer builds poison pooled blocks while they sit unused, and
// the part of a block past what was asked for (the size class rounds up):
// the pool hands its own mmap'd pages out again, so without this ASan saw
// neither an overflow into a block's rounding nor a use after free of a
// pooled block (docs/debugging.md, "Sanitizer builds"). KILN_POOL_POISON
// is set by BufferPool.h.
#ifdef KILN_POOL_POISON
#include <sanitizer/allocator_interface.h>
#include <sanitizer/asan_interface.h>
#endif

using namespace kiln::rt;

namespace {
constexpr size_t kHugePage = size_t(2) << 20;

// The parentheses call ASan's functions, not the no-op macros of the same
// names that cmake/KilnAsanNoManualPoison.h defines for LLVM's headers.
#ifdef KILN_POOL_POISON
void poison(void *ptr, size_t bytes) {
  (__asan_poison_memory_region)(ptr, bytes);
}
void unpoison(void *ptr, size_t bytes) {
  (__asan_unpoison_memory_region)(ptr, bytes);
}
#else
void poison(void *, size_t) {}
void unpoison(void *, size_t) {}
#endif

size_t roundUp(size_t n, size_t m) { return (n + m - 1) / m * m; }

/// The size class of a pooled request: whole huge pages from 16 MiB on,
/// else 64 KiB steps (compiled code asks for a little more than the
/// tensor, to align it).
size_t sizeClass(size_t bytes) {
  return roundUp(bytes, bytes >= (size_t(16) << 20) ? kHugePage
                                                    : size_t(64) << 10);
}

size_t capFromEnv() {
  if (const char *s = std::getenv("KILN_CPU_POOL_BYTES")) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (end != s && *end == '\0')
      return (size_t)v;
  }
  return size_t(2) << 30;
}

struct Pool {
  std::mutex mutex;
  size_t cap = capFromEnv();
  /// Live pooled blocks: pointer -> size class.
  std::unordered_map<void *, size_t> live;
  /// Unused blocks, least recently freed first; and an index by size.
  std::list<std::pair<size_t, void *>> unused;
  std::multimap<size_t, std::list<std::pair<size_t, void *>>::iterator> bySize;
  BufferPoolStats stats;

  void unmapOldestUntil(size_t target) {
    while (stats.cachedBytes > target && !unused.empty()) {
      auto [size, ptr] = unused.front();
      auto range = bySize.equal_range(size);
      for (auto it = range.first; it != range.second; ++it)
        if (it->second == unused.begin()) {
          bySize.erase(it);
          break;
        }
      unused.pop_front();
      unpoison(ptr, size);
      munmap(ptr, size);
      stats.cachedBytes -= size;
    }
  }
};

/// `size` bytes at a huge-page boundary, advised as transparent huge pages;
/// null on failure.
void *mapAligned(size_t size) {
  size_t span = size + kHugePage;
  void *raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = roundUp(start, kHugePage);
  if (aligned > start)
    munmap(raw, aligned - start);
  if (size_t tail = start + span - (aligned + size))
    munmap(reinterpret_cast<void *>(aligned + size), tail);
  void *ptr = reinterpret_cast<void *>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(ptr, size, MADV_HUGEPAGE);
#endif
  return ptr;
}

// Never destroyed: compiled code may free after static destructors ran.
Pool &pool() {
  static Pool *p = new Pool;
  return *p;
}
} // namespace

void *kiln::rt::poolAlloc(size_t bytes) {
  Pool &p = pool();
  if (bytes < kMinPooledBytes)
    return std::malloc(bytes);
  size_t size = sizeClass(bytes);
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.bySize.find(size);
    if (it != p.bySize.end()) {
      void *ptr = it->second->second;
      p.unused.erase(it->second);
      p.bySize.erase(it);
      p.stats.cachedBytes -= size;
      p.stats.liveBytes += size;
      ++p.stats.hits;
      p.live.emplace(ptr, size);
      // The whole block was poisoned when it came back; its tail stays so.
      unpoison(ptr, bytes);
      return ptr;
    }
    ++p.stats.misses;
  }
  void *ptr = mapAligned(size);
  if (!ptr) {
    // Out of address space or memory: give back what is cached, retry once.
    releaseBufferPool();
    ptr = mapAligned(size);
    if (!ptr)
      return nullptr;
  }
  poison(static_cast<char *>(ptr) + bytes, size - bytes);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.live.emplace(ptr, size);
  p.stats.liveBytes += size;
  return ptr;
}

void kiln::rt::poolFree(void *ptr) {
  if (!ptr)
    return;
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.live.find(ptr);
    if (it != p.live.end()) {
      size_t size = it->second;
      p.live.erase(it);
      p.stats.liveBytes -= size;
      if (size > p.cap) {
        unpoison(ptr, size);
        munmap(ptr, size);
        return;
      }
      p.unmapOldestUntil(p.cap - size);
      // Before another thread can take it (under the lock).
      poison(ptr, size);
      p.unused.emplace_back(size, ptr);
      p.bySize.emplace(size, std::prev(p.unused.end()));
      p.stats.cachedBytes += size;
      return;
    }
  }
  std::free(ptr);
}

void kiln::rt::poolPoisonTail(void *ptr, size_t usedBytes) {
#ifndef KILN_POOL_POISON
  // Nothing to do: no lock per call outside ASan builds.
  (void)ptr, (void)usedBytes;
  return;
#endif
  if (!ptr)
    return;
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.live.find(ptr);
  if (it != p.live.end()) {
    if (usedBytes < it->second)
      poison(static_cast<char *>(ptr) + usedBytes, it->second - usedBytes);
    return;
  }
#ifdef KILN_POOL_POISON
  // A block below kMinPooledBytes, from ASan's malloc: its redzone starts
  // past the request, which includes the code's alignment padding. ASan
  // unpoisons a chunk when it hands it out again.
  if (__sanitizer_get_ownership(ptr)) {
    size_t size = __sanitizer_get_allocated_size(ptr);
    if (usedBytes < size)
      poison(static_cast<char *>(ptr) + usedBytes, size - usedBytes);
  }
#endif
}

BufferPoolStats kiln::rt::bufferPoolStats() {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}

void kiln::rt::releaseBufferPool() {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.unmapOldestUntil(0);
}

//===----------------------------------------------------------------------===//
// Calls: tracked blocks and failed allocations
//===----------------------------------------------------------------------===//

namespace {
/// The OpenMP nesting level of the calling thread (0: outside any parallel
/// region, active or serialized); libomp is loaded with the backend.
int ompLevel() {
  using LevelFn = int (*)();
  static auto *level = reinterpret_cast<LevelFn>(
      dlsym(RTLD_DEFAULT, "omp_get_level"));
  return level ? level() : 0;
}

/// Records `ptr`, a block the running call allocated.
void *track(void *ptr) {
  if (CallContext *call = currentCall()) {
    std::lock_guard<std::mutex> lock(call->mutex);
    if (call->active)
      call->live.insert(ptr);
  }
  return ptr;
}

/// The allocation site (a run-time error template id) compiled code named
/// for its next allocation on this thread (kiln_cpu_alloc_site), or -1.
thread_local int64_t allocationSite = -1;

/// The site of the allocation being made, and forgets it.
int64_t takeAllocationSite() {
  int64_t site = allocationSite;
  allocationSite = -1;
  return site;
}

/// A failed allocation of `bytes` by compiled code at `site` (-1: unknown):
/// never returns (the code would write through the null pointer). With a
/// site, the call's error is the site's message (its location and what was
/// allocated), unless a run-time error was reported first.
[[noreturn]] void allocationFailed(size_t bytes, int64_t site) {
  std::jmp_buf *exit = nullptr;
  if (CallContext *call = currentCall()) {
    std::lock_guard<std::mutex> lock(call->mutex);
    if (call->active && call->exit &&
        std::this_thread::get_id() == call->caller && ompLevel() == 0) {
      exit = call->exit;
      call->failedBytes = bytes;
      if (site >= 0 && !call->errorSet) {
        call->errorSet = true;
        call->errorId = site;
        for (int64_t &v : call->errorValues)
          v = 0;
        call->errorValues[0] = (int64_t)bytes;
      }
    }
  }
  // No object with a destructor is alive here or in the compiled frames
  // between this and invokeCompiled.
  if (exit)
    std::longjmp(*exit, 1);
  std::fprintf(stderr,
               "kiln: compiled code cannot allocate %s inside an OpenMP "
               "parallel region (out of memory); a parallel region cannot be "
               "left early\n",
               byteCountString(bytes).c_str());
  std::abort();
}

void *checked(void *ptr, size_t bytes) {
  int64_t site = takeAllocationSite();
  if (!ptr)
    allocationFailed(bytes, site);
  return track(ptr);
}
} // namespace

extern "C" {
void kiln_cpu_alloc_site(int64_t site) { allocationSite = site; }
void *kiln_rt_malloc(size_t bytes) {
  return checked(poolAlloc(bytes), bytes);
}
void kiln_rt_free(void *ptr) {
  if (!ptr)
    return;
  if (CallContext *call = currentCall()) {
    std::lock_guard<std::mutex> lock(call->mutex);
    if (call->active)
      call->live.erase(ptr);
  }
  poolFree(ptr);
}
void *kiln_rt_aligned_alloc(size_t align, size_t bytes) {
  // Pooled blocks start at a huge-page boundary.
  if (bytes >= kMinPooledBytes && align <= kHugePage)
    return checked(poolAlloc(bytes), bytes);
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t rounded = roundUp(bytes, align);
  return checked(rounded < bytes ? nullptr
                                 : std::aligned_alloc(align, rounded),
                 bytes);
}
}

std::optional<std::string> kiln::rt::invokeCompiled(CallContext &call,
                                                     void (*fn)(void **),
                                                     void **args) {
  // Must not be a local with a destructor: longjmp skips it. The context is
  // the caller's; only its plain fields are set here.
  std::jmp_buf exit;
  takeAllocationSite(); // a stale site of an earlier call
  {
    std::lock_guard<std::mutex> lock(call.mutex);
    call.active = true;
    call.caller = std::this_thread::get_id();
    call.exit = &exit;
    call.live.clear();
    call.failedBytes = 0;
  }
  if (!setjmp(exit)) {
    fn(args);
    std::lock_guard<std::mutex> lock(call.mutex);
    call.active = false;
    call.exit = nullptr;
    call.live.clear();
    return std::nullopt;
  }
  // Abandoned at a failed allocation: free what the code still held.
  std::vector<void *> live;
  size_t bytes;
  {
    std::lock_guard<std::mutex> lock(call.mutex);
    live.assign(call.live.begin(), call.live.end());
    call.live.clear();
    call.active = false;
    call.exit = nullptr;
    bytes = call.failedBytes;
  }
  for (void *ptr : live)
    poolFree(ptr);
  return "cannot allocate " + byteCountString(bytes) +
         " in compiled code: out of memory";
}
