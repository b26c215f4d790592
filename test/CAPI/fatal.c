/*===- fatal.c - LLVM's fatal errors do not end the embedding process -----===*\
|*                                                                            *|
|* Part of Kiln. Inputs that used to reach llvm::report_fatal_error inside    *|
|* MLIR (and take the process down with "LLVM ERROR: ..."): pass pipeline     *|
|* strings that nest a module pass under func.func, Kiln's named pipelines    *|
|* (validated up front) and upstream ones (caught while the pipeline is       *|
|* built), through every entry point that takes a pipeline. Each must be an   *|
|* error status with the reason, and the session must stay usable.           *|
|*                                                                            *|
|*   kiln-capi-fatal examples/toy_example.mlir                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include "common.h"

#include <dlfcn.h>

static const char *BAD_PIPELINES[] = {
    "func.func(kiln-eager)",          "func.func(kiln-aot-eager)",
    "func.func(kiln-cpu)",            "func.func(kiln-cpu{fuse=false})",
    "func.func(sparsifier)",          "canonicalize,func.func(kiln-eager)",
    "func.func(canonicalize,sparsifier)",
};

/// Registers MLIR's sparse tensor pipelines, as an embedding process that
/// also uses MLIR (mlir::registerAllPasses) has them: `sparsifier`'s builder
/// adds module passes without checking where it is nested, so
/// `func.func(sparsifier)` reaches LLVM's fatal error while the pipeline is
/// built (Kiln's own pipelines check first). A C++ function of libMLIR.so,
/// looked up by its mangled name.
static void registerUpstreamPipelines(void) {
  void *sym = dlsym(RTLD_DEFAULT,
                    "_ZN4mlir13sparse_tensor29registerSparseTensorPipelinesEv");
  CHECK(sym);
  void (*reg)(void);
  memcpy(&reg, &sym, sizeof(reg));
  reg();
}

static const char *MODULE =
    "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %0 = kt.sin %a : (tensor<3xf32>) -> tensor<3xf32>\n"
    "  return %0 : tensor<3xf32>\n"
    "}\n";

static float A[10], B[10];
static int64_t SHAPE10[1] = {10};

static KilnStatus printNothing(void *userData, const DLTensor *inputs,
                               size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

/// toy_example runs and matches the C reference.
static void checkCall(KilnSession s, const char *label) {
  DLTensor args[2] = {tensor1d(A, SHAPE10), tensor1d(B, SHAPE10)};
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("toy_example"), args, 2, NULL, &results));
  float want[10];
  toyReference(A, B, 10, want);
  const float *got = (const float *)kilnTensorListGet(results, 0)->data;
  for (int i = 0; i < 10; ++i)
    CHECK(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])));
  kilnTensorListDestroy(results);
  printf("%s: ok\n", label);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s toy_example.mlir\n", argv[0]);
    return 2;
  }
  for (int i = 0; i < 10; ++i) {
    A[i] = (float)i - 4.5f;
    B[i] = (float)i;
  }
  registerUpstreamPipelines();
  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), printNothing,
                                           NULL));
  size_t n = sizeof(BAD_PIPELINES) / sizeof(BAD_PIPELINES[0]);
  printf("== set option pipeline\n");
  for (size_t i = 0; i < n; ++i) {
    printf("%s -> ", BAD_PIPELINES[i]);
    expectError("set", kilnSessionSetOption(s, STR("pipeline"),
                                            STR(BAD_PIPELINES[i])));
  }
  KilnStringRef value;
  CHECK_OK(kilnSessionGetOption(s, STR("pipeline"), &value));
  printf("pipeline after the errors: '%.*s'\n", (int)value.length, value.data);
  checkCall(s, "call after the errors");

  printf("== transform\n");
  for (size_t i = 0; i < n; ++i) {
    KilnStringRef out = {"x", 1};
    printf("%s -> ", BAD_PIPELINES[i]);
    expectError("transform", kilnSessionTransformModule(
                                 s, STR(MODULE), STR(BAD_PIPELINES[i]), &out));
    CHECK(out.data == NULL && out.length == 0);
  }
  KilnStringRef out;
  CHECK_OK(kilnSessionTransformModule(s, STR(MODULE),
                                      STR("func.func(canonicalize)"), &out));
  printf("transform after the errors: %s\n",
         strstr(out.data, "kt.sin") ? "has kt.sin" : "no kt.sin");

  // The same errors again, then the cpu backend: nothing of the abandoned
  // pipeline builds is left in the way.
  printf("== again\n");
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < n; ++i) {
      KilnStatus st =
          kilnSessionSetOption(s, STR("pipeline"), STR(BAD_PIPELINES[i]));
      CHECK(!kilnStatusIsOk(st));
      kilnStatusDestroy(st);
    }
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("canonicalize,kiln-cpu")));
  checkCall(s, "cpu call after the errors");
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
