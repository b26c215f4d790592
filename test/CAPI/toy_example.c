/*===- toy_example.c - The torch.compile FAQ toy_example through the C API ===*\
|*                                                                            *|
|* Part of Kiln. Loads examples/toy_example.mlir, registers the `print` host  *|
|* callback, calls both branches, then shows recompiles with their reasons,   *|
|* automatic dynamic dims, the cache size limit, frozen mode, per-pass        *|
|* compile times and an on-miss callback. Results are checked against the     *|
|* formula computed here in C.                                                *|
|*                                                                            *|
|*   kiln-capi-toy examples/toy_example.mlir                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

/// `print`: prints its tensor (shape and the first values).
static KilnStatus printCallback(void *userData, const DLTensor *inputs,
                                size_t numInputs, KilnTensorList outputs) {
  (void)outputs;
  int *count = (int *)userData;
  ++*count;
  if (numInputs != 1)
    return kilnStatusCreate(STR("print expects one tensor"));
  const DLTensor *t = &inputs[0];
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->ndim != 1)
    return kilnStatusCreate(STR("print expects a 1-D f32 tensor"));
  const float *v = (const float *)t->data;
  printf("print: tensor<%lldxf32> [", (long long)t->shape[0]);
  for (int64_t i = 0; i < t->shape[0] && i < 4; ++i)
    printf("%s%.4f", i ? ", " : "", v[i]);
  printf("%s]\n", t->shape[0] > 4 ? ", ..." : "");
  return (KilnStatus){NULL};
}

static void collectWarning(void *userData, KilnStringRef message) {
  int *count = (int *)userData;
  ++*count;
  printf("warning: %.*s\n", (int)message.length, message.data);
}

/// Calls toy_example with n elements; `negative` picks the branch. Checks the
/// result against the C formula.
static void callToy(KilnSession s, int64_t n, int negative, const char *what) {
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
  float *want = malloc(n * sizeof(float));
  for (int64_t i = 0; i < n; ++i) {
    a[i] = (float)i - 4.5f;
    b[i] = negative ? -(float)(i % 7 + 1) : (float)(i % 5 + 1) * 0.5f;
  }
  int64_t shape[1] = {n};
  DLTensor args[2] = {tensor1d(a, shape), tensor1d(b, shape)};
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("toy_example"), args, 2, NULL, &results));
  CHECK(kilnTensorListSize(results) == 1);
  toyReference(a, b, n, want);
  double err = maxError(kilnTensorListGet(results, 0), want, n);
  printf("%s: n=%lld %s branch: %s (max error %g)\n", what, (long long)n,
         negative ? "negative" : "positive",
         err >= 0 && err <= 1e-6 ? "matches" : "MISMATCH", err);
  CHECK(err >= 0 && err <= 1e-6);
  kilnTensorListDestroy(results);
  free(a);
  free(b);
  free(want);
}

/// The on-miss callback: records the reason and returns the module text.
typedef struct {
  const char *moduleText;
  int calls;
} MissState;

static KilnStatus onMiss(void *userData, KilnStringRef program,
                         const DLTensor *args, size_t numArgs,
                         KilnStringRef reason, KilnStringRef *moduleText) {
  MissState *state = (MissState *)userData;
  ++state->calls;
  printf("on-miss: @%.*s with %zu args, a: %lld elements, reason: '%.*s'\n",
         (int)program.length, program.data, numArgs,
         (long long)(args[0].ndim ? args[0].shape[0] : 1), (int)reason.length,
         reason.data);
  *moduleText = STR(state->moduleText);
  return (KilnStatus){NULL};
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s toy_example.mlir\n", argv[0]);
    return 2;
  }
  int version = kilnGetAPIVersion();
  printf("api version %d.%d\n", version >> 16, version & 0xffff);
  CHECK(version >> 16 == KILN_C_API_VERSION_MAJOR);

  KilnSession s = kilnSessionCreate();
  CHECK(!kilnSessionIsNull(s));
  int prints = 0, warnings = 0;
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), printCallback,
                                           &prints));
  CHECK_OK(kilnSessionSetWarningCallback(s, collectWarning, &warnings));

  // Both branches of the data-dependent `if`: one compile, then a hit.
  printf("== branches\n");
  callToy(s, 10, 0, "call 1");
  callToy(s, 10, 1, "call 2");
  printf("print ran %d times\n", prints);
  printStats(s, "toy_example");

  // New sizes: a recompile (static 20 would be the naive answer; the size
  // changed, so automatic dynamic makes dim 0 dynamic), then a third size
  // hits the dynamic entry.
  printf("== shapes\n");
  callToy(s, 20, 0, "call 3");
  callToy(s, 30, 1, "call 4");
  callToy(s, 7, 0, "call 5");
  printStats(s, "toy_example");
  KilnStringRef ir;
  CHECK_OK(kilnSessionGetEntryIR(s, STR("toy_example"), 1, &ir));
  printf("entry 1 takes %s\n", strstr(ir.data, "tensor<?xf32>")
                                   ? "tensor<?xf32>"
                                   : "static shapes");

  // The cache limit: static dims, two entries, four sizes.
  printf("== cache limit\n");
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionSetOption(s, STR("cache_size_limit"), STR("2")));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("static")));
  callToy(s, 10, 0, "size 10");
  callToy(s, 20, 0, "size 20");
  callToy(s, 30, 1, "size 30");
  callToy(s, 40, 0, "size 40");
  printf("warnings: %d\n", warnings);
  printStats(s, "toy_example");

  // Frozen: after warm-up nothing compiles; a miss runs the fallback.
  printf("== frozen\n");
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionSetOption(s, STR("cache_size_limit"), STR("8")));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("auto")));
  callToy(s, 10, 0, "warm-up");
  CHECK_OK(kilnSessionSetOption(s, STR("frozen"), STR("true")));
  callToy(s, 10, 1, "frozen hit");
  callToy(s, 16, 0, "frozen miss");
  printStats(s, "toy_example");
  CHECK_OK(kilnSessionSetOption(s, STR("frozen"), STR("false")));

  // A pipeline, and the time spent in each compile phase.
  printf("== pipeline\n");
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("canonicalize,cse")));
  KilnStringRef value;
  CHECK_OK(kilnSessionGetOption(s, STR("pipeline"), &value));
  printf("pipeline = %.*s\n", (int)value.length, value.data);
  callToy(s, 10, 0, "piped");
  KilnProgramStats st;
  CHECK_OK(kilnSessionGetStats(s, STR("toy_example"), &st));
  for (size_t i = 0; i < st.numCompilePhases; ++i) {
    KilnStringRef name;
    double seconds;
    CHECK_OK(kilnSessionGetCompilePhase(s, STR("toy_example"), i, &name,
                                        &seconds));
    CHECK(seconds >= 0 && seconds <= st.totalCompileSeconds + 1e-9);
    printf("phase: %.*s\n", (int)name.length, name.data);
  }
  CHECK(st.totalCompileSeconds > 0);
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("")));

  // The cpu backend: each graph function of an entry compiled by kiln-cpu
  // and the JIT when the entry is made, called on every hit; the backend is
  // part of the guards, so the eager backend misses the cpu entries.
  printf("== cpu backend\n");
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("cpu")));
  CHECK_OK(kilnSessionGetOption(s, STR("backend"), &value));
  printf("backend = %.*s\n", (int)value.length, value.data);
  callToy(s, 10, 0, "cpu 1");
  callToy(s, 10, 1, "cpu 2");
  callToy(s, 20, 0, "cpu 3");
  callToy(s, 33, 1, "cpu 4");
  printStats(s, "toy_example");
  CHECK_OK(kilnSessionGetStats(s, STR("toy_example"), &st));
  for (size_t i = 0; i < st.numCompilePhases; ++i) {
    KilnStringRef name;
    double seconds;
    CHECK_OK(kilnSessionGetCompilePhase(s, STR("toy_example"), i, &name,
                                        &seconds));
    if (strcmp(name.data, "kiln-cpu") == 0 || strcmp(name.data, "jit") == 0) {
      CHECK(seconds > 0);
      printf("phase: %.*s\n", (int)name.length, name.data);
    }
  }
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("eager")));
  callToy(s, 10, 0, "eager");
  printStats(s, "toy_example");
  // A pipeline ending in kiln-cpu selects the cpu backend.
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("kiln-eager,kiln-cpu")));
  CHECK_OK(kilnSessionGetOption(s, STR("backend"), &value));
  printf("pipeline kiln-eager,kiln-cpu: backend = %.*s\n", (int)value.length,
         value.data);
  callToy(s, 10, 1, "piped cpu");
  printStats(s, "toy_example");
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("")));
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("eager")));

  // An on-miss callback supplies the module of each new entry.
  printf("== on-miss\n");
  char *text = readFile(argv[1]);
  CHECK(text);
  MissState miss = {text, 0};
  CHECK_OK(kilnSessionLoadModule(s, STR(text), STR("toy_example.mlir")));
  CHECK_OK(kilnSessionSetMissCallback(s, onMiss, &miss));
  callToy(s, 10, 0, "miss 1");
  callToy(s, 10, 1, "hit");
  callToy(s, 12, 0, "miss 2");
  printf("on-miss ran %d times\n", miss.calls);
  printStats(s, "toy_example");
  CHECK_OK(kilnSessionSetMissCallback(s, NULL, NULL));
  free(text);

  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
