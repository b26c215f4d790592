/*===- pool_poison.c - ASan sees misuse of pooled result buffers ----------===*\
|*                                                                            *|
|* Part of Kiln. The CPU backend's results of 1 MiB or more live in blocks of *|
|* the compiled-code runtime's buffer pool (kiln/rt/BufferPool.h), mmap'd by  *|
|* the pool and handed out again after a free, so ASan's allocator knows      *|
|* nothing of them. In AddressSanitizer builds the pool poisons a block while *|
|* it is unused and past what a result uses while it is handed out: this      *|
|* program makes the mistakes an embedder can make with such a result.       *|
|*                                                                            *|
|*   kiln-capi-pool_poison ok              results right, a reused block     *|
|*                                          read in full: no report           *|
|*   kiln-capi-pool_poison overflow        writes one element past a result  *|
|*   kiln-capi-pool_poison overflow-small  the same past a 1000-element      *|
|*                                          result (ASan's malloc, not the    *|
|*                                          pool: inside the code's padding)  *|
|*   kiln-capi-pool_poison use-after-free  reads a result after its list was *|
|*                                          destroyed                         *|
|*                                                                            *|
|* The last two print "no report" and exit 0 when ASan let them through.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

/// 1.2 MB of f32: above the pool's 1 MiB threshold.
#define N 300000
/// 4 KB of f32: below it (ASan's malloc).
#define NSMALL 1000

#define INC(NAME, N)                                                           \
  "kg.program @" NAME "(%x: tensor<" N "xf32>) -> tensor<" N "xf32> {\n"      \
  "  kg.guard_tensor %x {dtype = f32, shape = [" N "]} : tensor<" N "xf32>\n" \
  "  %y = kg.graph @" NAME "_g0(%x) : (tensor<" N "xf32>) -> tensor<" N        \
  "xf32> {\n"                                                                 \
  "  ^bb0(%a: tensor<" N "xf32>):\n"                                          \
  "    %one = kt.constant {value = dense<1.0> : tensor<f32>} : () -> "        \
  "tensor<f32>\n"                                                             \
  "    %0 = kt.add %a, %one : (tensor<" N "xf32>, tensor<f32>) -> tensor<" N  \
  "xf32>\n"                                                                   \
  "    kg.yield %0 : tensor<" N "xf32>\n"                                     \
  "  }\n"                                                                     \
  "  kg.return %y : tensor<" N "xf32>\n"                                      \
  "}\n"

static const char *PROGRAMS = INC("inc", "300000") INC("inc_small", "1000");

static float x[N];

/// Calls @name (n elements) on x and checks every element of its result
/// against x + 1.
static KilnTensorList call(KilnSession s, const char *name, int64_t n,
                           float **data) {
  int64_t shape[1] = {n};
  DLTensor arg = tensor1d(x, shape);
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR(name), &arg, 1, NULL, &results));
  CHECK(kilnTensorListSize(results) == 1);
  const DLTensor *t = kilnTensorListGet(results, 0);
  CHECK(t->ndim == 1 && t->shape[0] == n && !t->strides);
  *data = (float *)((char *)t->data + t->byte_offset);
  for (int64_t i = 0; i < n; ++i)
    CHECK((*data)[i] == x[i] + 1.0f);
  return results;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s ok|overflow|overflow-small|use-after-free\n",
            argv[0]);
    return 2;
  }
  for (int64_t i = 0; i < N; ++i)
    x[i] = (float)(i % 1000) * 0.25f - 7.0f;
  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("cpu")));
  CHECK_OK(kilnSessionLoadModule(s, STR(PROGRAMS), STR("inc.mlir")));

  float *data;
  const char *mode = argv[1];
  int small = !strcmp(mode, "overflow-small");
  KilnTensorList results =
      small ? call(s, "inc_small", NSMALL, &data) : call(s, "inc", N, &data);
  if (!strcmp(mode, "ok")) {
    // The block goes back to the pool and the next call gets it again
    // (unpoisoned for the result: call() reads all of it).
    float *first = data;
    kilnTensorListDestroy(results);
    results = call(s, "inc", N, &data);
    printf("second result %s the first's block\n",
           data == first ? "reuses" : "does not reuse");
    kilnTensorListDestroy(results);
    // A small result read in full, twice.
    for (int i = 0; i < 2; ++i) {
      results = call(s, "inc_small", NSMALL, &data);
      kilnTensorListDestroy(results);
    }
    printf("small results read in full\n");
  } else if (!strcmp(mode, "overflow") || small) {
    volatile float *past = data + (small ? NSMALL : N);
    *past = 1.0f;
    printf("no report\n");
    kilnTensorListDestroy(results);
  } else if (!strcmp(mode, "use-after-free")) {
    kilnTensorListDestroy(results);
    volatile float *freed = data;
    printf("read %g\n", (double)freed[N / 2]);
    printf("no report\n");
  } else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
  }
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
