/*===- entries.c - Which cache entry ran a call, through the C API --------===*\
|*                                                                            *|
|* Part of Kiln. kilnSessionGetLastEntry names the entry (compile order) that *|
|* ran the last call: a new entry, an older one hit again, the fallback (-1). *|
|*                                                                            *|
|*   kiln-capi-entries examples/toy_example.mlir                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

#include <pthread.h>
#include <semaphore.h>

static KilnStatus quietPrint(void *userData, const DLTensor *inputs,
                             size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

/// Calls toy_example on n elements and prints the entry that ran it.
static void callAndReport(KilnSession s, const char *label, int64_t n) {
  callToyChecked(s, n);
  int64_t entry = -2;
  CHECK_OK(kilnSessionGetLastEntry(s, STR("toy_example"), &entry));
  KilnProgramStats stats;
  CHECK_OK(kilnSessionGetStats(s, STR("toy_example"), &stats));
  printf("%s: entry %lld of %zu\n", label, (long long)entry, stats.numEntries);
}

/// Per thread: thread A's call hits entry 0, then the main thread's hits
/// entry 1; A still reads 0 (its own last call), main reads 1.
static KilnSession shared;
static sem_t mainCalled, threadCalled;
static int64_t threadEntry = -2;

static void *otherThread(void *arg) {
  (void)arg;
  callAndReport(shared, "thread A n=10", 10);
  sem_post(&threadCalled);
  sem_wait(&mainCalled);
  CHECK_OK(kilnSessionGetLastEntry(shared, STR("toy_example"), &threadEntry));
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s toy_example.mlir\n", argv[0]);
    return 2;
  }
  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), quietPrint, NULL));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("static")));

  int64_t entry = -2;
  CHECK_OK(kilnSessionGetLastEntry(s, STR("toy_example"), &entry));
  printf("before any call: entry %lld\n", (long long)entry);
  callAndReport(s, "n=10", 10);
  callAndReport(s, "n=20", 20);
  callAndReport(s, "n=10 again", 10);
  callAndReport(s, "n=20 again", 20);
  CHECK_OK(kilnSessionSetOption(s, STR("frozen"), STR("true")));
  callAndReport(s, "n=7 frozen", 7);
  callAndReport(s, "n=10 frozen", 10);

  CHECK_OK(kilnSessionSetOption(s, STR("frozen"), STR("false")));
  shared = s;
  sem_init(&mainCalled, 0, 0);
  sem_init(&threadCalled, 0, 0);
  pthread_t a;
  CHECK(pthread_create(&a, NULL, otherThread, NULL) == 0);
  sem_wait(&threadCalled);
  callAndReport(s, "main n=20", 20);
  sem_post(&mainCalled);
  pthread_join(a, NULL);
  printf("thread A after main's call: entry %lld\n", (long long)threadEntry);

  expectError("NULL entry", kilnSessionGetLastEntry(s, STR("toy_example"),
                                                    NULL));
  expectError("unknown program",
              kilnSessionGetLastEntry(s, STR("nope"), &entry));
  expectError("null session",
              kilnSessionGetLastEntry((KilnSession){NULL},
                                      STR("toy_example"), &entry));
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
