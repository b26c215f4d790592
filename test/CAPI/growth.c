/*===- growth.c - Memory stays bounded over many calls and recompiles -----===*\
|*                                                                            *|
|* Part of Kiln. Two long runs through the C API, cpu backend:               *|
|*  calls: one program called N times on one shape (one compile); the heap   *|
|*    in use (mallinfo2) and the RSS after the first 1,000 calls and after   *|
|*    all N must be the same up to small bounds: nothing per call is kept.   *|
|*  recompiles: the module is loaded again before each of M calls (every     *|
|*    load clears the session's caches) and each call has a new shape, so    *|
|*    every call compiles for real (pipeline + JIT). Over the second half   *|
|*    the heap may grow by at most 16 KiB per compile: compiled code that no *|
|*    session holds and that left the process-wide kernel cache              *|
|*    (KILN_CPU_KERNEL_CACHE_ENTRIES) is freed. What remains per new shape   *|
|*    (~4 KiB) is its types and attributes, uniqued in the session's MLIR    *|
|*    context for the context's lifetime (MLIR never frees them).            *|
|* Every 997th result is checked against a C reference.                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE

#include "common.h"

#include <malloc.h>
#include <unistd.h>

static const char *kModule =
    "kg.program @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %y = kg.graph @f_g(%a) : (tensor<?xf32>) -> tensor<?xf32> {\n"
    "  ^bb0(%x: tensor<?xf32>):\n"
    "    %e = kt.exp %x : (tensor<?xf32>) -> tensor<?xf32>\n"
    "    %m = kt.mul %e, %x : (tensor<?xf32>, tensor<?xf32>) -> "
    "tensor<?xf32>\n"
    "    kg.yield %m : tensor<?xf32>\n"
    "  }\n"
    "  kg.return %y : tensor<?xf32>\n"
    "}\n";

enum { kMaxN = 4096 + 64 };
static float input[kMaxN], want[kMaxN];

static long heapKiB(void) {
  struct mallinfo2 m = mallinfo2();
  return (long)((m.uordblks + m.hblkhd) / 1024);
}

static long rssKiB(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
    resident = 0;
  if (f)
    fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// Calls @f on the first n inputs; checks the result every 997th call.
static void call(KilnSession s, int64_t n, long i) {
  int64_t shape[1] = {n};
  DLTensor a = tensor1d(input, shape);
  KilnTensorList r;
  CHECK_OK(kilnSessionCall(s, STR("f"), &a, 1, NULL, &r));
  CHECK(kilnTensorListSize(r) == 1);
  if (i % 997 == 0) {
    double err = maxError(kilnTensorListGet(r, 0), want, n);
    CHECK(err >= 0 && err <= 1e-5);
  }
  kilnTensorListDestroy(r);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s CALLS RECOMPILES\n", argv[0]);
    return 2;
  }
  long calls = atol(argv[1]), recompiles = atol(argv[2]);
  CHECK(calls >= 2000 && recompiles >= 2 && recompiles <= 4096);
  for (int i = 0; i < kMaxN; ++i) {
    input[i] = (float)((i % 61) - 30) / 16.0f;
    want[i] = expf(input[i]) * input[i];
  }

  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("cpu")));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("static")));
  CHECK_OK(kilnSessionLoadModule(s, STR(kModule), STR("growth")));

  // Calls.
  for (long i = 0; i < 1000; ++i)
    call(s, 1000, i);
  long heap0 = heapKiB(), rss0 = rssKiB();
  for (long i = 1000; i < calls; ++i)
    call(s, 1000, i);
  long heap1 = heapKiB(), rss1 = rssKiB();
  KilnProgramStats st;
  CHECK_OK(kilnSessionGetStats(s, STR("f"), &st));
  printf("calls: %ld calls, %llu compile(s)\n", calls,
         (unsigned long long)st.compiles);
  printf("calls: heap %+ld KiB, rss %+ld KiB after the first 1000\n",
         heap1 - heap0, rss1 - rss0);
  printf("calls: heap bounded (< 256 KiB): %s\n",
         heap1 - heap0 < 256 ? "yes" : "no");
  printf("calls: rss bounded (< 4 MiB): %s\n",
         rss1 - rss0 < 4096 ? "yes" : "no");

  // Recompiles.
  long heapMid = 0, rssMid = 0;
  for (long i = 0; i < recompiles; ++i) {
    if (i == recompiles / 2) {
      heapMid = heapKiB();
      rssMid = rssKiB();
    }
    CHECK_OK(kilnSessionLoadModule(s, STR(kModule), STR("growth")));
    call(s, 64 + i, i);
    CHECK_OK(kilnSessionGetStats(s, STR("f"), &st));
    CHECK(st.compiles == 1);
  }
  long heapEnd = heapKiB(), rssEnd = rssKiB();
  printf("recompiles: %ld loads + compiles\n", recompiles);
  printf("recompiles: heap %+ld KiB, rss %+ld KiB over the second half\n",
         heapEnd - heapMid, rssEnd - rssMid);
  long half = recompiles - recompiles / 2;
  printf("recompiles: heap bounded (< 16 KiB per compile): %s\n",
         heapEnd - heapMid < 16 * half ? "yes" : "no");
  printf("recompiles: rss bounded (< 64 KiB per compile): %s\n",
         rssEnd - rssMid < 64 * half ? "yes" : "no");
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
