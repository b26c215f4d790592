/*===- aliasing.c - Ref arguments that share memory through the C API -----===*\
|*                                                                            *|
|* Part of Kiln. DLPack tensors passed for `!kt.ref` arguments are updated    *|
|* in place (strides respected); one tensor passed for two ref arguments is   *|
|* one buffer (a write through either is seen through both, as PyTorch's      *|
|* `f(a, a)`), on every pipeline, and the aliasing is part of the guards;     *|
|* overlapping views of one buffer work when each graph takes one of them,    *|
|* and are refused when one graph takes two; a plain tensor sharing memory    *|
|* with a ref argument is refused.                                            *|
|*                                                                            *|
|*   kiln-capi-aliasing [PIPELINE]                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

/* x.add_(1); y.mul_(2); return x (after both). */
static const char *kModule =
    "kg.program @two(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) -> "
    "tensor<3xf32> {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.guard_tensor %b {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  %r = kg.graph @two_g(%a, %b) : (!kt.ref<3xf32>, !kt.ref<3xf32>) -> "
    "tensor<3xf32> {\n"
    "  ^bb0(%x: !kt.ref<3xf32>, %y: !kt.ref<3xf32>):\n"
    "    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.add_ %x, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kt.mul_ %y, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    %v = kt.load %x : (!kt.ref<3xf32>) -> tensor<3xf32>\n"
    "    kg.yield %v : tensor<3xf32>\n"
    "  }\n"
    "  kg.return %r : tensor<3xf32>\n"
    "}\n"
    /* The same, but each ref in a graph of its own. */
    "kg.program @split(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.guard_tensor %b {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.graph @split_a(%a) : (!kt.ref<3xf32>) -> () {\n"
    "  ^bb0(%x: !kt.ref<3xf32>):\n"
    "    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.add_ %x, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.graph @split_b(%b) : (!kt.ref<3xf32>) -> () {\n"
    "  ^bb0(%y: !kt.ref<3xf32>):\n"
    "    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.mul_ %y, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.return\n"
    "}\n"
    /* a.add_(1); return x * 2 (x a plain tensor). */
    "kg.program @mixed(%a: !kt.ref<3xf32>, %x: tensor<3xf32>) -> "
    "tensor<3xf32> {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [3]} : tensor<3xf32>\n"
    "  %r = kg.graph @mixed_g(%a, %x) : (!kt.ref<3xf32>, tensor<3xf32>) -> "
    "tensor<3xf32> {\n"
    "  ^bb0(%r0: !kt.ref<3xf32>, %x0: tensor<3xf32>):\n"
    "    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.add_ %r0, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    %y = kt.add %x0, %x0 : (tensor<3xf32>, tensor<3xf32>) -> "
    "tensor<3xf32>\n"
    "    kg.yield %y : tensor<3xf32>\n"
    "  }\n"
    "  kg.return %r : tensor<3xf32>\n"
    "}\n";

static void printFloats(const char *label, const float *v, int n) {
  printf("%s:", label);
  for (int i = 0; i < n; ++i)
    printf(" %g", v[i]);
  printf("\n");
}

static void fill(float *v, int n, float x) {
  for (int i = 0; i < n; ++i)
    v[i] = x;
}

/* Calls @two and prints its result and the buffer(s). */
static void callTwo(KilnSession s, const char *label, DLTensor *args,
                    const float *buf, int n) {
  KilnTensorList results;
  CHECK_OK(kilnSessionCall(s, STR("two"), args, 2, NULL, &results));
  const DLTensor *r = kilnTensorListGet(results, 0);
  CHECK(r && r->ndim == 1 && r->shape[0] == 3);
  char l[128];
  snprintf(l, sizeof(l), "%s result", label);
  printFloats(l, (const float *)r->data, 3);
  snprintf(l, sizeof(l), "%s memory", label);
  printFloats(l, buf, n);
  kilnTensorListDestroy(results);
}

int main(int argc, char **argv) {
  KilnSession s = kilnSessionCreate();
  if (argc > 1 && strcmp(argv[1], "toy") != 0 &&
      strstr(argv[1], ".mlir") == NULL)
    CHECK_OK(kilnSessionSetOption(s, STR("pipeline"), STR(argv[1])));
  CHECK_OK(kilnSessionLoadModule(s, STR(kModule), STR("aliasing")));
  int64_t shape[1] = {3};

  /* Distinct buffers: a = 1 + 1, b = 1 * 2. */
  float a[3], b[3];
  fill(a, 3, 1), fill(b, 3, 1);
  DLTensor args[2] = {tensor1d(a, shape), tensor1d(b, shape)};
  callTwo(s, "distinct", args, a, 3);
  printFloats("distinct b", b, 3);

  /* One tensor for both: (1 + 1) * 2 = 4, seen through both. */
  fill(a, 3, 1);
  args[1] = tensor1d(a, shape);
  callTwo(s, "same", args, a, 3);
  /* Again: a cache hit, (4 + 1) * 2. */
  callTwo(s, "same again", args, a, 3);

  /* Strided refs (every other element of a buffer of 6): updated in place,
     the elements between them untouched. */
  float wide[6] = {1, -7, 1, -7, 1, -7};
  int64_t stride2[1] = {2};
  DLTensor sw = tensor1d(wide, shape);
  sw.strides = stride2;
  DLTensor strided[2] = {sw, sw};
  callTwo(s, "same strided", strided, wide, 6);

  /* Overlapping views of one buffer of 4: [0:3] and [1:4]. One graph takes
     both: refused. */
  float buf[4];
  fill(buf, 4, 1);
  DLTensor lo = tensor1d(buf, shape), hi = tensor1d(buf + 1, shape);
  DLTensor overlap[2] = {lo, hi};
  KilnTensorList results;
  expectError("overlap, one graph",
              kilnSessionCall(s, STR("two"), overlap, 2, NULL, &results));
  printFloats("overlap, one graph memory", buf, 4);

  /* Each graph takes one: a[0:3] += 1 -> 2 2 2 1, then b[1:4] *= 2. */
  CHECK_OK(kilnSessionCall(s, STR("split"), overlap, 2, NULL, &results));
  kilnTensorListDestroy(results);
  printFloats("overlap, two graphs memory", buf, 4);

  /* A plain tensor sharing the ref's memory: refused, nothing written. */
  fill(a, 3, 1);
  DLTensor mixed[2] = {tensor1d(a, shape), tensor1d(a, shape)};
  expectError("tensor over a ref",
              kilnSessionCall(s, STR("mixed"), mixed, 2, NULL, &results));
  printFloats("tensor over a ref memory", a, 3);
  /* Disjoint: fine. */
  mixed[1] = tensor1d(b, shape);
  fill(b, 3, 5);
  CHECK_OK(kilnSessionCall(s, STR("mixed"), mixed, 2, NULL, &results));
  printFloats("mixed result", (const float *)kilnTensorListGet(results, 0)->data,
              3);
  kilnTensorListDestroy(results);

  printStats(s, "two");
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
