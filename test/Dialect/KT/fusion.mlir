// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// Tests that kt.fusion and kt.yield round-trip (custom and generic form).
// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.*]] = kt.fusion "fused_add_exp_0"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK: ^bb0(%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
// CHECK:   %[[A:.*]] = kt.add %[[X]], %[[Y]]
// CHECK:   %[[E:.*]] = kt.exp %[[A]]
// CHECK:   kt.yield %[[E]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @chain(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.fusion "fused_add_exp_0" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %0 = kt.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
    kt.yield %1 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// Two results, one of them a reduction; no operands (a creation op inside).
// CHECK-LABEL: func.func @two_results
// CHECK: kt.fusion "k"() : () -> (tensor<2x3xf32>, tensor<2xf32>)
// CHECK: kt.yield %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2xf32>
func.func @two_results() -> (tensor<2x3xf32>, tensor<2xf32>) {
  %r:2 = kt.fusion "k" () : () -> (tensor<2x3xf32>, tensor<2xf32>) {
    %0 = kt.full {dtype = f32, size = [2, 3], value = 1.0 : f64} : () -> tensor<2x3xf32>
    %1 = kt.sum %0 {dim = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
    kt.yield %0, %1 : tensor<2x3xf32>, tensor<2xf32>
  }
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2xf32>
}
