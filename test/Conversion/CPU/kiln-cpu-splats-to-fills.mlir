// RUN: kiln-opt %s -split-input-file -kiln-cpu-splats-to-fills | FileCheck %s

// Tests that a splat tensor constant becomes tensor.empty + linalg.fill of
// its scalar, whatever its size and element type.
// CHECK-LABEL: func.func @splats
// CHECK-DAG: %[[F:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<2147483648xf32>
// CHECK: %[[A:.*]] = linalg.fill ins(%[[F]] : f32) outs(%[[E]] : tensor<2147483648xf32>)
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[EB:.*]] = tensor.empty() : tensor<3x4xi1>
// CHECK: %[[B:.*]] = linalg.fill ins(%[[T]] : i1) outs(%[[EB]] : tensor<3x4xi1>)
// CHECK-DAG: %[[S:.*]] = arith.constant -7 : i64
// CHECK-DAG: %[[EC:.*]] = tensor.empty() : tensor<i64>
// CHECK: %[[C:.*]] = linalg.fill ins(%[[S]] : i64) outs(%[[EC]] : tensor<i64>)
// CHECK: return %[[A]], %[[B]], %[[C]]
// CHECK-NOT: dense<
func.func @splats() -> (tensor<2147483648xf32>, tensor<3x4xi1>, tensor<i64>) {
  %a = arith.constant dense<1.5> : tensor<2147483648xf32>
  %b = arith.constant dense<true> : tensor<3x4xi1>
  %c = arith.constant dense<-7> : tensor<i64>
  return %a, %b, %c : tensor<2147483648xf32>, tensor<3x4xi1>, tensor<i64>
}

// -----

// Tests that non-splat tensor constants and scalar constants stay.
// CHECK-LABEL: func.func @others
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK-NOT: linalg.fill
func.func @others() -> (tensor<2xf32>, f32) {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant 3.0 : f32
  return %a, %b : tensor<2xf32>, f32
}
