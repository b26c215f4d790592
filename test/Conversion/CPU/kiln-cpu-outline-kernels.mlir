// RUN: kiln-opt %s -kiln-cpu-outline-kernels=stats=true | FileCheck %s

// Every kernel (a kt.fusion, a computing kt op) becomes a call to a private
// function; identical ones share it; constants are cloned into the kernel;
// a shape op that moves data (transpose) is a kernel too (see
// kiln-cpu-outline-kernels-views.mlir).

// CHECK: kiln-cpu-outline-kernels: 4 kernels, 2 reused, 6 calls
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK-NOT: kt.add
// CHECK: %[[F0:.*]] = call @f_k0(%[[A]], %[[B]])
// CHECK: %[[F1:.*]] = call @f_k0(%[[F0]], %[[B]])
// CHECK: %[[T:.*]] = call @kernel_transpose(%[[F1]])
// CHECK: %[[S0:.*]] = call @kernel_mul(%[[T]])
// CHECK: %[[S1:.*]] = call @kernel_mul(%[[S0]])
// CHECK: %[[R:.*]] = call @kernel_sum(%[[S1]])
// CHECK: return %[[R]]
// CHECK: func.func private @f_k0({{.*}}) -> tensor<4x8xf32> attributes {kiln.kernel_function, passthrough = ["noinline"]}
// CHECK-NEXT: kt.fusion "f_k0"
// CHECK: func.func private @kernel_transpose(
// CHECK-NEXT: kt.transpose
// CHECK: func.func private @kernel_mul(%[[X:.*]]: tensor<8x4xf32>)
// CHECK-NEXT: %[[C:.*]] = kt.constant {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT: kt.mul %[[X]], %[[C]]
// CHECK: func.func private @kernel_sum(
// CHECK-NOT: func.func
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<f32> {
  %two = kt.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.fusion "f_k0" (%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>):
    %s = kt.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %e = kt.exp %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kt.yield %e : tensor<4x8xf32>
  }
  // The same kernel under another name (its index): the same function.
  %1 = kt.fusion "f_k1" (%0, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>):
    %s = kt.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %e = kt.exp %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kt.yield %e : tensor<4x8xf32>
  }
  %t = kt.transpose %1 {dim0 = 0, dim1 = 1} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %2 = kt.mul %t, %two : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %3 = kt.mul %2, %two : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %4 = kt.sum %3 : (tensor<8x4xf32>) -> tensor<f32>
  return %4 : tensor<f32>
}
