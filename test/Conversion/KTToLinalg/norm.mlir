// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s

// Tests that layer_norm reduces the normalized dims twice (mean, variance)
// and normalizes with 1/sqrt(var + eps), weight and bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// The sum of squared deviations (f64) past f32's range is inf, as PyTorch's
// float accumulation (issue 15).
// CHECK: %[[M2:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[OVF:.*]] = arith.cmpf oeq, %[[M2]], %{{.*}} : f32
// CHECK: arith.select %[[OVF]], %{{.*}}, %{{.*}} : f64
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-NOT: kt.
func.func @layer_norm(%x: tensor<2x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %r = kt.layer_norm %x weight %w bias %b {normalized_shape = [4]} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// f64 accumulates in f64 (PyTorch's double): no overflow select.
// CHECK-LABEL: func.func @layer_norm_f64
// CHECK-NOT: arith.cmpf
// CHECK: return
func.func @layer_norm_f64(%x: tensor<2x4xf64>) -> tensor<2x4xf64> {
  %r = kt.layer_norm %x {normalized_shape = [4]} : (tensor<2x4xf64>) -> tensor<2x4xf64>
  return %r : tensor<2x4xf64>
}

// -----

// Tests that batch_norm reads the per-channel operands through dim 1 and
// bf16 computes in f32.
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @batch_norm_bf16
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[CH]], #[[CH]], #[[CH]], #[[CH]], #{{.+}}]
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: math.sqrt {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @batch_norm_bf16(%x: tensor<2x3x4xbf16>, %m: tensor<3xbf16>, %v: tensor<3xbf16>, %w: tensor<3xbf16>, %b: tensor<3xbf16>) -> tensor<2x3x4xbf16> {
  %r = kt.batch_norm %x, %m, %v weight %w bias %b : (tensor<2x3x4xbf16>, tensor<3xbf16>, tensor<3xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> tensor<2x3x4xbf16>
  return %r : tensor<2x3x4xbf16>
}

// -----

// Tests that causal attention contracts q and k, masks s > l with -inf,
// runs a max-subtracted softmax and contracts with v.
// CHECK-LABEL: func.func @sdpa_causal
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: linalg.generic
// CHECK: %[[L:.+]] = linalg.index 1 : index
// CHECK: %[[S:.+]] = linalg.index 2 : index
// CHECK: arith.cmpi ugt, %[[S]], %[[L]] : index
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-NOT: kt.
func.func @sdpa_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %r = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  return %r : tensor<2x4x5xf32>
}

// -----

// Tests that a boolean mask selects -inf where it is false.
// CHECK-LABEL: func.func @sdpa_bool_mask
// CHECK: ^bb0(%{{.+}}: f32, %[[M:.+]]: i1, %{{.+}}: f32):
// CHECK: arith.select %[[M]]
func.func @sdpa_bool_mask(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %m: tensor<4x6xi1>) -> tensor<4x5xf32> {
  %r = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf32>, tensor<4x6xi1>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
