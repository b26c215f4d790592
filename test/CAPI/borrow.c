/*===- borrow.c - Value arguments are borrowed, not copied ----------------===*\
|*                                                                            *|
|* Part of Kiln. A contiguous plain (value) tensor argument is read in the    *|
|* caller's memory during a call (no copy); nothing the call returns may      *|
|* point into it: a program that returns its argument, or a reshape of it,    *|
|* hands back its own copy, so the caller can free its input right after the  *|
|* call (run under ASan by run-asan.sh, which would report a use after        *|
|* free). The input is never written, and ref arguments still update the     *|
|* caller's memory in place.                                                  *|
|*                                                                            *|
|*   kiln-capi-borrow [BACKEND] (a .mlir argument, as run-asan.sh passes, is   *|
|*   ignored)                                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

static const char *kModule =
    /* return x, as it is */
    "kg.program @ident(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>\n"
    "  kg.return %x : tensor<4xf32>\n"
    "}\n"
    /* return x.reshape(4) from inside a graph, and x + 1 */
    "kg.program @view(%x: tensor<2x2xf32>) -> (tensor<4xf32>, "
    "tensor<2x2xf32>) {\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [2, 2]} : tensor<2x2xf32>\n"
    "  %r:2 = kg.graph @view_g(%x) : (tensor<2x2xf32>) -> (tensor<4xf32>, "
    "tensor<2x2xf32>) {\n"
    "  ^bb0(%y: tensor<2x2xf32>):\n"
    "    %v = kt.reshape %y {shape = [4]} : (tensor<2x2xf32>) -> "
    "tensor<4xf32>\n"
    "    %one = kt.full {size = [], value = 1.0, dtype = f32} : () -> "
    "tensor<f32>\n"
    "    %p = kt.add %y, %one : (tensor<2x2xf32>, tensor<f32>) -> "
    "tensor<2x2xf32>\n"
    "    kg.yield %v, %p : tensor<4xf32>, tensor<2x2xf32>\n"
    "  }\n"
    "  kg.return %r#0, %r#1 : tensor<4xf32>, tensor<2x2xf32>\n"
    "}\n"
    /* a.add_(x); return x * 2 (x a plain tensor, a a ref) */
    "kg.program @mixed(%a: !kt.ref<4xf32>, %x: tensor<4xf32>) -> "
    "tensor<4xf32> {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [4]} : !kt.ref<4xf32>\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>\n"
    "  %r = kg.graph @mixed_g(%a, %x) : (!kt.ref<4xf32>, tensor<4xf32>) -> "
    "tensor<4xf32> {\n"
    "  ^bb0(%ra: !kt.ref<4xf32>, %y: tensor<4xf32>):\n"
    "    kt.add_ %ra, %y : (!kt.ref<4xf32>, tensor<4xf32>) -> ()\n"
    "    %two = kt.full {size = [], value = 2.0, dtype = f32} : () -> "
    "tensor<f32>\n"
    "    %m = kt.mul %y, %two : (tensor<4xf32>, tensor<f32>) -> "
    "tensor<4xf32>\n"
    "    kg.yield %m : tensor<4xf32>\n"
    "  }\n"
    "  kg.return %r : tensor<4xf32>\n"
    "}\n";

static void print(const char *label, const DLTensor *t) {
  const float *v = (const float *)((const char *)t->data + t->byte_offset);
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d)
    n *= t->shape[d];
  printf("%s:", label);
  for (int64_t i = 0; i < n; ++i)
    printf(" %g", v[i]);
  printf("\n");
}

/// A heap copy of `values` (so that freeing it is visible to ASan).
static float *heap(const float *values, int n) {
  float *p = malloc(n * sizeof(float));
  CHECK(p);
  memcpy(p, values, n * sizeof(float));
  return p;
}

int main(int argc, char **argv) {
  KilnSession s = kilnSessionCreate();
  if (argc > 1 && strstr(argv[1], ".mlir") == NULL)
    CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR(argv[1])));
  CHECK_OK(kilnSessionLoadModule(s, STR(kModule), STR("borrow.mlir")));
  const float init[4] = {1, -2, 3.5f, 4};
  int64_t shape[1] = {4}, shape2[2] = {2, 2};

  // The result of @ident is its own memory: the input is freed first.
  for (int round = 0; round < 2; ++round) {
    float *x = heap(init, 4);
    DLTensor arg = tensor1d(x, shape);
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("ident"), &arg, 1, NULL, &r));
    const DLTensor *t = kilnTensorListGet(r, 0);
    printf("ident: %s\n", (const void *)((const char *)t->data +
                                         t->byte_offset) == (const void *)x
                              ? "SAME MEMORY"
                              : "own memory");
    free(x);
    print("ident after free", t);
    kilnTensorListDestroy(r);
  }

  // A reshape of the argument returned from a graph, and x + 1.
  {
    float *x = heap(init, 4);
    DLTensor arg = tensor1d(x, shape);
    arg.ndim = 2;
    arg.shape = shape2;
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("view"), &arg, 1, NULL, &r));
    free(x);
    print("view after free", kilnTensorListGet(r, 0));
    print("view plus one", kilnTensorListGet(r, 1));
    kilnTensorListDestroy(r);
  }

  // The ref is updated in the caller's memory; the value argument is not.
  {
    float a[4] = {10, 20, 30, 40};
    float *x = heap(init, 4);
    DLTensor args[2] = {tensor1d(a, shape), tensor1d(x, shape)};
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("mixed"), args, 2, NULL, &r));
    print("mixed result", kilnTensorListGet(r, 0));
    print("mixed ref", &args[0]);
    print("mixed value", &args[1]);
    free(x);
    print("mixed result after free", kilnTensorListGet(r, 0));
    kilnTensorListDestroy(r);
  }
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
