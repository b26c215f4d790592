// RUN: rm -rf %t.batch && mkdir -p %t.batch
// RUN: %python -c "import numpy as np; np.save('%t.batch/x.npy', np.ones(4, np.float32)); np.save('%t.n.npy', np.array(1 << 26, np.int64)); np.save('%t.x.npy', np.ones(1 << 20, np.float32))"
// RUN: not kiln-run %s --entry=huge_result --random-inputs 2>&1 | FileCheck %s --check-prefix=INTERP
// RUN: not kiln-run %s --entry=huge_result --random-inputs --backend=cpu 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not kiln-run %s --entry=huge_dynamic --input=%t.n.npy --input=%t.x.npy 2>&1 | FileCheck %s --check-prefix=INTERP-DYN
// RUN: not kiln-run %s --entry=huge_dynamic --input=%t.n.npy --input=%t.x.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=CPU-DYN
// RUN: not kiln-run %s --entry=huge_argument --random-inputs 2>&1 | FileCheck %s --check-prefix=ARG
// RUN: not kiln-run %s --entry=impossible_argument --random-inputs 2>&1 | FileCheck %s --check-prefix=IMPOSSIBLE-ARG
// RUN: not kiln-run %s --entry=impossible_result --random-inputs 2>&1 | FileCheck %s --check-prefix=IMPOSSIBLE-INTERP
// RUN: not kiln-run %s --entry=impossible_result --random-inputs --backend=cpu 2>&1 | FileCheck %s --check-prefix=IMPOSSIBLE-CPU
// The CPU backend is usable again after an abandoned call (the allocations
// it made before the failure were freed; the next call in the same process
// succeeds): the batch runs huge_result, then small.
// RUN: printf 'huge_result\t%t.batch/a\t%t.batch/x.npy\nsmall\t%t.batch/b\t%t.batch/x.npy\n' > %t.batch/spec
// RUN: kiln-run %s --batch=%t.batch/spec --backend=cpu
// RUN: FileCheck %s --check-prefix=BATCH-ERR < %t.batch/a/error.txt
// RUN: %python -c "import numpy as np; r = np.load('%t.batch/b/result0.npy'); assert (r == 2 * np.ones(4, np.float32)).all(), r"

// Tests that a tensor too large to allocate is an error naming it and its
// size, never an abort or a crash, in the interpreter (at the op that makes
// it), in compiled CPU code (a top-level allocation that fails abandons the
// call) and for random inputs; and that a tensor type with more than
// 2^63 - 1 bytes is rejected (the interpreter at run time, the CPU backend
// before compiling: its allocation size would wrap around). 2^48 bytes and
// more exceed the user address space of x86-64 and AArch64 Linux, so the
// allocations fail whatever the memory and overcommit settings.

// The CPU backend names the op whose buffer it could not allocate (its
// location) and the buffer (kiln-cpu-alloc-sites).
// INTERP: alloc-failure.mlir:[[@LINE+6]]:8: error: result #0: cannot allocate 281474976710656 bytes (256.0 TiB) for tensor<17592186044416x4xf32>: out of memory
// INTERP-NEXT: kiln-run: error: running @huge_result failed
// INTERP-NOT: {{.}}
// CPU: kiln-run: error: running @huge_result on the CPU backend failed: {{.*}}alloc-failure.mlir:[[@LINE+3]]:8: cannot allocate {{28147497671[0-9]+}} bytes (256.0 TiB) for tensor<17592186044416x4xf32> in compiled code: out of memory
// CPU-NOT: {{.}}
func.func @huge_result(%a: tensor<4xf32>) -> tensor<70368744177664xf32> {
  %r = kt.expand %a {size = [17592186044416, 4]} : (tensor<4xf32>) -> tensor<17592186044416x4xf32>
  %f = kt.reshape %r {shape = [70368744177664]} : (tensor<17592186044416x4xf32>) -> tensor<70368744177664xf32>
  return %f : tensor<70368744177664xf32>
}

// A dynamic size that only an input's value gives (2^26 rows of 2^20).
// INTERP-DYN: alloc-failure.mlir:[[@LINE+7]]:8: error: result #0: cannot allocate 281474976710656 bytes (256.0 TiB) for tensor<67108864x1048576xf32>: out of memory
// INTERP-DYN-NEXT: kiln-run: error: running @huge_dynamic failed
// CPU-DYN: kiln-run: error: running @huge_dynamic on the CPU backend failed: {{.*}}alloc-failure.mlir:[[@LINE+5]]:8: cannot allocate {{28147497671[0-9]+}} bytes (256.0 TiB) for tensor<?x1048576xf32> in compiled code: out of memory
func.func @huge_dynamic(%n: tensor<i64>, %x: tensor<1048576xf32>) -> tensor<?x1048576xf32> {
  %i = tensor.extract %n[] : tensor<i64>
  %d = arith.index_cast %i : i64 to index
  %r = kt.reshape %x {shape = [1, 1048576]} : (tensor<1048576xf32>) -> tensor<1x1048576xf32>
  %f = kt.full %d {size = [-1, 1048576], value = 1.0, dtype = f32} : (index) -> tensor<?x1048576xf32>
  %s = kt.add %f, %r : (tensor<?x1048576xf32>, tensor<1x1048576xf32>) -> tensor<?x1048576xf32>
  return %s : tensor<?x1048576xf32>
}

// ARG: kiln-run: error: argument #1 of @huge_argument (random input): cannot allocate 281474976710656 bytes (256.0 TiB) for tensor<70368744177664xf32>: out of memory
// ARG-NOT: {{.}}
func.func @huge_argument(%a: tensor<4xf32>, %b: tensor<70368744177664xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// IMPOSSIBLE-ARG: kiln-run: error: argument #0 of @impossible_argument (random input): tensor<9223372036854775807xf32> has more than 2^63 - 1 bytes
func.func @impossible_argument(%a: tensor<9223372036854775807xf32>) -> tensor<9223372036854775807xf32> {
  return %a : tensor<9223372036854775807xf32>
}

// IMPOSSIBLE-INTERP: alloc-failure.mlir:[[@LINE+5]]:8: error: result #0: tensor<4611686018427387904xf32> has more than 2^63 - 1 bytes
// IMPOSSIBLE-INTERP-NEXT: kiln-run: error: running @impossible_result failed
// IMPOSSIBLE-CPU: kiln-run: error: {{.*}}alloc-failure.mlir:[[@LINE+3]]:8: result #0 of 'kt.expand' is tensor<4611686018427387904xf32>, which has more than 2^63 - 1 bytes
// IMPOSSIBLE-CPU-NOT: {{.}}
func.func @impossible_result(%a: tensor<1xf32>) -> tensor<4611686018427387904xf32> {
  %r = kt.expand %a {size = [4611686018427387904]} : (tensor<1xf32>) -> tensor<4611686018427387904xf32>
  return %r : tensor<4611686018427387904xf32>
}

// BATCH-ERR: {{.*}}alloc-failure.mlir:{{[0-9]+}}:8: cannot allocate {{[0-9]+}} bytes (256.0 TiB) for tensor<17592186044416x4xf32> in compiled code: out of memory
func.func @small(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
