/*===- threads.c - One session called from 8 threads ----------------------===*\
|*                                                                            *|
|* Part of Kiln. Runs a fixed list of calls (two programs, cpu backend, four  *|
|* shapes each) once serially on one session, then from 8 threads on a fresh  *|
|* session, and compares every result and every error message of the          *|
|* parallel run with the serial run, and the serial results with a plain C    *|
|* reference. Each thread alternates between the programs. Two scenarios:     *|
|*  * dynamic = static: every new shape recompiles; guard failures that       *|
|*    recompile (@loss with f64 inputs: a dtype change) and that cannot be    *|
|*    compiled (@loss with a target shorter than the input: the specializer   *|
|*    refuses it, naming the sizes);                                          *|
|*  * dynamic = auto: the second shape of a program recompiles it with a      *|
|*    dynamic dim, which every later shape uses.                              *|
|* In both, one call in seven of @loss has an out-of-range target, a value    *|
|* of its own (100 + the call's index), so every failing call must see its    *|
|* own error, no other (reported from OpenMP workers too). A host callback in *|
|* each program counts how many calls are inside it at once: the parallel run *|
|* must see at least 2 (calls of one session are not serialized). It waits    *|
|* for a second call only up to a deadline, so a serialized session fails the *|
|* check instead of hanging.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* clock_gettime, nanosleep (the tests build as strict C11). */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static const char *kModule =
    "kg.program @loss(%x: tensor<8x4xf32>, %t: tensor<8xi64>) -> tensor<f32> "
    "{\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [8, 4]} : tensor<8x4xf32>\n"
    "  kg.guard_tensor %t {dtype = i64, shape = [8]} : tensor<8xi64>\n"
    "  %l = kg.graph @loss_g0(%x, %t) : (tensor<8x4xf32>, tensor<8xi64>) -> "
    "tensor<f32> {\n"
    "  ^bb0(%x0: tensor<8x4xf32>, %t0: tensor<8xi64>):\n"
    "    %r = kt.nll_loss %x0, %t0 : (tensor<8x4xf32>, tensor<8xi64>) -> "
    "tensor<f32> loc(\"loss.py\":2:8)\n"
    "    kg.yield %r : tensor<f32>\n"
    "  }\n"
    "  kg.break \"call_function probe\" {\n"
    "    kg.host_call @probe(%x) : (tensor<8x4xf32>) -> ()\n"
    "  }\n"
    "  kg.return %l : tensor<f32>\n"
    "}\n"
    "kg.program @scale(%a: tensor<16xf32>) -> tensor<16xf32> {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [16]} : tensor<16xf32>\n"
    "  kg.break \"call_function probe\" {\n"
    "    kg.host_call @probe(%a) : (tensor<16xf32>) -> ()\n"
    "  }\n"
    "  %y = kg.graph @scale_g0(%a) : (tensor<16xf32>) -> tensor<16xf32> {\n"
    "  ^bb0(%a0: tensor<16xf32>):\n"
    "    %abs = kt.abs %a0 : (tensor<16xf32>) -> tensor<16xf32>\n"
    "    %one = kt.constant {value = dense<1.0> : tensor<f32>} : () -> "
    "tensor<f32>\n"
    "    %den = kt.add %abs, %one : (tensor<16xf32>, tensor<f32>) -> "
    "tensor<16xf32>\n"
    "    %q = kt.div %a0, %den : (tensor<16xf32>, tensor<16xf32>) -> "
    "tensor<16xf32>\n"
    "    %three = kt.constant {value = dense<3.0> : tensor<f32>} : () -> "
    "tensor<f32>\n"
    "    %p = kt.mul %q, %three : (tensor<16xf32>, tensor<f32>) -> "
    "tensor<16xf32>\n"
    "    kg.yield %p : tensor<16xf32>\n"
    "  }\n"
    "  kg.return %y : tensor<16xf32>\n"
    "}\n";

enum { kThreads = 8, kCallsPerThread = 24, kCalls = kThreads * kCallsPerThread };
/// Rows of @loss (large enough for its row loop to be split among OpenMP
/// workers, so failed checks are reported from workers too) and lengths of
/// @scale.
static const int64_t kRows[4] = {1024, 2048, 3072, 4096};
static const int64_t kLengths[4] = {16, 1000, 4096, 100000};

/// What a call is meant to do.
enum Kind {
  kOk,       /* succeeds */
  kBadIndex, /* @loss: a target out of range, fails in the compiled code */
  kShortTarget, /* @loss: target shorter than x (static scenario only): the
                   specializer refuses it (a guard failure with no entry) */
  kF64,      /* @loss with an f64 input (static scenario only): a dtype
                guard failure that recompiles; succeeds */
};

typedef struct {
  int program; /* 0: loss, 1: scale */
  int64_t size;
  enum Kind kind;
  int64_t tsize; /* loss: the target's length */
  float *x;      /* loss: size x 4; scale: size */
  double *xd;    /* kF64: x in f64 */
  int64_t *t;    /* loss: size */
} Task;

typedef struct {
  int failed;
  char message[512];
  int64_t n;
  double *values;
} Outcome;

static Task tasks[kCalls];
static Outcome serialOut[kCalls], parallelOut[kCalls];

static uint64_t lcg = 12345;
static float nextFloat(void) {
  lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((lcg >> 40) & 0xffff) / 65536.0f * 4.0f - 2.0f;
}

/* Thread t makes calls t, t + 8, t + 16, ...: it alternates between the
 * programs, and each program sees every shape from several threads. */
static void makeTasks(int isStatic) {
  lcg = 12345;
  for (int i = 0; i < kCalls; ++i) {
    Task *k = &tasks[i];
    int c = i / kThreads;
    k->program = (i + c) % 2;
    int shape = (i / 2 + c) % 4;
    k->size = k->program ? kLengths[shape] : kRows[shape];
    k->kind = kOk;
    if (!k->program && i % 7 == 2)
      k->kind = kBadIndex;
    else if (isStatic && !k->program && i % 11 == 5)
      k->kind = kShortTarget;
    else if (isStatic && !k->program && i % 5 == 3 && shape < 2)
      k->kind = kF64;
    int64_t n = k->program ? k->size : k->size * 4;
    k->x = (float *)malloc(sizeof(float) * n);
    for (int64_t j = 0; j < n; ++j)
      k->x[j] = nextFloat();
    k->xd = NULL;
    if (k->kind == kF64) {
      k->xd = (double *)malloc(sizeof(double) * n);
      for (int64_t j = 0; j < n; ++j)
        k->xd[j] = (double)k->x[j] * 0.5 + 1e-9 * j; /* not an f32 value */
    }
    k->t = NULL;
    k->tsize = k->size;
    if (!k->program) {
      k->t = (int64_t *)malloc(sizeof(int64_t) * k->size);
      for (int64_t j = 0; j < k->size; ++j)
        k->t[j] = (j * 7 + i) % 4;
      if (k->kind == kBadIndex) /* in the last quarter of the rows: a
                                   worker's share */
        k->t[k->size - 1 - i % 5] = 100 + i;
      if (k->kind == kShortTarget)
        k->tsize = k->size - 1 - i % 3;
    }
  }
}

static void freeTasks(void) {
  for (int i = 0; i < kCalls; ++i) {
    free(tasks[i].x);
    free(tasks[i].xd);
    free(tasks[i].t);
    free(serialOut[i].values);
    free(parallelOut[i].values);
  }
  memset(serialOut, 0, sizeof(serialOut));
  memset(parallelOut, 0, sizeof(parallelOut));
}

/* The host callback: counts the calls inside it at once. While `waiting`,
 * a call that finds itself alone waits (up to the deadline) for another. */
static atomic_int inside = 0, maxInside = 0, waiting = 0;
static double deadline = 0;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static KilnStatus probe(void *userData, const DLTensor *inputs, size_t n,
                        KilnTensorList outputs) {
  (void)userData;
  (void)inputs;
  (void)n;
  (void)outputs;
  int in = atomic_fetch_add(&inside, 1) + 1;
  int m = atomic_load(&maxInside);
  while (in > m && !atomic_compare_exchange_weak(&maxInside, &m, in))
    ;
  while (atomic_load(&waiting) && atomic_load(&maxInside) < 2 &&
         now() < deadline) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  atomic_fetch_sub(&inside, 1);
  return (KilnStatus){NULL};
}

static KilnSession newSession(const char *dynamic) {
  KilnSession s = kilnSessionCreate();
  CHECK(!kilnSessionIsNull(s));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("probe"), probe, NULL));
  CHECK_OK(kilnSessionLoadModule(s, STR(kModule), STR("threads.mlir")));
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("cpu")));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR(dynamic)));
  return s;
}

static void runTask(KilnSession s, int i, Outcome *out) {
  Task *k = &tasks[i];
  DLTensor args[2];
  int64_t xshape[2] = {k->size, 4}, tshape[1] = {k->tsize};
  memset(args, 0, sizeof(args));
  args[0].data = k->xd ? (void *)k->xd : (void *)k->x;
  args[0].device.device_type = kDLCPU;
  args[0].ndim = k->program ? 1 : 2;
  args[0].dtype.code = kDLFloat;
  args[0].dtype.bits = k->xd ? 64 : 32;
  args[0].dtype.lanes = 1;
  args[0].shape = xshape;
  if (!k->program) {
    args[1] = args[0];
    args[1].data = k->t;
    args[1].ndim = 1;
    args[1].dtype.code = kDLInt;
    args[1].dtype.bits = 64;
    args[1].shape = tshape;
  }
  KilnTensorList results;
  KilnStatus st = kilnSessionCall(s, STR(k->program ? "scale" : "loss"), args,
                                  k->program ? 1 : 2, NULL, &results);
  if (!kilnStatusIsOk(st)) {
    KilnStringRef m = kilnStatusGetMessage(st);
    out->failed = 1;
    snprintf(out->message, sizeof(out->message), "%.*s", (int)m.length,
             m.data);
    kilnStatusDestroy(st);
    return;
  }
  CHECK(kilnTensorListSize(results) == 1);
  const DLTensor *r = kilnTensorListGet(results, 0);
  int bits = k->xd ? 64 : 32;
  CHECK(r && r->dtype.code == kDLFloat && r->dtype.bits == bits);
  int64_t n = 1;
  for (int d = 0; d < r->ndim; ++d)
    n *= r->shape[d];
  out->n = n;
  out->values = (double *)malloc(sizeof(double) * (n ? n : 1));
  const char *base = (const char *)r->data + r->byte_offset;
  for (int64_t j = 0; j < n; ++j)
    out->values[j] =
        bits == 64 ? ((const double *)base)[j] : ((const float *)base)[j];
  kilnTensorListDestroy(results);
}

/* The plain C result of a successful task, compared with the serial run. */
static double referenceError(int i, const Outcome *o) {
  Task *k = &tasks[i];
  if (k->program) {
    if (o->n != k->size)
      return 1e30;
    double err = 0;
    for (int64_t j = 0; j < k->size; ++j) {
      double a = k->x[j], want = a / (fabs(a) + 1.0) * 3.0;
      double e = fabs(want - o->values[j]);
      err = e > err ? e : err;
    }
    return err;
  }
  if (o->n != 1)
    return 1e30;
  double sum = 0;
  for (int64_t j = 0; j < k->size; ++j)
    sum -= k->xd ? k->xd[j * 4 + k->t[j]] : k->x[j * 4 + k->t[j]];
  return fabs(sum / (double)k->size - o->values[0]);
}

/* Whether a failed call's message is its own: it names the call's bad
 * target value, or the call's target and input sizes. */
static int ownError(int i, const Outcome *o) {
  Task *k = &tasks[i];
  char want[128];
  if (k->kind == kBadIndex)
    snprintf(want, sizeof(want), "target %d is out of range [0, 4)", 100 + i);
  else if (k->kind == kShortTarget)
    snprintf(want, sizeof(want),
             "cannot specialize @loss for these inputs: loc(\"loss.py\":2:8): "
             "'kt.nll_loss' op target shape %lld does not match input shape "
             "%lldx4",
             (long long)k->tsize, (long long)k->size);
  else
    return 0;
  return strstr(o->message, want) != NULL;
}

static KilnSession shared;

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int c = 0; c < kCallsPerThread; ++c) {
    int i = t + c * kThreads;
    runTask(shared, i, &parallelOut[i]);
  }
  return NULL;
}

static void statsOf(KilnSession s, const char *program, KilnProgramStats *st) {
  CHECK_OK(kilnSessionGetStats(s, STR(program), st));
}

/* One scenario: `dynamic` is the session's option. */
static void runScenario(const char *dynamic) {
  int isStatic = !strcmp(dynamic, "static");
  makeTasks(isStatic);

  /* Serial run. */
  KilnSession serial = newSession(dynamic);
  for (int i = 0; i < kCalls; ++i)
    runTask(serial, i, &serialOut[i]);
  int counts[4] = {0, 0, 0, 0}, refBad = 0;
  for (int i = 0; i < kCalls; ++i) {
    Task *k = &tasks[i];
    ++counts[k->kind];
    int shouldFail = k->kind == kBadIndex || k->kind == kShortTarget;
    if (serialOut[i].failed != shouldFail ||
        (shouldFail && !ownError(i, &serialOut[i]))) {
      printf("[%s] serial call %d (kind %d): failed=%d, expected %d: %s\n",
             dynamic, i, k->kind, serialOut[i].failed, shouldFail,
             serialOut[i].message);
      refBad = 1;
    }
    if (serialOut[i].failed)
      continue;
    double err = referenceError(i, &serialOut[i]);
    if (err > 1e-4) {
      printf("[%s] serial call %d: error %g against the C reference\n",
             dynamic, i, err);
      refBad = 1;
    }
  }
  printf("[%s] serial: %d calls, %d failed at run time, %d refused by the "
         "specializer, %d f64 recompiles' calls, results and errors %s\n",
         dynamic, kCalls, counts[kBadIndex], counts[kShortTarget],
         counts[kF64], refBad ? "WRONG" : "right");
  for (int kind = kBadIndex; kind <= kShortTarget; ++kind)
    for (int i = 0; i < kCalls; ++i)
      if (tasks[i].kind == (enum Kind)kind) {
        printf("[%s] serial error: %s\n", dynamic, serialOut[i].message);
        break;
      }

  /* Parallel run on a fresh session: its compiles happen under load. */
  shared = newSession(dynamic);
  atomic_store(&waiting, 1);
  atomic_store(&maxInside, 0);
  deadline = now() + 20.0;
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t)
    CHECK(pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t) == 0);
  for (int t = 0; t < kThreads; ++t)
    CHECK(pthread_join(threads[t], NULL) == 0);
  atomic_store(&waiting, 0);

  int mismatches = 0;
  for (int i = 0; i < kCalls; ++i) {
    Outcome *s = &serialOut[i], *p = &parallelOut[i];
    int same = s->failed == p->failed;
    if (same && s->failed)
      same = !strcmp(s->message, p->message);
    if (same && !s->failed) {
      same = s->n == p->n;
      for (int64_t j = 0; same && j < s->n; ++j) {
        double a = s->values[j], b = p->values[j];
        same = fabs(a - b) <= 1e-6 * (1 + fabs(a));
      }
    }
    if (!same) {
      ++mismatches;
      printf("[%s] call %d (%s, size %lld): serial %s / parallel %s\n",
             dynamic, i, tasks[i].program ? "scale" : "loss",
             (long long)tasks[i].size, s->failed ? s->message : "ok",
             p->failed ? p->message : "ok");
    }
  }
  printf("[%s] parallel: %d threads, %d calls, %d differ from the serial "
         "run\n",
         dynamic, kThreads, kCalls, mismatches);
  printf("[%s] max calls inside the host callback at once >= 2: %s\n",
         dynamic, atomic_load(&maxInside) >= 2 ? "yes" : "no");

  /* The same compiles, hits and misses as the serial run: no entry was
   * compiled twice, no count lost. (In both scenarios the entries do not
   * depend on the calls' order: static compiles one entry per shape and
   * dtype; auto one for the first shape and one dynamic entry.) */
  const char *programs[2] = {"loss", "scale"};
  for (int p = 0; p < 2; ++p) {
    KilnProgramStats a, b;
    statsOf(serial, programs[p], &a);
    statsOf(shared, programs[p], &b);
    printf("[%s] stats @%s: calls %s, compiles %s, hits %s, misses %s "
           "(serial: calls=%llu compiles=%llu hits=%llu misses=%llu)\n",
           dynamic, programs[p], a.calls == b.calls ? "same" : "DIFFER",
           a.compiles == b.compiles ? "same" : "DIFFER",
           a.hits == b.hits ? "same" : "DIFFER",
           a.misses == b.misses ? "same" : "DIFFER",
           (unsigned long long)a.calls, (unsigned long long)a.compiles,
           (unsigned long long)a.hits, (unsigned long long)a.misses);
  }

  kilnSessionDestroy(serial);
  kilnSessionDestroy(shared);
  freeTasks();
}

int main(int argc, char **argv) {
  /* No argument (or a file name, as test/CAPI/run-asan.sh passes): both
   * scenarios; "static" or "auto": that one. */
  const char *only = argc > 1 && (!strcmp(argv[1], "static") ||
                                  !strcmp(argv[1], "auto"))
                         ? argv[1]
                         : NULL;
  if (!only || !strcmp(only, "static"))
    runScenario("static");
  if (!only || !strcmp(only, "auto"))
    runScenario("auto");
  printf("done\n");
  return 0;
}
