/*===- strides.c - Strided and offset DLTensors through the C API ---------===*\
|*                                                                            *|
|* Part of Kiln. Non-contiguous inputs (element strides, negative strides,    *|
|* byte_offset) give the same results as the contiguous tensors they view,    *|
|* as arguments, as host scalar arguments, and when appended to a list.       *|
|*                                                                            *|
|*   kiln-capi-strides examples/toy_example.mlir                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

static KilnStatus quietPrint(void *userData, const DLTensor *inputs,
                             size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return (KilnStatus){NULL};
}

#define N 10

/// Calls toy_example and compares with the C formula over `a`, `b` (the
/// logical, contiguous values the views show).
static void check(KilnSession s, const char *label, DLTensor *args,
                  const float *a, const float *b) {
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("toy_example"), args, 2, NULL, &results));
  float want[N];
  toyReference(a, b, N, want);
  double err = maxError(kilnTensorListGet(results, 0), want, N);
  printf("%s: %s\n", label, err >= 0 && err <= 1e-6 ? "matches" : "MISMATCH");
  CHECK(err >= 0 && err <= 1e-6);
  kilnTensorListDestroy(results);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s toy_example.mlir\n", argv[0]);
    return 2;
  }
  KilnSession s = kilnSessionCreate();
  CHECK_OK(kilnSessionLoadModuleFile(s, STR(argv[1])));
  CHECK_OK(kilnSessionRegisterHostCallback(s, STR("print"), quietPrint, NULL));

  float a[N], b[N], bneg[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i * 0.75f - 3.0f;
    b[i] = (float)(i % 4) - 0.5f;
    bneg[i] = -b[i] - 1.0f;
  }
  int64_t shape[1] = {N};
  DLTensor args[2] = {tensor1d(a, shape), tensor1d(b, shape)};
  check(s, "contiguous", args, a, b);

  // a every other element of a larger buffer (stride 2).
  float wide[2 * N];
  for (int i = 0; i < 2 * N; ++i)
    wide[i] = i % 2 ? 100.0f : a[i / 2];
  int64_t stride2[1] = {2};
  DLTensor sa = tensor1d(wide, shape);
  sa.strides = stride2;
  DLTensor strided[2] = {sa, args[1]};
  check(s, "stride 2", strided, a, b);

  // b at byte_offset 3 floats into a buffer, and explicit unit strides.
  float padded[N + 3] = {7, 7, 7};
  for (int i = 0; i < N; ++i)
    padded[i + 3] = bneg[i];
  int64_t unit[1] = {1};
  DLTensor ob = tensor1d(padded, shape);
  ob.byte_offset = 3 * sizeof(float);
  ob.strides = unit;
  DLTensor offset[2] = {args[0], ob};
  check(s, "byte_offset (negative branch)", offset, a, bneg);

  // Both: a reversed (stride -1, starting at the last element through
  // byte_offset), b strided and offset.
  float rev[N];
  for (int i = 0; i < N; ++i)
    rev[N - 1 - i] = a[i];
  int64_t minus1[1] = {-1};
  DLTensor ra = tensor1d(rev, shape);
  ra.strides = minus1;
  ra.byte_offset = (N - 1) * sizeof(float);
  float wideB[2 * N + 1];
  for (int i = 0; i < 2 * N + 1; ++i)
    wideB[i] = -50.0f;
  for (int i = 0; i < N; ++i)
    wideB[1 + 2 * i] = b[i];
  DLTensor sb = tensor1d(wideB, shape);
  sb.strides = stride2;
  sb.byte_offset = sizeof(float);
  DLTensor both[2] = {ra, sb};
  check(s, "stride -1 and stride 2 + byte_offset", both, a, b);
  printStats(s, "toy_example");

  // 2-D: a column of a row-major 10x3 matrix (stride 3) and a row of a 2x10.
  float mat[N * 3], rows[2 * N];
  for (int i = 0; i < N; ++i) {
    mat[3 * i] = 0, mat[3 * i + 1] = a[i], mat[3 * i + 2] = 0;
    rows[i] = 0, rows[N + i] = b[i];
  }
  int64_t stride3[1] = {3};
  DLTensor col = tensor1d(mat, shape);
  col.strides = stride3;
  col.byte_offset = sizeof(float);
  DLTensor row = tensor1d(rows, shape);
  row.byte_offset = N * sizeof(float);
  DLTensor views[2] = {col, row};
  check(s, "matrix column and row", views, a, b);

  // Appending a strided view copies it compactly.
  KilnTensorList list = kilnTensorListCreate();
  CHECK_OK(kilnTensorListAppend(list, &ra));
  const DLTensor *c = kilnTensorListGet(list, 0);
  int same = c->strides == NULL && c->byte_offset == 0 && c->ndim == 1 &&
             c->shape[0] == N;
  for (int i = 0; same && i < N; ++i)
    same = ((const float *)c->data)[i] == a[i];
  printf("append reversed view: %s\n", same ? "compact copy" : "WRONG");
  CHECK(same);
  // 2-D transposed view (strides {1, 2}) of a 2x3 buffer.
  float t23[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape32[2] = {3, 2}, strides12[2] = {1, 3};
  DLTensor tr = tensor1d(t23, shape32);
  tr.ndim = 2;
  tr.strides = strides12;
  CHECK_OK(kilnTensorListAppend(list, &tr));
  c = kilnTensorListGet(list, 1);
  printf("append transposed view:");
  for (int i = 0; i < 6; ++i)
    printf(" %g", ((const float *)c->data)[i]);
  printf("\n");
  kilnTensorListDestroy(list);

  // Host scalars: a 0-d tensor where the program takes an f32 (read through
  // byte_offset like any tensor); kg.guard_value recompiles per value.
  static const char *SCALE =
      "kg.program @scale(%x: tensor<3xf32>, %k: f32) -> tensor<3xf32> {\n"
      "  kg.guard_tensor %x {dtype = f32, shape = [3]} : tensor<3xf32>\n"
      "  kg.guard_value %k {value = 2.0 : f32} : f32\n"
      "  %t = kg.from_host %k : f32 -> tensor<f32>\n"
      "  %y = kg.graph @scale_g0(%x, %t) : (tensor<3xf32>, tensor<f32>) -> "
      "tensor<3xf32> {\n"
      "  ^bb0(%a: tensor<3xf32>, %c: tensor<f32>):\n"
      "    %0 = kt.mul %a, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "    kg.yield %0 : tensor<3xf32>\n"
      "  }\n"
      "  kg.return %y : tensor<3xf32>\n"
      "}\n";
  CHECK_OK(kilnSessionLoadModule(s, STR(SCALE), STR("scale.mlir")));
  float x3[3] = {1, -2, 4}, ks[3] = {2, 3, 2};
  int64_t shape3[1] = {3};
  for (int i = 0; i < 3; ++i) {
    DLTensor sargs[2] = {tensor1d(x3, shape3), tensor1d(ks, NULL)};
    sargs[1].ndim = 0;
    sargs[1].byte_offset = i * sizeof(float);
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("scale"), sargs, 2, NULL, &r));
    const float *y = (const float *)kilnTensorListGet(r, 0)->data;
    printf("scale by %g: %g %g %g\n", ks[i], y[0], y[1], y[2]);
    CHECK(y[0] == x3[0] * ks[i] && y[2] == x3[2] * ks[i]);
    kilnTensorListDestroy(r);
  }
  printStats(s, "scale");

  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
