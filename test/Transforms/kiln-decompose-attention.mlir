// kiln-decompose on scaled_dot_product_attention (softmax kept to show the
// structure; without keep it is decomposed too).
// RUN: kiln-opt %s -kiln-decompose=keep=kt.softmax | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose | FileCheck %s --check-prefix=NONE
// NONE-NOT: kt.scaled_dot_product_attention
// NONE-NOT: kt.softmax

// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[V:.*]]: tensor<2x6x5xf32>)
// CHECK: %[[SC:.*]] = kt.full {dtype = f32, size = [], value = 0.35355339059327373 : f64}
// CHECK: %[[KT:.*]] = kt.transpose %[[K]] {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
// CHECK: %[[QK:.*]] = kt.matmul %[[Q]], %[[KT]] : (tensor<2x4x8xf32>, tensor<2x8x6xf32>) -> tensor<2x4x6xf32>
// CHECK: %[[S:.*]] = kt.mul %[[QK]], %[[SC]]
// CHECK: %[[J:.*]] = kt.arange {dtype = i64, end = 6.000000e+00 : f64} : () -> tensor<6xi64>
// CHECK: %[[I:.*]] = kt.arange {dtype = i64, end = 4.000000e+00 : f64} : () -> tensor<4xi64>
// CHECK: %[[I1:.*]] = kt.unsqueeze %[[I]] {dim = -1 : i64}
// CHECK: %[[ABOVE:.*]] = kt.gt %[[J]], %[[I1]] : (tensor<6xi64>, tensor<4x1xi64>) -> tensor<4x6xi1>
// CHECK: %[[NINF:.*]] = kt.full {dtype = f32, size = [], value = 0xFFF0000000000000 : f64}
// CHECK: %[[SM:.*]] = kt.where %[[ABOVE]], %[[NINF]], %[[S]]
// CHECK: %[[P:.*]] = kt.softmax %[[SM]] {dim = -1 : i64} : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
// CHECK: %[[R:.*]] = kt.matmul %[[P]], %[[V]] : (tensor<2x4x6xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
// CHECK: return %[[R]]
func.func @causal(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// A boolean mask: -inf where false. An explicit scale.
// CHECK-LABEL: func.func @bool_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<3x5xi1>)
// CHECK: %[[SC:.*]] = kt.full {dtype = f32, size = [], value = 2.500000e-01 : f64}
// CHECK: %[[S:.*]] = kt.mul %{{.*}}, %[[SC]]
// CHECK: %[[NINF:.*]] = kt.full {dtype = f32, size = [], value = 0xFFF0000000000000 : f64}
// CHECK: %[[SM:.*]] = kt.where %[[M]], %[[S]], %[[NINF]] : (tensor<3x5xi1>, tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
// CHECK: kt.softmax %[[SM]]
func.func @bool_mask(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x3xf32>, %m: tensor<3x5xi1>) -> tensor<2x3x3xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m {scale = 0.25 : f64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>, tensor<3x5xi1>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// A float mask is added. A `?` embedding dim: scale = rsqrt(E) read at run
// time.
// CHECK-LABEL: func.func @float_mask_dynamic
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<3x?xf32>, {{.*}}, %[[M:[^:]*]]: tensor<3x5xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[E:.*]] = tensor.dim %[[Q]], %[[C1]] : tensor<3x?xf32>
// CHECK: %[[EI:.*]] = arith.index_cast %[[E]] : index to i64
// CHECK: %[[ET:.*]] = tensor.from_elements %[[EI]] : tensor<i64>
// CHECK: %[[EF:.*]] = kt.cast %[[ET]] {dtype = f32} : (tensor<i64>) -> tensor<f32>
// CHECK: %[[SC:.*]] = kt.rsqrt %[[EF]]
// CHECK: %[[S:.*]] = kt.mul %{{.*}}, %[[SC]]
// CHECK: %[[SM:.*]] = kt.add %[[S]], %[[M]] : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK: kt.softmax %[[SM]]
func.func @float_mask_dynamic(%q: tensor<3x?xf32>, %k: tensor<5x?xf32>, %v: tensor<5x2xf32>, %m: tensor<3x5xf32>) -> tensor<3x2xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<3x?xf32>, tensor<5x?xf32>, tensor<5x2xf32>, tensor<3x5xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
