/*===- inplace_refs.c - Row-major ref arguments run in the caller's memory -===*\
|*                                                                            *|
|* Part of Kiln. A ref argument whose view is row-major and shares memory     *|
|* with no other argument (or only with itself, the same tensor twice) is     *|
|* not copied: the program's writes land in the caller's memory as they       *|
|* happen (docs/runtime.md, "Ref arguments"). Seen from outside: host code    *|
|* between two graphs (a graph break) sees the first graph's writes, as       *|
|* Python between two eager in-place ops does, and a call that fails after    *|
|* a graph wrote keeps that write (no rollback; eager keeps it too). With     *|
|* repro_dir set, refs are copied and written back on success only, so a      *|
|* failed call leaves them untouched. Strided refs (a transposed view),       *|
|* refs with an offset, values loaded before and after a write, and          *|
|* overlapping views keep their results.                                      *|
|*                                                                            *|
|*   kiln-capi-inplace_refs REPRO_DIR [BACKEND]                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "common.h"

#include <stdint.h>

static const char *kModule =
    /* a.add_(1); peek(); a.mul_(2) */
    "kg.program @peek2(%a: !kt.ref<4xf32>) {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [4]} : !kt.ref<4xf32>\n"
    "  kg.graph @peek2_g0(%a) : (!kt.ref<4xf32>) -> () {\n"
    "  ^bb0(%r: !kt.ref<4xf32>):\n"
    "    %one = kt.full {size = [4], value = 1.0, dtype = f32} : () -> "
    "tensor<4xf32>\n"
    "    kt.add_ %r, %one : (!kt.ref<4xf32>, tensor<4xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.break \"call_function peek\" {\n"
    "    kg.host_call @peek() : () -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.graph @peek2_g1(%a) : (!kt.ref<4xf32>) -> () {\n"
    "  ^bb0(%r: !kt.ref<4xf32>):\n"
    "    %two = kt.full {size = [4], value = 2.0, dtype = f32} : () -> "
    "tensor<4xf32>\n"
    "    kt.mul_ %r, %two : (!kt.ref<4xf32>, tensor<4xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.return\n"
    "}\n"
    /* v = a.clone(); a.add_(x); return v, a.clone() */
    "kg.program @loads(%a: !kt.ref<2x3xf32>, %x: tensor<2x3xf32>) -> "
    "(tensor<2x3xf32>, tensor<2x3xf32>) {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [2, 3]} : !kt.ref<2x3xf32>\n"
    "  kg.guard_tensor %x {dtype = f32, shape = [2, 3]} : tensor<2x3xf32>\n"
    "  %r:2 = kg.graph @loads_g(%a, %x) : (!kt.ref<2x3xf32>, tensor<2x3xf32>) "
    "-> (tensor<2x3xf32>, tensor<2x3xf32>) {\n"
    "  ^bb0(%ra: !kt.ref<2x3xf32>, %y: tensor<2x3xf32>):\n"
    "    %v = kt.load %ra : (!kt.ref<2x3xf32>) -> tensor<2x3xf32>\n"
    "    kt.add_ %ra, %y : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()\n"
    "    %w = kt.load %ra : (!kt.ref<2x3xf32>) -> tensor<2x3xf32>\n"
    "    kg.yield %v, %w : tensor<2x3xf32>, tensor<2x3xf32>\n"
    "  }\n"
    "  kg.return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xf32>\n"
    "}\n"
    /* a.add_(1); b.mul_(2), in one graph */
    "kg.program @same(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.guard_tensor %b {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.graph @same_g(%a, %b) : (!kt.ref<3xf32>, !kt.ref<3xf32>) -> () {\n"
    "  ^bb0(%ra: !kt.ref<3xf32>, %rb: !kt.ref<3xf32>):\n"
    "    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.add_ %ra, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kt.mul_ %rb, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.return\n"
    "}\n"
    /* a.add_(1); b.mul_(2), a graph each */
    "kg.program @split(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) {\n"
    "  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.guard_tensor %b {dtype = f32, shape = [3]} : !kt.ref<3xf32>\n"
    "  kg.graph @split_g0(%a) : (!kt.ref<3xf32>) -> () {\n"
    "  ^bb0(%ra: !kt.ref<3xf32>):\n"
    "    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.add_ %ra, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.graph @split_g1(%b) : (!kt.ref<3xf32>) -> () {\n"
    "  ^bb0(%rb: !kt.ref<3xf32>):\n"
    "    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> "
    "tensor<3xf32>\n"
    "    kt.mul_ %rb, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()\n"
    "    kg.yield\n"
    "  }\n"
    "  kg.return\n"
    "}\n";

static float *peekAt;

/// Prints the caller's memory of @peek2's ref while the call runs.
static KilnStatus peek(void *userData, const DLTensor *inputs,
                       size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  printf("  peek: %g %g %g %g\n", peekAt[0], peekAt[1], peekAt[2], peekAt[3]);
  return (KilnStatus){NULL};
}

static KilnStatus fail(void *userData, const DLTensor *inputs,
                       size_t numInputs, KilnTensorList outputs) {
  (void)userData, (void)inputs, (void)numInputs, (void)outputs;
  return kilnStatusCreate(STR("peek failed"));
}

static void printFloats(const char *label, const float *v, int n) {
  printf("%s:", label);
  for (int i = 0; i < n; ++i)
    printf(" %g", v[i]);
  printf("\n");
}

static void printTensor(const char *label, const DLTensor *t) {
  const float *v = (const float *)((const char *)t->data + t->byte_offset);
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d)
    n *= t->shape[d];
  printFloats(label, v, (int)n);
}

int main(int argc, char **argv) {
  KilnSession s = kilnSessionCreate();
  CHECK(argc > 1);
  if (argc > 2)
    CHECK_OK(kilnSessionSetOption(s, STR("backend"), STR(argv[2])));
  CHECK_OK(kilnSessionLoadModule(s, STR(kModule), STR("inplace_refs.mlir")));
  int64_t shape4[1] = {4}, shape23[2] = {2, 3};

  // The graph break sees the first graph's write; then a = (a + 1) * 2.
  {
    float a[4] = {10, 20, 30, 40};
    peekAt = a;
    CHECK_OK(kilnSessionRegisterHostCallback(s, STR("peek"), peek, NULL));
    DLTensor arg = tensor1d(a, shape4);
    KilnTensorList r;
    printf("peek2:\n");
    CHECK_OK(kilnSessionCall(s, STR("peek2"), &arg, 1, NULL, &r));
    kilnTensorListDestroy(r);
    printFloats("peek2 memory", a, 4);
  }

  // A failure after the first graph: its write stays in the caller's memory.
  {
    float a[4] = {10, 20, 30, 40};
    CHECK_OK(kilnSessionRegisterHostCallback(s, STR("peek"), fail, NULL));
    DLTensor arg = tensor1d(a, shape4);
    KilnTensorList r;
    KilnStatus st = kilnSessionCall(s, STR("peek2"), &arg, 1, NULL, &r);
    CHECK(!kilnStatusIsOk(st));
    kilnStatusDestroy(st);
    printFloats("failed peek2 memory", a, 4);
  }

  // A row-major ref inside a larger buffer (an offset view): only its
  // elements change.
  {
    float buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    float x[6] = {100, 200, 300, 400, 500, 600};
    DLTensor args[2] = {tensor1d(buf, shape23), tensor1d(x, shape23)};
    args[0].ndim = args[1].ndim = 2;
    args[0].byte_offset = 2 * sizeof(float);
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("loads"), args, 2, NULL, &r));
    printTensor("offset before", kilnTensorListGet(r, 0));
    printTensor("offset after", kilnTensorListGet(r, 1));
    const DLTensor *w = kilnTensorListGet(r, 1);
    printf("offset result in the argument's memory: %s\n",
           (const char *)w->data + w->byte_offset >= (const char *)buf &&
                   (const char *)w->data + w->byte_offset <
                       (const char *)(buf + 8)
               ? "YES"
               : "no");
    printFloats("offset memory", buf, 8);
    kilnTensorListDestroy(r);
  }

  // A transposed view (strides [1, 2] over a 3x2 buffer): not row-major,
  // so copied in and written back through its strides.
  {
    float buf[6] = {0, 1, 2, 3, 4, 5}; /* b = [[0,1],[2,3],[4,5]]; a = b.T */
    float x[6] = {100, 200, 300, 400, 500, 600};
    int64_t strides[2] = {1, 2};
    DLTensor args[2] = {tensor1d(buf, shape23), tensor1d(x, shape23)};
    args[0].ndim = args[1].ndim = 2;
    args[0].strides = strides;
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("loads"), args, 2, NULL, &r));
    printTensor("strided before", kilnTensorListGet(r, 0));
    printTensor("strided after", kilnTensorListGet(r, 1));
    printFloats("strided memory", buf, 6);
    kilnTensorListDestroy(r);
  }

  // One tensor for both refs (PyTorch: ones(3).add_(1).mul_(2) = 4), in one
  // graph and in two; then overlapping views, a graph each (b = buf[1:4]).
  {
    int64_t shape3[1] = {3};
    const char *programs[2] = {"same", "split"};
    for (int p = 0; p < 2; ++p) {
      float a[3] = {1, 1, 1};
      DLTensor args[2] = {tensor1d(a, shape3), tensor1d(a, shape3)};
      KilnTensorList r;
      CHECK_OK(kilnSessionCall(s, STR(programs[p]), args, 2, NULL, &r));
      kilnTensorListDestroy(r);
      printf("%s, one tensor:", programs[p]);
      printFloats("", a, 3);
    }
    float buf[4] = {1, 1, 1, 1};
    DLTensor args[2] = {tensor1d(buf, shape3), tensor1d(buf, shape3)};
    args[1].byte_offset = sizeof(float);
    KilnTensorList r;
    CHECK_OK(kilnSessionCall(s, STR("split"), args, 2, NULL, &r));
    kilnTensorListDestroy(r);
    printFloats("split, overlapping views", buf, 4);
  }

  // With repro_dir set, refs are copied: a failed call writes nothing.
  {
    CHECK_OK(kilnSessionSetOption(s, STR("repro_dir"), STR(argv[1])));
    float a[4] = {10, 20, 30, 40};
    DLTensor arg = tensor1d(a, shape4);
    KilnTensorList r;
    KilnStatus st = kilnSessionCall(s, STR("peek2"), &arg, 1, NULL, &r);
    CHECK(!kilnStatusIsOk(st));
    kilnStatusDestroy(st);
    printFloats("failed peek2 memory, repro_dir", a, 4);
  }
  kilnSessionDestroy(s);
  printf("done\n");
  return 0;
}
