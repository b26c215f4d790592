/*===- common.h - Helpers of the C API tests ------------------------------===*\
|*                                                                            *|
|* Part of Kiln. Plain C11 helpers shared by the test programs: checking      *|
|* statuses, making DLTensors over caller-owned arrays, the toy_example       *|
|* reference formula.                                                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_TEST_CAPI_COMMON_H
#define KILN_TEST_CAPI_COMMON_H

#include "kiln-c/Kiln.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR(s) kilnStringRefCreateFromCString(s)

/// Ends the test when `status` is an error (printing where and why).
#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    KilnStatus check_ok_status = (expr);                                       \
    if (!kilnStatusIsOk(check_ok_status)) {                                    \
      KilnStringRef m = kilnStatusGetMessage(check_ok_status);                 \
      fprintf(stderr, "%s:%d: %s failed: %.*s\n", __FILE__, __LINE__, #expr,   \
              (int)m.length, m.data);                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/// Ends the test when `cond` does not hold.
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/// Prints "label: error: <message>" for an error status (destroying it), or
/// "label: ok". Returns whether it was an error.
static inline int expectError(const char *label, KilnStatus status) {
  if (kilnStatusIsOk(status)) {
    printf("%s: ok\n", label);
    return 0;
  }
  KilnStringRef m = kilnStatusGetMessage(status);
  printf("%s: error: %.*s\n", label, (int)m.length, m.data);
  kilnStatusDestroy(status);
  return 1;
}

/// A 1-D f32 CPU tensor over `data` (not copied).
static inline DLTensor tensor1d(float *data, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

/// toy_example in plain C: x = a / (|a| + 1); sum(b) < 0 ? x * -b : x * b.
static inline void toyReference(const float *a, const float *b, int64_t n,
                                float *out) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += b[i];
  for (int64_t i = 0; i < n; ++i) {
    float x = a[i] / (fabsf(a[i]) + 1.0f);
    out[i] = sum < 0 ? x * (b[i] * -1.0f) : x * b[i];
  }
}

/// The largest |got - want| over a compact f32 result (or -1 when its type
/// or size is not the expected one).
static inline double maxError(const DLTensor *got, const float *want,
                              int64_t n) {
  if (!got || got->dtype.code != kDLFloat || got->dtype.bits != 32 ||
      got->ndim != 1 || got->shape[0] != n || got->strides ||
      got->device.device_type != kDLCPU)
    return -1;
  const float *g = (const float *)((const char *)got->data + got->byte_offset);
  double err = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = fabs((double)g[i] - (double)want[i]);
    if (e > err)
      err = e;
  }
  return err;
}

/// Calls toy_example on n <= 32 elements (a deterministic pattern) and
/// checks the result against toyReference; ends the test on any failure.
static inline void callToyChecked(KilnSession s, int64_t n) {
  float a[32], b[32], want[32];
  for (int64_t i = 0; i < n; ++i) {
    a[i] = (float)i * 0.5f - 2.0f;
    b[i] = (float)(i % 3) - 0.5f;
  }
  int64_t shape[1] = {n};
  DLTensor args[2] = {tensor1d(a, shape), tensor1d(b, shape)};
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("toy_example"), args, 2, NULL, &results));
  toyReference(a, b, n, want);
  double err = maxError(kilnTensorListGet(results, 0), want, n);
  CHECK(err >= 0 && err <= 1e-6);
  kilnTensorListDestroy(results);
}

/// Reads a whole file into a NUL-terminated malloc'ed buffer (NULL on error).
static inline char *readFile(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = (char *)malloc(size + 1);
  if (buf && fread(buf, 1, size, f) != (size_t)size) {
    free(buf);
    buf = NULL;
  }
  if (buf)
    buf[size] = 0;
  fclose(f);
  return buf;
}

/// Prints the stats of `program` on one line, and its recompile reasons.
static inline void printStats(KilnSession s, const char *program) {
  KilnProgramStats st;
  CHECK_OK(kilnSessionGetStats(s, STR(program), &st));
  printf("stats @%s: calls=%llu hits=%llu misses=%llu compiles=%llu "
         "fallbacks=%llu entries=%zu reasons=%zu\n",
         program, (unsigned long long)st.calls, (unsigned long long)st.hits,
         (unsigned long long)st.misses, (unsigned long long)st.compiles,
         (unsigned long long)st.fallbacks, st.numEntries,
         st.numRecompileReasons);
  for (size_t i = 0; i < st.numRecompileReasons; ++i) {
    KilnStringRef r;
    CHECK_OK(kilnSessionGetRecompileReason(s, STR(program), i, &r));
    printf("  reason %zu: %.*s\n", i + 1, (int)r.length, r.data);
  }
}

#endif /* KILN_TEST_CAPI_COMMON_H */
