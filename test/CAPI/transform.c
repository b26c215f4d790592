/*===- transform.c - Running pass pipelines on module text ----------------===*\
|*                                                                            *|
|* Part of Kiln. kilnSessionTransformModule runs kiln-autodiff and            *|
|* kiln-partition on a function of the text and prints @f_fwd / @f_bwd;       *|
|* bad text, an unknown pass and a failing pass give located errors; the      *|
|* loaded module is untouched.                                                *|
|*                                                                            *|
|*   kiln-capi-transform examples/toy_example.mlir                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

static const char *kFunc =
    "func.func @f(%x: tensor<3xf32>, %w: tensor<3xf32> {kg.requires_grad = "
    "false}) -> tensor<3xf32> attributes {kg.differentiate} {\n"
    "  %0 = kt.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "  %1 = kt.sin %0 : (tensor<3xf32>) -> tensor<3xf32> loc(\"f.py\":7:3)\n"
    "  return %1 : tensor<3xf32>\n"
    "}\n";

/// No vector-Jacobian rule for arith.negf on the gradient path.
static const char *kNoRule =
    "func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> attributes "
    "{kg.differentiate} {\n"
    "  %0 = arith.negf %x : tensor<3xf32> loc(\"g.py\":4:9)\n"
    "  return %0 : tensor<3xf32>\n"
    "}\n";

static KilnStatus quietPrint(void *userData, const DLTensor *inputs,
                             size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s toy_example.mlir\n", argv[0]);
    return 2;
  }
  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), quietPrint, NULL));

  KilnStringRef out;
  CHECK_OK(kilnSessionTransformModule(
      s, STR(kFunc), STR("kiln-autodiff,kiln-partition"), &out));
  printf("== partitioned\n%.*s\n", (int)out.length, out.data);
  CHECK_OK(kilnSessionTransformModule(
      s, STR(kFunc), STR("builtin.module(kiln-autodiff)"), &out));
  printf("== joint\n%.*s\n", (int)out.length, out.data);

  printf("== errors\n");
  expectError("parse error",
              kilnSessionTransformModule(s, STR("func.func @f( {"),
                                         STR("kiln-autodiff"), &out));
  printf("out after an error: %zu\n", out.length);
  expectError("unknown pass",
              kilnSessionTransformModule(s, STR(kFunc), STR("kiln-nope"),
                                         &out));
  expectError("failing pass",
              kilnSessionTransformModule(s, STR(kNoRule),
                                         STR("kiln-autodiff"), &out));
  expectError("unbalanced",
              kilnSessionTransformModule(s, STR(kFunc),
                                         STR("builtin.module(kiln-autodiff"),
                                         &out));
  expectError("NULL out", kilnSessionTransformModule(s, STR(kFunc),
                                                     STR("kiln-autodiff"),
                                                     NULL));
  expectError("null session",
              kilnSessionTransformModule((KilnSession){NULL}, STR(kFunc),
                                         STR("kiln-autodiff"), &out));

  // The loaded module still runs.
  float a[10], b[10], want[10];
  for (int i = 0; i < 10; ++i) {
    a[i] = (float)i - 4.5f;
    b[i] = (float)(i % 3) - 0.5f;
  }
  int64_t shape[1] = {10};
  DLTensor args[2] = {tensor1d(a, shape), tensor1d(b, shape)};
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("toy_example"), args, 2, NULL, &results));
  toyReference(a, b, 10, want);
  double err = maxError(kilnTensorListGet(results, 0), want, 10);
  printf("loaded module after transforms: %s\n",
         err >= 0 && err <= 1e-6 ? "matches" : "MISMATCH");
  kilnTensorListDestroy(results);
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
