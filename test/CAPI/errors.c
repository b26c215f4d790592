/*===- errors.c - Bad arguments to the C API give error statuses ----------===*\
|*                                                                            *|
|* Part of Kiln. Every function with NULL handles, NULL pointers and invalid  *|
|* values returns an error status with a message (and does not crash);       *|
|* wrong dtypes and ranks recompile or fail clearly; host callbacks that are  *|
|* missing or fail give runtime errors carrying their message.                *|
|*                                                                            *|
|*   kiln-capi-errors examples/toy_example.mlir                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

#include <stdint.h>

static KilnStatus okCallback(void *userData, const DLTensor *inputs,
                             size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

static KilnStatus failingCallback(void *userData, const DLTensor *inputs,
                                  size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)outputs;
  char buf[128];
  snprintf(buf, sizeof(buf), "cannot print %zu tensor of %lld elements",
           numInputs, (long long)inputs[0].shape[0]);
  return kilnStatusCreate(STR(buf));
}

/// Returns a value where none is expected.
static KilnStatus extraOutputCallback(void *userData, const DLTensor *inputs,
                                      size_t numInputs,
                                      KilnTensorList outputs) {
  (void)userData, (void)numInputs;
  return kilnTensorListAppend(outputs, &inputs[0]);
}

/// Tries appending invalid tensors from inside a callback, then succeeds.
static KilnStatus badAppendCallback(void *userData, const DLTensor *inputs,
                                    size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)numInputs;
  DLTensor bad = inputs[0];
  bad.dtype.lanes = 4;
  KilnStatus st = kilnTensorListAppend(outputs, &bad);
  if (kilnStatusIsOk(st))
    return kilnStatusCreate(STR("appending a 4-lane tensor succeeded"));
  kilnStatusDestroy(st);
  return (KilnStatus){NULL};
}

static KilnStatus missError(void *userData, KilnStringRef program,
                            const DLTensor *args, size_t numArgs,
                            KilnStringRef reason, KilnStringRef *moduleText) {
  (void)userData, (void)program, (void)args, (void)numArgs, (void)reason;
  (void)moduleText;
  return kilnStatusCreate(STR("the frontend cannot re-capture this"));
}

static KilnStatus missGarbage(void *userData, KilnStringRef program,
                              const DLTensor *args, size_t numArgs,
                              KilnStringRef reason, KilnStringRef *moduleText) {
  (void)userData, (void)program, (void)args, (void)numArgs, (void)reason;
  *moduleText = STR("kg.program @toy_example(");
  return (KilnStatus){NULL};
}

static KilnStatus missNothing(void *userData, KilnStringRef program,
                              const DLTensor *args, size_t numArgs,
                              KilnStringRef reason, KilnStringRef *moduleText) {
  (void)userData, (void)program, (void)args, (void)numArgs, (void)reason;
  (void)moduleText;
  return (KilnStatus){NULL};
}

static float A[10], B[10];
static int64_t SHAPE10[1] = {10};

/// A call of toy_example with `args`; prints the status or the stats.
static void tryCall(KilnSession s, const char *label, DLTensor *args,
                    size_t n) {
  KilnTensorList results;
  results.ptr = (void *)1; // must be reset to null on failure
  KilnStatus st = kilnSessionCall(s, STR("toy_example"), args, n, NULL,
                                  &results);
  if (expectError(label, st)) {
    CHECK(kilnTensorListIsNull(results));
    return;
  }
  kilnTensorListDestroy(results);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s toy_example.mlir\n", argv[0]);
    return 2;
  }
  const char *path = argv[1];
  for (int i = 0; i < 10; ++i) {
    A[i] = (float)i - 4.5f;
    B[i] = (float)i;
  }

  // Statuses, strings and lists on their own.
  printf("== basics\n");
  CHECK(kilnStatusIsOk((KilnStatus){NULL}));
  KilnStringRef empty = kilnStatusGetMessage((KilnStatus){NULL});
  CHECK(empty.length == 0 && empty.data);
  kilnStatusDestroy((KilnStatus){NULL});
  KilnStringRef nullStr = kilnStringRefCreateFromCString(NULL);
  CHECK(nullStr.data == NULL && nullStr.length == 0);
  KilnStringRef badStr = {NULL, 3};
  expectError("status with bad message", kilnStatusCreate(badStr));
  expectError("status with empty message",
              kilnStatusCreate(kilnStringRefCreate("", 0)));
  KilnTensorList nullList = {NULL};
  CHECK(kilnTensorListSize(nullList) == 0);
  CHECK(kilnTensorListGet(nullList, 0) == NULL);
  kilnTensorListDestroy(nullList);
  DLTensor t = tensor1d(A, SHAPE10);
  expectError("append to null list", kilnTensorListAppend(nullList, &t));
  KilnTensorList list = kilnTensorListCreate();
  expectError("append NULL", kilnTensorListAppend(list, NULL));
  CHECK(kilnTensorListGet(list, 0) == NULL);
  CHECK_OK(kilnTensorListAppend(list, &t));
  CHECK(kilnTensorListSize(list) == 1 && kilnTensorListGet(list, 1) == NULL);
  const DLTensor *copy = kilnTensorListGet(list, 0);
  CHECK(copy->data != A && ((float *)copy->data)[9] == A[9]);
  kilnTensorListDestroy(list);

  // Every session function with the null session.
  printf("== null session\n");
  KilnSession ns = {NULL};
  KilnStringRef sref;
  KilnProgramStats stats;
  double seconds;
  KilnTensorList results;
  expectError("load", kilnSessionLoadModule(ns, STR("module {}"), STR("")));
  expectError("load file", kilnSessionLoadModuleFile(ns, STR(path)));
  expectError("set option", kilnSessionSetOption(ns, STR("frozen"), STR("true")));
  expectError("get option", kilnSessionGetOption(ns, STR("frozen"), &sref));
  expectError("mark dynamic", kilnSessionMarkDynamic(ns, STR("toy_example"), 0, 0));
  expectError("mark static", kilnSessionMarkStatic(ns, STR("toy_example"), 0, 0));
  expectError("register", kilnSessionRegisterHostCallback(ns, STR("print"), okCallback, NULL));
  expectError("miss callback", kilnSessionSetMissCallback(ns, missError, NULL));
  expectError("warning callback", kilnSessionSetWarningCallback(ns, NULL, NULL));
  expectError("call", kilnSessionCall(ns, STR("toy_example"), &t, 1, NULL, &results));
  CHECK(kilnTensorListIsNull(results));
  expectError("stats", kilnSessionGetStats(ns, STR("toy_example"), &stats));
  expectError("reason", kilnSessionGetRecompileReason(ns, STR("toy_example"), 0, &sref));
  expectError("phase", kilnSessionGetCompilePhase(ns, STR("toy_example"), 0, &sref, &seconds));
  expectError("entry ir", kilnSessionGetEntryIR(ns, STR("toy_example"), 0, &sref));
  kilnSessionDestroy(ns);

  // A session, before and while loading.
  printf("== loading\n");
  KilnSession s = kilnSessionCreate();
  expectError("call before load", kilnSessionCall(s, STR("toy_example"), &t, 1, NULL, &results));
  expectError("stats before load", kilnSessionGetStats(s, STR("toy_example"), &stats));
  expectError("mark before load", kilnSessionMarkDynamic(s, STR("toy_example"), 0, 0));
  expectError("load NULL text", kilnSessionLoadModule(s, badStr, STR("x")));
  expectError("load NULL name", kilnSessionLoadModule(s, STR("module {}"), badStr));
  expectError("load bad IR", kilnSessionLoadModule(s, STR("kg.program @p(%a: tensor<2xf32>) {\n  kg.bogus\n}\n"), STR("bad.mlir")));
  expectError("load missing file", kilnSessionLoadModuleFile(s, STR("/nonexistent/x.mlir")));
  expectError("load empty path", kilnSessionLoadModuleFile(s, STR("")));
  expectError("load NULL path", kilnSessionLoadModuleFile(s, badStr));
  {
    // Empty text with NULL data (allowed: KilnStringRef's data may be NULL
    // when its length is 0) is an empty module (found by kiln-fuzz-capi: the
    // C API re-parsed the caller's bytes in place, and MLIR's parser crashed
    // on a buffer starting at NULL). Text that is not NUL-terminated: the
    // bytes after it are not part of the module.
    KilnStatus st = kilnSessionLoadModule(s, kilnStringRefCreate(NULL, 0),
                                          STR("empty.mlir"));
    printf("load NULL empty text: %s\n",
           kilnStatusIsOk(st) ? "ok" : kilnStatusGetMessage(st).data);
    kilnStatusDestroy(st);
    static const char notTerminated[] =
        "kg.program @unterminated(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  kg.return %a : tensor<2xf32>\n}\n"
        "kg.bogus garbage after the end";
    size_t length = strstr(notTerminated, "kg.bogus") - notTerminated;
    st = kilnSessionLoadModule(s, kilnStringRefCreate(notTerminated, length),
                               STR("unterminated.mlir"));
    printf("load text without a NUL: %s\n",
           kilnStatusIsOk(st) ? "ok" : kilnStatusGetMessage(st).data);
    kilnStatusDestroy(st);
  }
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(path)));

  printf("== options\n");
  expectError("unknown key", kilnSessionSetOption(s, STR("mode"), STR("max-autotune")));
  expectError("NULL key", kilnSessionSetOption(s, badStr, STR("x")));
  expectError("NULL value", kilnSessionSetOption(s, STR("frozen"), badStr));
  expectError("backend", kilnSessionSetOption(s, STR("backend"), STR("inductor")));
  expectError("pipeline", kilnSessionSetOption(s, STR("pipeline"), STR("no-such-pass")));
  expectError("cache_size_limit 0", kilnSessionSetOption(s, STR("cache_size_limit"), STR("0")));
  expectError("cache_size_limit x", kilnSessionSetOption(s, STR("cache_size_limit"), STR("two")));
  expectError("frozen", kilnSessionSetOption(s, STR("frozen"), STR("yes")));
  expectError("dynamic", kilnSessionSetOption(s, STR("dynamic"), STR("sometimes")));
  expectError("cpu_fallback", kilnSessionSetOption(s, STR("cpu_fallback"), STR("maybe")));
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("canonicalize,kiln-cpu")));
  expectError("backend vs pipeline", kilnSessionSetOption(s, STR("backend"), STR("eager")));
  CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR("kiln-eager")));
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("eager")));
  expectError("get unknown", kilnSessionGetOption(s, STR("mode"), &sref));
  expectError("get NULL out", kilnSessionGetOption(s, STR("frozen"), NULL));
  const char *keys[] = {"backend", "pipeline", "cache_size_limit", "frozen", "dynamic", "cpu_fallback"};
  for (int i = 0; i < 6; ++i) {
    CHECK_OK(kilnSessionGetOption(s, STR(keys[i]), &sref));
    printf("option %s = '%.*s'\n", keys[i], (int)sref.length, sref.data);
  }
  // The disk cache's directory: off under lit (KILN_CACHE_DIR=off), a
  // directory once set, off again for "off" and "".
  const char *dirs[] = {NULL, "/nonexistent/kiln-cache", "off", "/x", ""};
  for (int i = 0; i < 5; ++i) {
    if (dirs[i])
      CHECK_OK(kilnSessionSetOption(s, STR("cache_dir"), STR(dirs[i])));
    CHECK_OK(kilnSessionGetOption(s, STR("cache_dir"), &sref));
    printf("option cache_dir = '%.*s'\n", (int)sref.length, sref.data);
  }

  printf("== programs and marks\n");
  expectError("mark unknown program", kilnSessionMarkDynamic(s, STR("nope"), 0, 0));
  expectError("mark arg out of range", kilnSessionMarkStatic(s, STR("toy_example"), 2, 0));
  expectError("mark NULL program", kilnSessionMarkDynamic(s, badStr, 0, 0));
  expectError("stats unknown program", kilnSessionGetStats(s, STR("nope"), &stats));
  expectError("stats NULL out", kilnSessionGetStats(s, STR("toy_example"), NULL));
  CHECK_OK(kilnSessionGetStats(s, STR("toy_example"), &stats));
  CHECK(stats.calls == 0 && stats.numEntries == 0);
  expectError("reason out of range", kilnSessionGetRecompileReason(s, STR("toy_example"), 0, &sref));
  expectError("reason NULL out", kilnSessionGetRecompileReason(s, STR("toy_example"), 0, NULL));
  expectError("phase out of range", kilnSessionGetCompilePhase(s, STR("toy_example"), 3, &sref, &seconds));
  expectError("phase NULL out", kilnSessionGetCompilePhase(s, STR("toy_example"), 0, NULL, &seconds));
  expectError("entry out of range", kilnSessionGetEntryIR(s, STR("toy_example"), 0, &sref));
  expectError("entry NULL out", kilnSessionGetEntryIR(s, STR("toy_example"), 0, NULL));
  expectError("register NULL callback", kilnSessionRegisterHostCallback(s, STR("print"), NULL, NULL));
  expectError("register empty name", kilnSessionRegisterHostCallback(s, STR(""), okCallback, NULL));
  expectError("register NULL name", kilnSessionRegisterHostCallback(s, badStr, okCallback, NULL));

  printf("== call arguments\n");
  DLTensor args[2] = {tensor1d(A, SHAPE10), tensor1d(B, SHAPE10)};
  expectError("unknown program", kilnSessionCall(s, STR("nope"), args, 2, NULL, &results));
  expectError("NULL program", kilnSessionCall(s, badStr, args, 2, NULL, &results));
  expectError("NULL results", kilnSessionCall(s, STR("toy_example"), args, 2, NULL, NULL));
  expectError("NULL args", kilnSessionCall(s, STR("toy_example"), NULL, 2, NULL, &results));
  tryCall(s, "one arg", args, 1);
  DLTensor three[3] = {args[0], args[1], args[1]};
  tryCall(s, "three args", three, 3);
  DLTensor bad[2];
  bad[0] = args[0], bad[1] = args[1];
  bad[1].dtype.code = 3;
  tryCall(s, "dtype code 3", bad, 2);
  bad[1] = args[1], bad[1].dtype.code = kDLUInt, bad[1].dtype.bits = 16;
  tryCall(s, "uint16", bad, 2);
  bad[1] = args[1], bad[1].dtype.bits = 8;
  tryCall(s, "float8", bad, 2);
  bad[1] = args[1], bad[1].dtype.lanes = 2;
  tryCall(s, "lanes 2", bad, 2);
  bad[1] = args[1], bad[1].dtype.code = kDLComplex, bad[1].dtype.bits = 64;
  tryCall(s, "complex64", bad, 2);
  bad[1] = args[1], bad[1].ndim = -1;
  tryCall(s, "ndim -1", bad, 2);
  bad[1] = args[1], bad[1].shape = NULL;
  tryCall(s, "NULL shape", bad, 2);
  int64_t negShape[1] = {-3};
  bad[1] = args[1], bad[1].shape = negShape;
  tryCall(s, "negative size", bad, 2);
  bad[1] = args[1], bad[1].data = NULL;
  tryCall(s, "NULL data", bad, 2);
  bad[1] = args[1], bad[1].device.device_type = kDLCUDA;
  tryCall(s, "cuda", bad, 2);
  bad[1] = args[1], bad[1].device.device_type = (DLDeviceType)7;
  tryCall(s, "device 7", bad, 2);
  uint32_t flags[2] = {0, 8};
  expectError("unknown flag", kilnSessionCall(s, STR("toy_example"), args, 2, flags, &results));
  KilnStatus st;

  printf("== host callbacks\n");
  tryCall(s, "no print callback", args, 2);
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), failingCallback, NULL));
  tryCall(s, "failing print", args, 2);
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), extraOutputCallback, NULL));
  tryCall(s, "print returning a value", args, 2);
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), badAppendCallback, NULL));
  tryCall(s, "print appending a bad tensor", args, 2);
  printStats(s, "toy_example");

  // Wrong dtype and rank: a guard fails, so they recompile (or fail with
  // the specializer's message), and never crash.
  printf("== guards\n");
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), okCallback, NULL));
  double A64[10], B64[10];
  for (int i = 0; i < 10; ++i)
    A64[i] = A[i], B64[i] = B[i];
  DLTensor f64[2] = {args[0], args[1]};
  f64[0].data = A64, f64[0].dtype.bits = 64;
  f64[1].data = B64, f64[1].dtype.bits = 64;
  tryCall(s, "f64 inputs", f64, 2);
  int64_t shape2d[2] = {2, 5};
  DLTensor rank2[2] = {args[0], args[1]};
  rank2[0].ndim = 2, rank2[0].shape = shape2d;
  rank2[1].ndim = 2, rank2[1].shape = shape2d;
  tryCall(s, "rank-2 inputs", rank2, 2);
  flags[0] = KILN_ARG_REQUIRES_GRAD, flags[1] = 0;
  st = kilnSessionCall(s, STR("toy_example"), args, 2, flags, &results);
  if (!expectError("requires_grad a", st))
    kilnTensorListDestroy(results);
  tryCall(s, "f32 again", args, 2);
  printStats(s, "toy_example");

  printf("== on-miss\n");
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(path)));
  CHECK_OK(kilnSessionSetMissCallback(s, missError, NULL));
  tryCall(s, "miss error", args, 2);
  CHECK_OK(kilnSessionSetMissCallback(s, missGarbage, NULL));
  tryCall(s, "miss garbage", args, 2);
  CHECK_OK(kilnSessionSetMissCallback(s, missNothing, NULL));
  tryCall(s, "miss nothing", args, 2);
  CHECK_OK(kilnSessionSetMissCallback(s, NULL, NULL));
  tryCall(s, "no miss callback", args, 2);
  kilnSessionDestroy(s);

  // Sizes: a shape or strides whose extent in bytes exceeds INT64_MAX are
  // rejected before anything is read; a tensor too large to copy, or a
  // result too large to allocate (the interpreter, compiled CPU code), is an
  // error status naming it and its size. 2^48 bytes exceed the user address
  // space, so these allocations fail on any machine.
  printf("== sizes\n");
  KilnSession z = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(z, STR(path)));
  CHECK_OK(kilnSessionRegisterHostCallback(z, STR("print"), okCallback, NULL));
  DLTensor big[2] = {args[0], args[1]};
  int64_t overShape[1] = {INT64_MAX / 2};
  big[1].shape = overShape;
  tryCall(z, "shape over 2^63 bytes", big, 2);
  int64_t overStrides[1] = {INT64_MAX / 4};
  big[1] = args[1], big[1].strides = overStrides;
  tryCall(z, "strides over 2^63 bytes", big, 2);
  int64_t hugeShape[1] = {(int64_t)1 << 46};
  big[0] = args[0], big[0].shape = hugeShape;
  big[1] = args[1], big[1].shape = hugeShape;
  // A value argument is borrowed (not copied): the first result that
  // cannot be allocated fails cleanly.
  tryCall(z, "huge argument", big, 2);
  KilnTensorList sizesList = kilnTensorListCreate();
  expectError("append too large to copy",
              kilnTensorListAppend(sizesList, &big[1]));
  big[1] = args[1], big[1].shape = overShape;
  expectError("append over 2^63 bytes",
              kilnTensorListAppend(sizesList, &big[1]));
  CHECK(kilnTensorListSize(sizesList) == 0);
  kilnTensorListDestroy(sizesList);
  kilnSessionDestroy(z);
  const char *grow =
      "kg.program @grow(%a: tensor<4xf32>) -> tensor<17592186044416x4xf32> {\n"
      "  %y = kg.graph @grow_g0(%a) : (tensor<4xf32>) -> "
      "tensor<17592186044416x4xf32> {\n"
      "  ^bb0(%a0: tensor<4xf32>):\n"
      "    %e = kt.expand %a0 {size = [17592186044416, 4]} : (tensor<4xf32>) "
      "-> tensor<17592186044416x4xf32>\n"
      "    kg.yield %e : tensor<17592186044416x4xf32>\n"
      "  }\n"
      "  kg.return %y : tensor<17592186044416x4xf32>\n"
      "}\n";
  int64_t shape4[1] = {4};
  DLTensor four = tensor1d(A, shape4);
  const char *backends[2] = {"eager", "cpu"};
  for (int b = 0; b < 2; ++b) {
    KilnSession g = kilnSessionCreate();
    CHECK_OK(kilnSessionLoadModule(g, STR(grow), STR("grow.mlir")));
    CHECK_OK(kilnSessionSetOption(g, STR("backend"), STR(backends[b])));
    char label[64];
    snprintf(label, sizeof(label), "result too large (%s)", backends[b]);
    KilnTensorList out;
    expectError(label, kilnSessionCall(g, STR("grow"), &four, 1, NULL, &out));
    kilnSessionDestroy(g);
  }
  printf("done\n");
  return 0;
}
