// kiln-decompose on softmax, log_softmax, layer_norm and batch_norm: the
// emitted primitives, their locations (the composite's), f16 computed in f32,
// and a refined static result type kept with tensor.cast.
// RUN: kiln-opt %s -kiln-decompose | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// The result has no composite left.
// RUN: kiln-opt %s -kiln-decompose | FileCheck %s --check-prefix=NONE
// NONE-NOT: kt.softmax
// NONE-NOT: kt.log_softmax
// NONE-NOT: kt.layer_norm
// NONE-NOT: kt.batch_norm

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xf32>
// CHECK: %[[M:.*]] = kt.amax %[[X]] {dim = [-1], keepdim = true} : (tensor<3x5xf32>) -> tensor<3x1xf32>
// CHECK: %[[S:.*]] = kt.sub %[[X]], %[[M]] : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
// CHECK: %[[E:.*]] = kt.exp %[[S]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[Z:.*]] = kt.sum %[[E]] {dim = [-1], keepdim = true} : (tensor<3x5xf32>) -> tensor<3x1xf32>
// CHECK: %[[R:.*]] = kt.div %[[E]], %[[Z]] : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
// CHECK: return %[[R]]
// Every emitted op has the composite's location.
// LOC-LABEL: func.func @softmax
// LOC: kt.amax {{.*}} loc(#[[LOC:loc[0-9]+]])
// LOC: kt.sub {{.*}} loc(#[[LOC]])
// LOC: kt.exp {{.*}} loc(#[[LOC]])
// LOC: kt.sum {{.*}} loc(#[[LOC]])
// LOC: kt.div {{.*}} loc(#[[LOC]])
// LOC: #[[LOC]] = loc("model.py":7:12)
func.func @softmax(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = kt.softmax %x {dim = -1} : (tensor<3x5xf32>) -> tensor<3x5xf32> loc("model.py":7:12)
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @log_softmax_f16
// CHECK-SAME: (%[[X:.*]]: tensor<2x9xf16>
// CHECK: %[[C:.*]] = kt.cast %[[X]] {dtype = f32} : (tensor<2x9xf16>) -> tensor<2x9xf32>
// CHECK: %[[M:.*]] = kt.amax %[[C]] {dim = [0], keepdim = true}
// CHECK: %[[S:.*]] = kt.sub %[[C]], %[[M]]
// CHECK: %[[E:.*]] = kt.exp %[[S]]
// CHECK: %[[Z:.*]] = kt.sum %[[E]] {dim = [0], keepdim = true}
// CHECK: %[[L:.*]] = kt.log %[[Z]]
// CHECK: %[[R:.*]] = kt.sub %[[S]], %[[L]]
// CHECK: %[[H:.*]] = kt.cast %[[R]] {dtype = f16} : (tensor<2x9xf32>) -> tensor<2x9xf16>
// CHECK: return %[[H]]
func.func @log_softmax_f16(%x: tensor<2x9xf16>) -> tensor<2x9xf16> {
  %0 = kt.log_softmax %x {dim = 0} : (tensor<2x9xf16>) -> tensor<2x9xf16>
  return %0 : tensor<2x9xf16>
}

// A result type more static than the primitives infer: tensor.cast.
// CHECK-LABEL: func.func @softmax_refined
// CHECK: %[[D:.*]] = kt.div {{.*}} -> tensor<?x4xf32>
// CHECK: %[[R:.*]] = tensor.cast %[[D]] : tensor<?x4xf32> to tensor<3x4xf32>
// CHECK: return %[[R]]
func.func @softmax_refined(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<?x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// Two-pass biased variance over the normalized dims.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3x4xf32>
// CHECK: %[[MU:.*]] = kt.mean %[[X]] {dim = [-2, -1], keepdim = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
// CHECK: %[[D:.*]] = kt.sub %[[X]], %[[MU]]
// CHECK: %[[SQ:.*]] = kt.mul %[[D]], %[[D]]
// CHECK: %[[VAR:.*]] = kt.mean %[[SQ]] {dim = [-2, -1], keepdim = true}
// The sum of squared deviations (var * N, f32) past f32's range: var = inf,
// as PyTorch's float accumulation (issue 15).
// CHECK: %[[CNT:.*]] = kt.full {dtype = f32, size = [], value = 1.200000e+01 : f64}
// CHECK: %[[M2:.*]] = kt.mul %[[VAR]], %[[CNT]]
// CHECK: %[[INF:.*]] = kt.full {dtype = f32, size = [], value = 0x7FF0000000000000 : f64}
// CHECK: %[[OVF:.*]] = kt.eq %[[M2]], %[[INF]]
// CHECK: %[[V2:.*]] = kt.where %[[OVF]], %[[INF]], %[[VAR]]
// CHECK: %[[EPS:.*]] = kt.full {dtype = f32, size = [], value = 1.000000e-03 : f64}
// CHECK: %[[VE:.*]] = kt.add %[[V2]], %[[EPS]]
// CHECK: %[[RS:.*]] = kt.rsqrt %[[VE]]
// CHECK: %[[N:.*]] = kt.mul %[[D]], %[[RS]]
// CHECK: %[[NW:.*]] = kt.mul %[[N]], %[[W]] : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[R:.*]] = kt.add %[[NW]], %[[B]]
// CHECK: return %[[R]]
func.func @layer_norm(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [3, 4], eps = 1.0e-3 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// Per-channel statistics reshaped to [C, 1, 1].
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x5xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>
// CHECK: %[[M1:.*]] = kt.unsqueeze %[[M]] {dim = -1 : i64} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[M2:.*]] = kt.unsqueeze %[[M1]] {dim = -1 : i64} : (tensor<3x1xf32>) -> tensor<3x1x1xf32>
// CHECK: %[[V1:.*]] = kt.unsqueeze %[[V]]
// CHECK: %[[V2:.*]] = kt.unsqueeze %[[V1]]
// CHECK: %[[EPS:.*]] = kt.full {dtype = f32, size = [], value = 1.000000e-05 : f64}
// CHECK: %[[D:.*]] = kt.sub %[[X]], %[[M2]] : (tensor<2x3x4x5xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x5xf32>
// CHECK: %[[VE:.*]] = kt.add %[[V2]], %[[EPS]]
// CHECK: %[[RS:.*]] = kt.rsqrt %[[VE]]
// CHECK: %[[N:.*]] = kt.mul %[[D]], %[[RS]]
// CHECK-NOT: kt.mul
// CHECK: %[[B1:.*]] = kt.unsqueeze %[[B]]
// CHECK: %[[B2:.*]] = kt.unsqueeze %[[B1]]
// CHECK: %[[R:.*]] = kt.add %[[N]], %[[B2]]
// CHECK: return %[[R]]
func.func @batch_norm(%x: tensor<2x3x4x5xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = kt.batch_norm %x, %m, %v bias %b : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// No elements (a static 0): amax over an empty dim is an error, so the max
// is not subtracted (PyTorch's numel() == 0 case).
// CHECK-LABEL: func.func @softmax_empty
// CHECK-SAME: (%[[X:.*]]: tensor<2x0x3xf32>)
// CHECK-NOT: kt.amax
// CHECK: %[[E:.*]] = kt.exp %[[X]]
// CHECK: %[[S:.*]] = kt.sum %[[E]] {dim = [1], keepdim = true}
// CHECK: kt.div %[[E]], %[[S]]
func.func @softmax_empty(%x: tensor<2x0x3xf32>) -> tensor<2x0x3xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<2x0x3xf32>) -> tensor<2x0x3xf32>
  return %0 : tensor<2x0x3xf32>
}

// `?` normalized dims are checked against normalized_shape when they run,
// with a tensor.cast to the static sizes.
// CHECK-LABEL: func.func @layer_norm_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?xf32>)
// CHECK: %[[C:.*]] = tensor.cast %[[X]] : tensor<?x?x?xf32> to tensor<?x3x4xf32>
// CHECK: kt.mean %[[C]] {dim = [-2, -1], keepdim = true} : (tensor<?x3x4xf32>) -> tensor<?x1x1xf32>
// CHECK: %[[R:.*]] = tensor.cast %{{.*}} : tensor<?x3x4xf32> to tensor<?x?x?xf32>
// CHECK: return %[[R]]
func.func @layer_norm_dynamic(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = kt.layer_norm %x {normalized_shape = [3, 4]} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
