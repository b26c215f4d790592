/*===- dangling.c - Destroyed and garbage handles give error statuses -----===*\
|*                                                                            *|
|* Part of Kiln. Sessions, lists and statuses used after they were destroyed, *|
|* destroyed twice, made up (a garbage pointer, a small integer, the address  *|
|* of a stack object) or of another kind (a list passed as a session) are     *|
|* answered with an error status naming the function and "not a live         *|
|* handle" (docs/c-api.md, "Handles"), or ignored where the function returns  *|
|* no status (the destroy functions), never undefined behaviour: run under    *|
|* ASan by test/CAPI/run-asan.sh, any read of freed memory is a report. A     *|
|* destroyed session's handle stays dead after a new session is made (no     *|
|* address reuse), and a host callback that destroys Kiln's output list or   *|
|* returns a destroyed status gets an error, not a double free.              *|
|*                                                                            *|
|*   kiln-capi-dangling examples/toy_example.mlir                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

#include <stdint.h>

static float A[10], B[10];
static int64_t N10[1] = {10};

/// Destroys its output list (Kiln's: must be ignored) and returns success.
static KilnStatus destroysOutputs(void *userData, const DLTensor *inputs,
                                  size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs;
  kilnTensorListDestroy(outputs);
  /* Still live: appending works (then Kiln sees one output too many). */
  return kilnTensorListAppend(outputs, &inputs[0]);
}

/// Returns a status it destroyed already.
static KilnStatus returnsDestroyedStatus(void *userData, const DLTensor *inputs,
                                         size_t numInputs,
                                         KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  KilnStatus st = kilnStatusCreate(STR("this one is gone"));
  kilnStatusDestroy(st);
  return st;
}

static KilnStatus okCallback(void *userData, const DLTensor *inputs,
                             size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

/// Every session function on `s`, each printed with `prefix`.
static void useSession(const char *prefix, KilnSession s, const char *path) {
  char label[128];
#define LABEL(what) (snprintf(label, sizeof(label), "%s %s", prefix, what), label)
  KilnStringRef value;
  KilnTensorList results = {NULL};
  DLTensor args[2] = {tensor1d(A, N10), tensor1d(B, N10)};
  KilnProgramStats stats;
  int64_t entry;
  double seconds;
  expectError(LABEL("load"), kilnSessionLoadModule(s, STR("module {}"), STR("m")));
  expectError(LABEL("load file"), kilnSessionLoadModuleFile(s, STR(path)));
  expectError(LABEL("set option"), kilnSessionSetOption(s, STR("backend"), STR("cpu")));
  expectError(LABEL("get option"), kilnSessionGetOption(s, STR("backend"), &value));
  expectError(LABEL("mark dynamic"), kilnSessionMarkDynamic(s, STR("toy_example"), 0, 0));
  expectError(LABEL("mark static"), kilnSessionMarkStatic(s, STR("toy_example"), 0, 0));
  expectError(LABEL("register"), kilnSessionRegisterHostCallback(s, STR("print"), okCallback, NULL));
  expectError(LABEL("miss callback"), kilnSessionSetMissCallback(s, NULL, NULL));
  expectError(LABEL("warning callback"), kilnSessionSetWarningCallback(s, NULL, NULL));
  expectError(LABEL("call"), kilnSessionCall(s, STR("toy_example"), args, 2, NULL, &results));
  CHECK(kilnTensorListIsNull(results));
  expectError(LABEL("stats"), kilnSessionGetStats(s, STR("toy_example"), &stats));
  expectError(LABEL("recompile reason"), kilnSessionGetRecompileReason(s, STR("toy_example"), 0, &value));
  expectError(LABEL("compile phase"), kilnSessionGetCompilePhase(s, STR("toy_example"), 0, &value, &seconds));
  expectError(LABEL("transform"), kilnSessionTransformModule(s, STR("module {}"), STR(""), &value));
  expectError(LABEL("last entry"), kilnSessionGetLastEntry(s, STR("toy_example"), &entry));
  expectError(LABEL("entry IR"), kilnSessionGetEntryIR(s, STR("toy_example"), 0, &value));
  kilnSessionDestroy(s); /* ignored */
#undef LABEL
}

/// Every list function on `l`.
static void useList(const char *prefix, KilnTensorList l) {
  char label[128];
  DLTensor t = tensor1d(A, N10);
  DLManagedTensor *managed = (DLManagedTensor *)&t; /* must be reset */
  CHECK(kilnTensorListSize(l) == 0);
  CHECK(kilnTensorListGet(l, 0) == NULL);
  snprintf(label, sizeof(label), "%s append", prefix);
  expectError(label, kilnTensorListAppend(l, &t));
  snprintf(label, sizeof(label), "%s get managed", prefix);
  expectError(label, kilnTensorListGetManaged(l, 0, &managed));
  CHECK(managed == NULL);
  kilnTensorListDestroy(l); /* ignored */
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

  printf("== destroyed session\n");
  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(path)));
  kilnSessionDestroy(s);
  useSession("destroyed", s, path);
  /* A new session (likely at the freed address) does not revive it. */
  KilnSession s2 = kilnSessionCreate();
  expectError("destroyed after a new session", kilnSessionLoadModuleFile(s, STR(path)));
  CHECK_OK(kilnSessionLoadModuleFile(s2, STR(path)));
  CHECK_OK(kilnSessionRegisterHostCallback(s2, STR("print"), okCallback, NULL));

  printf("== garbage sessions\n");
  int stackObject = 0;
  useSession("small integer", (KilnSession){(void *)(uintptr_t)1}, path);
  useSession("stack address", (KilnSession){&stackObject}, path);
  KilnTensorList asList = kilnTensorListCreate();
  useSession("a list as a session", (KilnSession){asList.ptr}, path);
  CHECK(kilnTensorListSize(asList) == 0); /* the list survived */
  kilnTensorListDestroy(asList);

  printf("== lists\n");
  KilnTensorList l = kilnTensorListCreate();
  DLTensor t = tensor1d(A, N10);
  CHECK_OK(kilnTensorListAppend(l, &t));
  CHECK(kilnTensorListSize(l) == 1);
  kilnTensorListDestroy(l);
  useList("destroyed list", l);
  useList("a session as a list", (KilnTensorList){s2.ptr});
  useList("garbage list", (KilnTensorList){(void *)(uintptr_t)0xdeadbeef});
  /* A call's results, destroyed twice. */
  DLTensor args[2] = {tensor1d(A, N10), tensor1d(B, N10)};
  KilnTensorList results = {NULL};
  CHECK_OK(kilnSessionCall(s2, STR("toy_example"), args, 2, NULL, &results));
  CHECK(kilnTensorListSize(results) == 1);
  kilnTensorListDestroy(results);
  useList("destroyed results", results);

  printf("== statuses\n");
  KilnStatus st = kilnStatusCreate(STR("an error"));
  kilnStatusDestroy(st);
  KilnStringRef m = kilnStatusGetMessage(st);
  printf("destroyed status message: %.*s\n", (int)m.length, m.data);
  kilnStatusDestroy(st); /* ignored */
  m = kilnStatusGetMessage((KilnStatus){&stackObject});
  printf("garbage status message: %.*s\n", (int)m.length, m.data);
  kilnStatusDestroy((KilnStatus){&stackObject}); /* ignored */

  printf("== callbacks\n");
  CHECK_OK(kilnSessionRegisterHostCallback(s2, STR("print"), destroysOutputs, NULL));
  expectError("callback destroys its outputs",
              kilnSessionCall(s2, STR("toy_example"), args, 2, NULL, &results));
  CHECK_OK(kilnSessionRegisterHostCallback(s2, STR("print"), returnsDestroyedStatus, NULL));
  expectError("callback returns a destroyed status",
              kilnSessionCall(s2, STR("toy_example"), args, 2, NULL, &results));
  /* The session still works. */
  CHECK_OK(kilnSessionRegisterHostCallback(s2, STR("print"), okCallback, NULL));
  CHECK_OK(kilnSessionCall(s2, STR("toy_example"), args, 2, NULL, &results));
  float ref[10];
  toyReference(A, B, 10, ref);
  const DLTensor *out = kilnTensorListGet(results, 0);
  CHECK(out && out->ndim == 1 && out->shape[0] == 10);
  for (int i = 0; i < 10; ++i)
    CHECK(fabsf(((const float *)out->data)[i] - ref[i]) <= 1e-6f);
  kilnTensorListDestroy(results);
  kilnSessionDestroy(s2);
  printf("== done\n");
  return 0;
}
