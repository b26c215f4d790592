// RUN: kiln-opt %s -kiln-lower-to-linalg="allow-partial=true" -kiln-form-kernels | FileCheck %s
// RUN: not kiln-opt %s -kiln-form-kernels="tile-rows=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s -kiln-form-kernels="tile-elements=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s -kiln-lower-to-linalg -kiln-form-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOLOWER

// Tests that a group whose body still holds a kt op without a lowering
// (an unfunctionalized ref op) is inlined without forming a kernel: the kt.fusion is gone, the
// ref ops stay for kiln-verify-no-kt to report, and the lowered neg is a
// plain linalg.generic.
// CHECK-LABEL: func.func @partial
// CHECK-NOT: kt.fusion
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: kt.alloc_ref
// CHECK: kt.load
// CHECK-NOT: kiln.kernel
// BAD: error: kernel formation: tile sizes must be at least 1
// NOLOWER: error: failed to legalize operation 'kt.alloc_ref'
func.func @partial(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = kt.fusion "k" (%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %0 = kt.neg %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %1 = kt.alloc_ref %0 : (tensor<4x3xf32>) -> !kt.ref<4x3xf32>
    %2 = kt.load %1 : (!kt.ref<4x3xf32>) -> tensor<4x3xf32>
    kt.yield %2 : tensor<4x3xf32>
  }
  return %r : tensor<4x3xf32>
}
