/*===- logs.c - Logs and traces through the C API -------------------------===*\
|*                                                                            *|
|* Part of Kiln. kilnSetLogs / kilnSetLogCallback / kilnLogEnabled / kilnLog  *|
|* and kilnTraceOpen / kilnTraceRecord / kilnTraceFlush (API 0.4): topics     *|
|* reach the callback, bad specs and paths are errors, a trace is written.    *|
|*                                                                            *|
|*   kiln-capi-logs examples/toy_example.mlir TRACE.json                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

static KilnStatus quietPrint(void *userData, const DLTensor *inputs,
                             size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

/// Prints each message's topic and first line; counts them.
static void onLog(void *userData, KilnStringRef topic, KilnStringRef message) {
  ++*(int *)userData;
  size_t n = 0;
  while (n < message.length && message.data[n] != '\n')
    ++n;
  printf("log %.*s: %.*s\n", (int)topic.length, topic.data, (int)n,
         message.data);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s toy_example.mlir trace.json\n", argv[0]);
    return 2;
  }
  int count = 0;
  expectError("bad topic", kilnSetLogs(STR("recompiles,bogus")));
  KilnStringRef nullText = {NULL, 3};
  expectError("null spec", kilnSetLogs(nullText));
  expectError("unknown kilnLog topic", kilnLog(STR("nope"), STR("x")));

  kilnSetLogCallback(onLog, &count);
  expectError("set logs", kilnSetLogs(STR("recompiles,+guards,graph_breaks")));
  printf("enabled: guards+ %d, recompiles %d, recompiles+ %d, perf %d, "
         "nope %d\n",
         kilnLogEnabled(STR("guards"), true),
         kilnLogEnabled(STR("recompiles"), false),
         kilnLogEnabled(STR("recompiles"), true),
         kilnLogEnabled(STR("perf"), false), kilnLogEnabled(STR("nope"), false));

  expectError("bad trace path",
              kilnTraceOpen(STR("/nonexistent-kiln-dir/trace.json")));
  expectError("trace", kilnTraceOpen(STR(argv[2])));

  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), quietPrint, NULL));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("static")));
  callToyChecked(s, 10);
  callToyChecked(s, 20);
  callToyChecked(s, 10); // a hit: nothing logged
  expectError("kilnLog", kilnLog(STR("recompiles"), STR("from the embedder")));
  expectError("kilnLog off topic", kilnLog(STR("perf"), STR("not shown")));
  printf("messages: %d\n", count);

  // Off again, default sink: nothing reaches the callback. The embedder's
  // own event spans this call (Kiln's events nest inside it).
  int before = count;
  expectError("logs off", kilnSetLogs(STR("")));
  uint64_t t0 = kilnTraceNowMicros();
  callToyChecked(s, 30);
  kilnTraceRecord(STR("embedder step"), STR("embedder"), t0,
                  kilnTraceNowMicros() - t0);
  kilnSetLogCallback(NULL, NULL);
  printf("after off: %d new\n", count - before);

  expectError("flush", kilnTraceFlush());
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
