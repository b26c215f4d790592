// kiln-decompose on gelu, silu, var, logsumexp and linear.
// RUN: kiln-opt %s -kiln-decompose | FileCheck %s
// Kept ops stay, the others are decomposed.
// RUN: kiln-opt %s -kiln-decompose="keep=kt.gelu,kt.linear" | FileCheck %s --check-prefix=KEEP
// KEEP-LABEL: func.func @gelu
// KEEP: kt.gelu
// KEEP-LABEL: func.func @silu
// KEEP-NOT: kt.silu
// KEEP: kt.sigmoid
// KEEP-LABEL: func.func @linear
// KEEP: kt.linear

// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[C:.*]] = kt.full {dtype = f32, size = [], value = 0.70710678118654757 : f64}
// CHECK: %[[XS:.*]] = kt.mul %[[X]], %[[C]]
// CHECK: %[[E:.*]] = kt.erf %[[XS]]
// CHECK: %[[H:.*]] = kt.full {dtype = f32, size = [], value = 5.000000e-01 : f64}
// CHECK: %[[XH:.*]] = kt.mul %[[X]], %[[H]]
// CHECK: %[[ONE:.*]] = kt.full {dtype = f32, size = [], value = 1.000000e+00 : f64}
// CHECK: %[[E1:.*]] = kt.add %[[E]], %[[ONE]]
// CHECK: %[[R:.*]] = kt.mul %[[XH]], %[[E1]]
// CHECK: return %[[R]]
func.func @gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.gelu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK: %[[XC:.*]] = kt.cast %[[X]] {dtype = f32}
// CHECK: %[[X2:.*]] = kt.mul %[[XC]], %[[XC]]
// CHECK: %[[X3:.*]] = kt.mul %[[X2]], %[[XC]]
// CHECK: kt.full {dtype = f32, size = [], value = 4.471500e-02 : f64}
// CHECK: kt.full {dtype = f32, size = [], value = 0.79788456080286541 : f64}
// CHECK: kt.tanh
// CHECK: %[[R:.*]] = kt.cast %{{.*}} {dtype = f16} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: return %[[R]]
func.func @gelu_tanh(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.gelu %x {approximate = #kt.approximate<tanh>} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[S:.*]] = kt.sigmoid %[[X]]
// CHECK: %[[R:.*]] = kt.mul %[[X]], %[[S]]
// CHECK: return %[[R]]
func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.silu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Two passes in f64 (PyTorch's CPU var accumulates in double); N -
// correction = 4 - 1 folded to constants but still clamped.
// CHECK-LABEL: func.func @var
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[XD:.*]] = kt.cast %[[X]] {dtype = f64} : (tensor<3x4xf32>) -> tensor<3x4xf64>
// CHECK: %[[MU:.*]] = kt.mean %[[XD]] {dim = [1], keepdim = true} : (tensor<3x4xf64>) -> tensor<3x1xf64>
// CHECK: %[[D:.*]] = kt.sub %[[XD]], %[[MU]]
// CHECK: %[[SQ:.*]] = kt.mul %[[D]], %[[D]]
// CHECK: %[[SS:.*]] = kt.sum %[[SQ]] {dim = [1]} : (tensor<3x4xf64>) -> tensor<3xf64>
// CHECK: %[[N:.*]] = kt.full {dtype = f64, size = [], value = 4.000000e+00 : f64}
// CHECK: %[[C:.*]] = kt.full {dtype = f64, size = [], value = 1.000000e+00 : f64}
// CHECK: %[[NC:.*]] = kt.sub %[[N]], %[[C]]
// CHECK: %[[Z:.*]] = kt.full {dtype = f64, size = [], value = 0.000000e+00 : f64}
// CHECK: %[[DEN:.*]] = kt.maximum %[[NC]], %[[Z]]
// CHECK: %[[Q:.*]] = kt.div %[[SS]], %[[DEN]]
// CHECK: %[[R:.*]] = kt.cast %[[Q]] {dtype = f32} : (tensor<3xf64>) -> tensor<3xf32>
// CHECK: return %[[R]]
func.func @var(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = kt.var %x {dim = [1]} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A `?` reduced dim: N is read with tensor.dim.
// CHECK-LABEL: func.func @var_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %{{.*}}, %[[C0]] : tensor<?x4xf64>
// CHECK: %[[I:.*]] = arith.index_cast %[[D0]] : index to i64
// CHECK: %[[T:.*]] = tensor.from_elements %[[I]] : tensor<i64>
// CHECK: %[[F:.*]] = kt.cast %[[T]] {dtype = f64}
// CHECK: %[[S:.*]] = kt.full {dtype = f64, size = [], value = 4.000000e+00 : f64}
// CHECK: %[[N:.*]] = kt.mul %[[F]], %[[S]]
// CHECK: kt.sub %[[N]]
func.func @var_dynamic(%x: tensor<?x4xf32>) -> tensor<f32> {
  %0 = kt.var %x {correction = 0.0} : (tensor<?x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// The max is replaced by 0 where infinite, then squeezed to the result.
// CHECK-LABEL: func.func @logsumexp
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[M:.*]] = kt.amax %[[X]] {dim = [-1], keepdim = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
// CHECK: %[[A:.*]] = kt.abs %[[M]]
// CHECK: %[[INF:.*]] = kt.full {dtype = f32, size = [], value = 0x7FF0000000000000 : f64}
// CHECK: %[[FIN:.*]] = kt.lt %[[A]], %[[INF]]
// CHECK: %[[Z:.*]] = kt.full {dtype = f32, size = [], value = 0.000000e+00 : f64}
// CHECK: %[[MZ:.*]] = kt.where %[[FIN]], %[[M]], %[[Z]]
// CHECK: %[[D:.*]] = kt.sub %[[X]], %[[MZ]]
// CHECK: %[[E:.*]] = kt.exp %[[D]]
// CHECK: %[[S:.*]] = kt.sum %[[E]] {dim = [-1]} : (tensor<3x4xf32>) -> tensor<3xf32>
// CHECK: %[[L:.*]] = kt.log %[[S]]
// CHECK: %[[MS:.*]] = kt.squeeze %[[MZ]] {dim = [-1]} : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK: %[[R:.*]] = kt.add %[[L]], %[[MS]]
// CHECK: return %[[R]]
func.func @logsumexp(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = kt.logsumexp %x {dim = [-1]} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x3xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[WT:.*]] = kt.transpose %[[W]] {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK: %[[MM:.*]] = kt.matmul %[[X]], %[[WT]] : (tensor<2x5x3xf32>, tensor<3x4xf32>) -> tensor<2x5x4xf32>
// CHECK: %[[R:.*]] = kt.add %[[MM]], %[[B]]
// CHECK: return %[[R]]
func.func @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x5x4xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}
