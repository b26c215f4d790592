/*===- host_results.c - Host callbacks whose results follow their inputs ---===*\
|*                                                                            *|
|* Part of Kiln. A program whose graph break calls a host callback `double`  *|
|* (2 * x, the size of its input) and feeds the result to a graph. Written   *|
|* for 4 elements, it is called with 4, 6 and 9: the entry for the new size  *|
|* (automatic dynamic) gives the callback's result `?` dims, as it does not  *|
|* know what the callback returns, and the graph after it is specialized for *|
|* them. Then with dynamic = static (each size its own entry) and on the cpu *|
|* backend. Results are checked against -2 * x computed here. A callback     *|
|* returning another rank than declared is a clear error of the call.        *|
|*                                                                            *|
|*   kiln-capi-host_results                                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

static const char *kProgram =
    "kg.program @scaled(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>\n"
    "  %y = kg.break \"call_function double\" -> tensor<4xf32> {\n"
    "    %d = kg.host_call @double(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    kg.yield %d : tensor<4xf32>\n"
    "  }\n"
    "  %z = kg.graph @scaled_g0(%y) : (tensor<4xf32>) -> tensor<4xf32> {\n"
    "  ^bb0(%a: tensor<4xf32>):\n"
    "    %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    kg.yield %0 : tensor<4xf32>\n"
    "  }\n"
    "  kg.return %z : tensor<4xf32>\n"
    "}\n";

/// `double`: 2 * x (1-D f32), as a new tensor of the input's size; with a
/// non-null `userData` it returns x as a 2-D [1, n] tensor instead.
static KilnStatus doubleCallback(void *userData, const DLTensor *inputs,
                                 size_t numInputs, KilnTensorList outputs) {
  if (numInputs != 1 || inputs[0].ndim != 1)
    return kilnStatusCreate(STR("double expects one 1-D tensor"));
  int64_t n = inputs[0].shape[0];
  float *out = malloc(n * sizeof(float));
  const float *in = (const float *)inputs[0].data;
  for (int64_t i = 0; i < n; ++i)
    out[i] = 2.0f * in[i];
  int64_t shape[2] = {1, n};
  DLTensor t = tensor1d(out, userData ? shape : &shape[1]);
  if (userData)
    t.ndim = 2;
  KilnStatus status = kilnTensorListAppend(outputs, &t);
  free(out);
  return status;
}

/// Calls @scaled with n elements and checks -2 * x.
static void call(KilnSession s, int64_t n, const char *what) {
  float *x = malloc(n * sizeof(float));
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)i * 0.5f - 1.0f;
  int64_t shape[1] = {n};
  DLTensor arg = tensor1d(x, shape);
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("scaled"), &arg, 1, NULL, &results));
  CHECK(kilnTensorListSize(results) == 1);
  const DLTensor *r = kilnTensorListGet(results, 0);
  int ok = r->ndim == 1 && r->shape[0] == n;
  for (int64_t i = 0; ok && i < n; ++i)
    ok = ((const float *)r->data)[i] == -2.0f * x[i];
  printf("%s: n=%lld %s\n", what, (long long)n, ok ? "matches" : "MISMATCH");
  CHECK(ok);
  kilnTensorListDestroy(results);
  free(x);
}

int main(void) {
  KilnSession s = kilnSessionCreate();
  CHECK(!kilnSessionIsNull(s));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("double"), doubleCallback,
                                           NULL));

  printf("== automatic dynamic\n");
  CHECK_OK(kilnSessionLoadModule(s, STR(kProgram), STR("scaled.mlir")));
  call(s, 4, "call 1");
  call(s, 6, "call 2");
  call(s, 9, "call 3");
  printStats(s, "scaled");
  KilnStringRef ir;
  CHECK_OK(kilnSessionGetEntryIR(s, STR("scaled"), 1, &ir));
  const char *line = strstr(ir.data, "kg.host_call");
  CHECK(line);
  printf("%.*s\n", (int)(strchr(line, '\n') - line), line);

  printf("== dynamic = static\n");
  CHECK_OK(kilnSessionLoadModule(s, STR(kProgram), STR("scaled.mlir")));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("static")));
  call(s, 4, "call 1");
  call(s, 6, "call 2");
  printStats(s, "scaled");

  printf("== cpu backend\n");
  CHECK_OK(kilnSessionLoadModule(s, STR(kProgram), STR("scaled.mlir")));
  CHECK_OK(kilnSessionSetOption(s, STR("dynamic"), STR("auto")));
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("cpu")));
  call(s, 4, "call 1");
  call(s, 6, "call 2");
  call(s, 9, "call 3");
  printStats(s, "scaled");

  printf("== wrong rank\n");
  int bad = 1;
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("double"), doubleCallback,
                                           &bad));
  CHECK_OK(kilnSessionLoadModule(s, STR(kProgram), STR("scaled.mlir")));
  CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR("eager")));
  float x[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLTensor arg = tensor1d(x, shape);
  KilnTensorList results;
  CHECK(expectError("2-D result",
                    kilnSessionCall(s, STR("scaled"), &arg, 1, NULL,
                                    &results)));
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
