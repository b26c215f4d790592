// A program over Kiln's compiled-code runtime alone (built in a CMake tree
// that has no LLVM or MLIR; compiled_runtime_standalone.py): the call context
// keeps the first run-time error report of a call, and a failed top-level
// allocation of "compiled code" abandons the call with an error and frees
// the blocks it held.
#include "kiln/rt/BufferPool.h"
#include "kiln/rt/CallContext.h"

#include <cstdint>
#include <cstdio>
#include <string>

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

  check(byteCountString(3 << 20) == "3145728 bytes (3.0 MiB)",
        "byte counts read as the interpreter writes them");
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
