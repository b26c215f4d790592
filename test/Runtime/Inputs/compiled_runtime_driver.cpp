// A program over Kiln's compiled-code runtime alone (built in a CMake tree
// that has no LLVM or MLIR; compiled_runtime_standalone.py): the call context
// keeps the first run-time error report of a call, and a failed top-level
// allocation of "compiled code" abandons the call with an error and frees
// the blocks it held.
#include "kiln/rt/BufferPool.h"
#include "kiln/rt/CallContext.h"
#include "kiln/rt/MemrefCopy.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static void *held = nullptr;

// Stand-ins for compiled entries (packed calling convention).
static void reportsTwice(void **) {
  kiln_cpu_runtime_error(3, 10, 20, 0, 0, 0, 0, 0, 7);
  kiln_cpu_runtime_error(5, 1, 1, 1, 1, 1, 1, 1, 1); // not the first: ignored
}
static void allocatesTooMuch(void **) {
  held = kiln_rt_malloc(size_t(4) << 20); // pooled, tracked by the call
  (void)kiln_rt_malloc(SIZE_MAX / 2);     // fails: never returns
  std::puts("FAIL: returned from a failed allocation");
}
static void allocatesAndFrees(void **args) {
  auto *out = static_cast<float *>(kiln_rt_malloc(sizeof(float) * 4));
  for (int i = 0; i < 4; ++i)
    out[i] = float(i) * 2.0f;
  *static_cast<float **>(args[0]) = out;
}

// memref.copy (kiln_rt_memref_copy) against an element-by-element copy of
// the same views: each byte of the destination buffer is the reference
// loop's (positions outside the view untouched).
struct Desc {
  int64_t words[3 + 2 * 8];
  int64_t rank;
  void *unranked[2];
};
static void describe(Desc &d, char *base, int64_t offset,
                     const std::vector<int64_t> &sizes,
                     const std::vector<int64_t> &strides) {
  d.rank = (int64_t)sizes.size();
  d.words[0] = d.words[1] = reinterpret_cast<int64_t>(base);
  d.words[2] = offset;
  for (int64_t i = 0; i < d.rank; ++i) {
    d.words[3 + i] = sizes[i];
    d.words[3 + d.rank + i] = strides[i];
  }
  std::memcpy(&d.unranked[0], &d.rank, sizeof(int64_t));
  d.unranked[1] = d.words;
}
static bool copyMatches(int64_t esz, const std::vector<int64_t> &sizes,
                        const std::vector<int64_t> &sstr, int64_t soff,
                        const std::vector<int64_t> &dstr, int64_t doff) {
  int64_t rank = (int64_t)sizes.size(), total = 1, sspan = soff + 1,
          dspan = doff + 1;
  for (int64_t i = 0; i < rank; ++i) {
    total *= sizes[i];
    if (sizes[i] > 0) {
      sspan += (sizes[i] - 1) * sstr[i];
      dspan += (sizes[i] - 1) * dstr[i];
    }
  }
  std::vector<char> src(sspan * esz), got(dspan * esz), want(dspan * esz);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = char(i * 7 + 3);
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = want[i] = char(0x5a);
  for (int64_t k = 0; k < total; ++k) {
    int64_t rest = k, so = soff, dof = doff;
    for (int64_t d = rank - 1; d >= 0; --d) {
      so += rest % sizes[d] * sstr[d];
      dof += rest % sizes[d] * dstr[d];
      rest /= sizes[d];
    }
    std::memcpy(&want[dof * esz], &src[so * esz], esz);
  }
  Desc s, d;
  describe(s, src.data(), soff, sizes, sstr);
  describe(d, got.data(), doff, sizes, dstr);
  kiln_rt_memref_copy(esz, s.unranked, d.unranked);
  return got == want;
}

int main() {
  using namespace kiln::rt;
  int failures = 0;
  auto check = [&](bool ok, const char *what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
  };

  {
    CallContext call;
    CallScope scope(call);
    check(currentCall() == &call, "the scope's call is current");
    check(!invokeCompiled(call, &reportsTwice, nullptr), "no allocation error");
    int64_t id = -1, values[kCallErrorValues];
    check(takeErrorReport(call, id, values), "a report was kept");
    check(id == 3 && values[0] == 10 && values[1] == 20 && values[7] == 7,
          "the first report is kept");
    check(!takeErrorReport(call, id, values), "taking a report forgets it");
  }
  check(currentCall() == nullptr, "no call outside scopes");

  {
    CallContext call;
    CallScope scope(call);
    std::optional<std::string> e =
        invokeCompiled(call, &allocatesTooMuch, nullptr);
    check(e && e->find("cannot allocate ") == 0 &&
              e->find("in compiled code: out of memory") != std::string::npos,
          "a failed allocation abandons the call with an error");
    if (e)
      std::printf("error: %s\n", e->c_str());
    BufferPoolStats s = bufferPoolStats();
    check(s.liveBytes == 0, "the abandoned call's blocks were freed");
  }

  {
    CallContext call;
    CallScope scope(call);
    float *out = nullptr;
    void *args[] = {&out};
    check(!invokeCompiled(call, &allocatesAndFrees, args), "a call succeeds");
    check(out && out[3] == 6.0f, "the call's result is readable");
    kiln_rt_free(out);
  }

  // Interleaving (stride 2 into a padded buffer), every element size the
  // typed loops take and an odd one, size-1 dims, dims contiguous in both
  // views (merged), a transposed source, rank 0 and an empty view.
  bool copies = true;
  for (int64_t esz : {1, 2, 4, 8, 3}) {
    copies &= copyMatches(esz, {2, 3, 5, 7}, {105, 35, 7, 1}, 0,
                          {3 * 11 * 16, 11 * 16, 32, 2}, 17);
    copies &= copyMatches(esz, {4, 1, 6}, {6, 99, 1}, 2, {6, 5, 1}, 0);
    copies &= copyMatches(esz, {3, 4, 5}, {20, 5, 1}, 1, {40, 10, 1}, 3);
    copies &= copyMatches(esz, {5, 3}, {1, 5}, 0, {3, 1}, 0);
    copies &= copyMatches(esz, {}, {}, 4, {}, 1);
    copies &= copyMatches(esz, {3, 0, 2}, {2, 2, 1}, 0, {2, 2, 1}, 0);
    copies &= copyMatches(esz, {1, 1, 9}, {9, 9, 1}, 0, {9, 9, 3}, 1);
  }
  check(copies, "strided memref copies match an element-by-element copy");

  check(byteCountString(3 << 20) == "3145728 bytes (3.0 MiB)",
        "byte counts read as the interpreter writes them");
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
