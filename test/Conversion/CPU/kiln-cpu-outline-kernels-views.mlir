// RUN: kiln-opt %s -kiln-cpu-outline-kernels=stats=true | FileCheck %s

// Views (reshape, squeeze, unsqueeze, slice, select) stay in the caller; the
// shape ops that move data (index_select, pad, transpose, concat, ...) are
// kernels, their constant operands cloned in. Left in the caller, their loops
// made that one function grow with the program: issue 13, ~48 bicubic
// interpolations (4 index_selects per spatial dim each) spent minutes in
// LLVM's -O3 and codegen of the caller, where the static gathers with
// constant indices were fully unrolled.

// CHECK: kiln-cpu-outline-kernels: 4 kernels, 0 reused, 4 calls
// Views stay in the caller; the gathers and the pad are kernels, with their
// constant indices cloned in.
// CHECK-LABEL: func.func @views_stay(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x5xf32>)
// CHECK-NOT: kt.constant
// CHECK: %[[S:.*]] = kt.slice %[[X]]
// CHECK-NEXT: %[[Q:.*]] = kt.reshape %[[S]]
// CHECK-NEXT: %[[G0:.*]] = call @kernel_index_select(%[[Q]])
// CHECK-NEXT: %[[G1:.*]] = call @kernel_index_select_0(%[[Q]])
// CHECK-NEXT: %[[P:.*]] = call @kernel_pad(%[[G1]])
// CHECK-NEXT: %[[R:.*]] = kt.unsqueeze %[[P]]
// CHECK-NEXT: %[[M:.*]] = call @kernel_mul(%[[G0]], %[[R]])
// CHECK-NEXT: return %[[M]]
// CHECK: func.func private @kernel_index_select(%[[Y:.*]]: tensor<3x5xf32>) -> tensor<3x7xf32>
// CHECK-NEXT: %[[I:.*]] = kt.constant {value = dense<[0, 0, 1, 2, 3, 4, 4]> : tensor<7xi64>}
// CHECK-NEXT: kt.index_select %[[Y]], %[[I]] {dim = 1 : i64}
// CHECK: func.func private @kernel_index_select_0(
// CHECK: kt.constant {value = dense<[1, 1, 2, 3, 4, 4, 4]> : tensor<7xi64>}
// CHECK: func.func private @kernel_pad(
// CHECK-NEXT: kt.pad
func.func @views_stay(%x: tensor<2x3x5xf32>) -> tensor<1x3x7xf32> {
  %i0 = kt.constant {value = dense<[0, 0, 1, 2, 3, 4, 4]> : tensor<7xi64>} : () -> tensor<7xi64>
  %i1 = kt.constant {value = dense<[1, 1, 2, 3, 4, 4, 4]> : tensor<7xi64>} : () -> tensor<7xi64>
  %s = kt.slice %x {dim = 0, start = 1, end = 2} : (tensor<2x3x5xf32>) -> tensor<1x3x5xf32>
  %q = kt.reshape %s {shape = [3, 5]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
  %g0 = kt.index_select %q, %i0 {dim = 1} : (tensor<3x5xf32>, tensor<7xi64>) -> tensor<3x7xf32>
  %g1 = kt.index_select %q, %i1 {dim = 1} : (tensor<3x5xf32>, tensor<7xi64>) -> tensor<3x7xf32>
  %p = kt.pad %g1 {pad = [1, -1, 0, 0]} : (tensor<3x7xf32>) -> tensor<3x7xf32>
  %u = kt.unsqueeze %p {dim = 0} : (tensor<3x7xf32>) -> tensor<1x3x7xf32>
  %m = kt.mul %g0, %u : (tensor<3x7xf32>, tensor<1x3x7xf32>) -> tensor<1x3x7xf32>
  return %m : tensor<1x3x7xf32>
}
