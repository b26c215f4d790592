//===- cache_test.cpp - The caching allocator without a GPU ---------------===//
//
// Part of Kiln. kiln::cuda::BlockCache (runtime/cuda/BlockCache.h) over a
// fake raw allocator (malloc, with a budget to simulate out of memory):
// size classes, reuse of freed blocks for their class only, statistics,
// empty(), the retry after emptying when the raw allocation fails, foreign
// pointers, and concurrent use. Prints one line per check; exits 1 on a
// failure.
//
//===----------------------------------------------------------------------===//

#include "../BlockCache.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>

using kiln::cuda::BlockCache;

static int failures = 0;
static void check(bool ok, const char *what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok)
    ++failures;
}

int main() {
  size_t budget = 64u << 20, used = 0;
  std::unordered_map<void *, size_t> sizes;
  std::mutex m;
  BlockCache cache(
      [&](size_t n) -> void * {
        std::lock_guard<std::mutex> lock(m);
        if (used + n > budget)
          return nullptr;
        void *p = std::malloc(n);
        used += n;
        sizes[p] = n;
        return p;
      },
      [&](void *p) {
        std::lock_guard<std::mutex> lock(m);
        used -= sizes[p];
        sizes.erase(p);
        std::free(p);
      });

  check(BlockCache::classOf(1) == 512 && BlockCache::classOf(512) == 512 &&
            BlockCache::classOf(513) == 1024 &&
            BlockCache::classOf(1 << 20) == (1 << 20) &&
            BlockCache::classOf((1 << 20) + 1) == (2 << 20) &&
            BlockCache::classOf(5 << 20) == (6 << 20),
        "size classes: 512 B steps to 1 MiB, 2 MiB steps above");
  check(cache.allocate(0) == nullptr, "0 bytes: null");

  void *a = cache.allocate(1000);
  check(a && cache.release(a), "allocate and release");
  void *b = cache.allocate(900); // same class (1024)
  check(b == a, "a freed block is reused for its class");
  void *c = cache.allocate(3000); // another class
  check(c && c != a, "another class gets another block");
  auto s = cache.statistics();
  check(s.allocations == 3 && s.hits == 1 && s.rawAllocs == 2 &&
            s.bytesInUse == 1024 + 3072 && s.bytesCached == 0,
        "statistics: 3 allocations, 1 hit, 2 raw, bytes in use");
  cache.release(b);
  cache.release(c);
  s = cache.statistics();
  check(s.bytesInUse == 0 && s.bytesCached == 4096, "released bytes are cached");
  cache.empty();
  s = cache.statistics();
  check(s.bytesCached == 0 && s.rawFrees == 2 && used == 0,
        "empty() frees every cached block");

  int local;
  check(!cache.release(&local), "a pointer the cache did not hand out is refused");

  // Out of memory: 40 MiB cached, 40 MiB more asked for (budget 64 MiB):
  // the cache is emptied and the allocation retried.
  void *big = cache.allocate(40u << 20);
  cache.release(big);
  void *other = cache.allocate(39u << 20); // class 40 MiB: reused
  check(other == big, "a 39 MiB request reuses the 40 MiB block");
  cache.release(other);
  void *bigger = cache.allocate(50u << 20);
  s = cache.statistics();
  check(bigger != nullptr && s.bytesCached == 0 && used == (50u << 20),
        "a failed raw allocation empties the cache and succeeds on retry");
  void *none = cache.allocate(30u << 20);
  check(none == nullptr, "out of memory with nothing cached: null");
  cache.release(bigger);
  cache.empty();

  // Threads: a block is never handed out twice at once (each thread fills
  // its block with its own byte and checks it after yielding).
  std::vector<std::thread> threads;
  std::atomic<bool> twice{false};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        size_t n = 512 * (1 + (i % 4));
        auto *p = static_cast<unsigned char *>(cache.allocate(n));
        std::memset(p, t + 1, n);
        std::this_thread::yield();
        for (size_t k = 0; k < n; ++k)
          if (p[k] != t + 1)
            twice = true;
        cache.release(p);
      }
    });
  for (auto &t : threads)
    t.join();
  s = cache.statistics();
  check(!twice && s.bytesInUse == 0, "8 threads x 2000: no block handed out twice");
  cache.empty();
  check(used == 0, "nothing leaked");
  std::printf("%s\n", failures ? "FAILED" : "done");
  return failures ? 1 : 0;
}
