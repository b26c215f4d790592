//===- BlockCache.h - Cached device allocations (no driver inside) -*- C++ -*-===//
//
// Part of Kiln. The caching allocator behind libkiln_cuda_rt's mgpuMemAlloc
// / mgpuMemFree, apart from the driver so that it is tested without a GPU
// (test/cache_test.cpp): freed blocks are kept in free lists per size
// class and handed out again for the same class, so a program called in a
// loop stops calling cuMemAlloc / cuMemFree (each a device-wide
// synchronization point and tens of microseconds or more for large
// buffers), as PyTorch's caching allocator does.
//
// Size classes: a request is rounded up to a multiple of 512 bytes up to
// 1 MiB, and of 2 MiB above. A block is reused only for its own class.
// When the raw allocation fails, the cache is emptied (its blocks freed)
// and the allocation tried once more. Reuse is safe because Kiln's host
// code synchronizes each GPU operation's stream before the next one, and
// libkiln_rt synchronizes the device before each call: a block freed by a
// call (or by a result's deleter) is no longer in use by any kernel when it
// is handed out again. Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CUDA_BLOCKCACHE_H
#define KILN_CUDA_BLOCKCACHE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kiln::cuda {

struct CacheStats {
  uint64_t allocations = 0; ///< mgpuMemAlloc calls served
  uint64_t hits = 0;        ///< served from the cache
  uint64_t rawAllocs = 0;   ///< raw (driver) allocations
  uint64_t rawFrees = 0;    ///< raw frees (empty_cache, retries)
  uint64_t bytesInUse = 0;  ///< handed out and not freed (class sizes)
  uint64_t bytesCached = 0; ///< held in free lists
};

class BlockCache {
public:
  using RawAlloc = std::function<void *(size_t)>;
  using RawFree = std::function<void(void *)>;
  BlockCache(RawAlloc alloc, RawFree free)
      : rawAlloc(std::move(alloc)), rawFree(std::move(free)) {}

  /// The size class of a request of `bytes` (> 0).
  static size_t classOf(size_t bytes) {
    const size_t small = 512, large = size_t(2) << 20;
    if (bytes <= (size_t(1) << 20))
      return (bytes + small - 1) / small * small;
    return (bytes + large - 1) / large * large;
  }

  /// A block of at least `bytes` (null for 0 bytes or when the raw
  /// allocator fails even after the cache was emptied).
  void *allocate(size_t bytes) {
    if (bytes == 0)
      return nullptr;
    size_t size = classOf(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    ++stats.allocations;
    auto it = free.find(size);
    if (it != free.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      ++stats.hits;
      stats.bytesCached -= size;
      stats.bytesInUse += size;
      live[p] = size;
      return p;
    }
    void *p = rawAlloc(size);
    if (!p && stats.bytesCached > 0) {
      emptyLocked();
      p = rawAlloc(size);
    }
    if (!p)
      return nullptr;
    ++stats.rawAllocs;
    stats.bytesInUse += size;
    live[p] = size;
    return p;
  }

  /// Returns a block to the cache; false when `p` is not a live block of
  /// this cache (the caller frees it raw, or it is a double free).
  bool release(void *p) {
    if (!p)
      return true;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(p);
    if (it == live.end())
      return false;
    size_t size = it->second;
    live.erase(it);
    free[size].push_back(p);
    stats.bytesInUse -= size;
    stats.bytesCached += size;
    return true;
  }

  /// Frees every cached block (PyTorch's empty_cache).
  void empty() {
    std::lock_guard<std::mutex> lock(mutex);
    emptyLocked();
  }

  CacheStats statistics() {
    std::lock_guard<std::mutex> lock(mutex);
    return stats;
  }

private:
  void emptyLocked() {
    for (auto &[size, blocks] : free)
      for (void *p : blocks) {
        rawFree(p);
        ++stats.rawFrees;
        stats.bytesCached -= size;
      }
    free.clear();
  }

  RawAlloc rawAlloc;
  RawFree rawFree;
  std::mutex mutex;
  std::map<size_t, std::vector<void *>> free;
  std::unordered_map<void *, size_t> live;
  CacheStats stats;
};

} // namespace kiln::cuda

#endif // KILN_CUDA_BLOCKCACHE_H
