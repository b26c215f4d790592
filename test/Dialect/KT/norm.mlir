// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Tests that the Norm ops (softmax, log_softmax, layer_norm, batch_norm,
// batch_norm_train, batch_norm_backward,
// nll_loss, cross_entropy, scaled_dot_product_attention) verify, infer their
// result types and round-trip in custom and generic form.

// CHECK-LABEL: func.func @softmax
// CHECK: kt.softmax %{{.*}} {dim = -1 : i64} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.softmax %{{.*}} {dim = 0 : i64} : (tensor<f64>) -> tensor<f64>
// CHECK: kt.log_softmax %{{.*}} {dim = 1 : i64} : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK: kt.log_softmax %{{.*}} {dim = -1 : i64} : (tensor<f16>) -> tensor<f16>
func.func @softmax(%x: tensor<2x?xf32>, %s: tensor<f64>, %b: tensor<2x3xbf16>, %h: tensor<f16>) -> (tensor<2x?xf32>, tensor<f64>, tensor<2x3xbf16>, tensor<f16>) {
  %0 = kt.softmax %x {dim = -1} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.softmax %s {dim = 0} : (tensor<f64>) -> tensor<f64>
  %2 = kt.log_softmax %b {dim = 1} : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %3 = kt.log_softmax %h {dim = -1} : (tensor<f16>) -> tensor<f16>
  return %0, %1, %2, %3 : tensor<2x?xf32>, tensor<f64>, tensor<2x3xbf16>, tensor<f16>
}

// -----

// A written result type may refine an inferred `?`.
// CHECK-LABEL: func.func @softmax_refine
// CHECK: kt.softmax %{{.*}} {dim = 1 : i64} : (tensor<2x?xf32>) -> tensor<2x5xf32>
func.func @softmax_refine(%x: tensor<2x?xf32>) -> tensor<2x5xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<2x?xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK: kt.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} {normalized_shape = [3, 4]} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: kt.layer_norm %{{.*}} {eps = 1.000000e-03 : f64, normalized_shape = [4]} : (tensor<?x3x4xf64>) -> tensor<?x3x4xf64>
// CHECK: kt.layer_norm %{{.*}} bias %{{.*}} {normalized_shape = [4]} : (tensor<2x?xf16>, tensor<4xf16>) -> tensor<2x?xf16>
// CHECK: kt.layer_norm %{{.*}} weight %{{.*}} {normalized_shape = [4]} : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
func.func @layer_norm(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3x4xf32>, %y: tensor<?x3x4xf64>, %z: tensor<2x?xf16>, %bz: tensor<4xf16>, %u: tensor<2x4xbf16>, %wu: tensor<4xbf16>) -> (tensor<2x3x4xf32>, tensor<?x3x4xf64>, tensor<2x?xf16>, tensor<2x4xbf16>) {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [3, 4]} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %1 = kt.layer_norm %y {normalized_shape = [4], eps = 1.0e-3} : (tensor<?x3x4xf64>) -> tensor<?x3x4xf64>
  %2 = kt.layer_norm %z bias %bz {normalized_shape = [4]} : (tensor<2x?xf16>, tensor<4xf16>) -> tensor<2x?xf16>
  %3 = kt.layer_norm %u weight %wu {normalized_shape = [4]} : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  return %0, %1, %2, %3 : tensor<2x3x4xf32>, tensor<?x3x4xf64>, tensor<2x?xf16>, tensor<2x4xbf16>
}

// -----

// CHECK-LABEL: func.func @batch_norm
// CHECK: kt.batch_norm %{{.*}}, %{{.*}}, %{{.*}} weight %{{.*}} bias %{{.*}} {eps = 1.000000e-03 : f64} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
// CHECK: kt.batch_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<?x?xf64>
// CHECK: kt.batch_norm %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
func.func @batch_norm(%x: tensor<2x3x4x5xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %y: tensor<?x?xf64>, %m2: tensor<3xf64>, %v2: tensor<3xf64>, %z: tensor<2x3xf16>, %m3: tensor<3xf16>) -> (tensor<2x3x4x5xf32>, tensor<?x?xf64>, tensor<2x3xf16>) {
  %0 = kt.batch_norm %x, %m, %v weight %w bias %b {eps = 1.0e-3} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %1 = kt.batch_norm %y, %m2, %v2 : (tensor<?x?xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<?x?xf64>
  %2 = kt.batch_norm %z, %m3, %m3 bias %m3 : (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %0, %1, %2 : tensor<2x3x4x5xf32>, tensor<?x?xf64>, tensor<2x3xf16>
}

// -----

// CHECK-LABEL: func.func @batch_norm_train
// CHECK: kt.batch_norm_train %{{.*}} weight %{{.*}} bias %{{.*}} {eps = 1.000000e-03 : f64} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: kt.batch_norm_train %{{.*}} : (tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>)
// CHECK: kt.batch_norm_train %{{.*}} bias %{{.*}} : (tensor<2x?x5xf16>, tensor<3xf16>) -> (tensor<2x?x5xf16>, tensor<3xf32>, tensor<3xf32>)
// CHECK: kt.batch_norm_train %{{.*}} weight %{{.*}} : (tensor<1x2x2x2x2xbf16>, tensor<2xbf16>) -> (tensor<1x2x2x2x2xbf16>, tensor<2xf32>, tensor<2xf32>)
func.func @batch_norm_train(%x: tensor<?x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %y: tensor<?x?xf64>, %z: tensor<2x?x5xf16>, %bz: tensor<3xf16>, %u: tensor<1x2x2x2x2xbf16>, %wu: tensor<2xbf16>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<?xf64>, tensor<3xf32>, tensor<2xf32>) {
  %0:3 = kt.batch_norm_train %x weight %w bias %b {eps = 1.0e-3} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %1:3 = kt.batch_norm_train %y : (tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>)
  %2:3 = kt.batch_norm_train %z bias %bz : (tensor<2x?x5xf16>, tensor<3xf16>) -> (tensor<2x?x5xf16>, tensor<3xf32>, tensor<3xf32>)
  %3:3 = kt.batch_norm_train %u weight %wu : (tensor<1x2x2x2x2xbf16>, tensor<2xbf16>) -> (tensor<1x2x2x2x2xbf16>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#2, %1#1, %2#1, %3#2 : tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<?xf64>, tensor<3xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_backward
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} weight %{{.*}} : (tensor<2x3x4xf32>, tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>)
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} weight %{{.*}} : (tensor<2x3x2x2x2xbf16>, tensor<2x3x2x2x2xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xbf16>) -> (tensor<2x3x2x2x2xbf16>, tensor<3xbf16>, tensor<3xbf16>)
func.func @batch_norm_backward(%g: tensor<2x3x4xf32>, %x: tensor<?x3x4xf32>, %m: tensor<3xf32>, %r: tensor<3xf32>, %w: tensor<3xf32>, %g2: tensor<?x?xf64>, %x2: tensor<?x?xf64>, %m2: tensor<?xf64>, %g3: tensor<2x3x2x2x2xbf16>, %w3: tensor<3xbf16>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<?xf64>, tensor<3xbf16>) {
  %0:3 = kt.batch_norm_backward %g, %x, %m, %r weight %w : (tensor<2x3x4xf32>, tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %1:3 = kt.batch_norm_backward %g2, %x2, %m2, %m2 : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>)
  %2:3 = kt.batch_norm_backward %g3, %g3, %m, %r weight %w3 : (tensor<2x3x2x2x2xbf16>, tensor<2x3x2x2x2xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xbf16>) -> (tensor<2x3x2x2x2xbf16>, tensor<3xbf16>, tensor<3xbf16>)
  return %0#0, %0#1, %1#2, %2#1 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<?xf64>, tensor<3xbf16>
}

// -----

// A folded activation: the bias (which refines a `?` C) and the attribute
// round-trip; none is the default (not printed).
// CHECK-LABEL: func.func @batch_norm_backward_act
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} weight %{{.*}} bias %{{.*}} {activation = #kt.activation<relu6>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} {activation = #kt.activation<relu>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {activation = #kt.activation<relu>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<2x3x4xf32>, tensor<?xf32>, tensor<?xf32>)
// CHECK: kt.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<2x3x4xf32>, tensor<?xf32>, tensor<?xf32>)
func.func @batch_norm_backward_act(%g: tensor<2x3x4xf32>, %x: tensor<?x?x4xf32>, %m: tensor<?xf32>, %w: tensor<?xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0:3 = kt.batch_norm_backward %g, %x, %m, %m weight %w bias %b {activation = #kt.activation<relu6>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %1:3 = kt.batch_norm_backward %g, %x, %m, %m bias %b {activation = #kt.activation<relu>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %2:3 = kt.batch_norm_backward %g, %x, %m, %m {activation = #kt.activation<relu>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<2x3x4xf32>, tensor<?xf32>, tensor<?xf32>)
  %3:3 = kt.batch_norm_backward %g, %x, %m, %m {activation = #kt.activation<none>} : (tensor<2x3x4xf32>, tensor<?x?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<2x3x4xf32>, tensor<?xf32>, tensor<?xf32>)
  return %0#1, %1#2, %2#1, %3#2 : tensor<3xf32>, tensor<3xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @nll_loss
// CHECK: kt.nll_loss %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK: kt.nll_loss %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 1 : i64, reduction = #kt.reduction<sum>} : (tensor<4x3xf32>, tensor<4xi32>, tensor<3xf32>) -> tensor<f32>
// CHECK: kt.nll_loss %{{.*}}, %{{.*}} {reduction = #kt.reduction<none>} : (tensor<?x3x5x6xf64>, tensor<2x5x?xi64>) -> tensor<2x5x6xf64>
// CHECK: kt.nll_loss %{{.*}}, %{{.*}} {reduction = #kt.reduction<none>} : (tensor<3xf16>, tensor<i64>) -> tensor<f16>
func.func @nll_loss(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %t32: tensor<4xi32>, %w: tensor<3xf32>, %y: tensor<?x3x5x6xf64>, %ty: tensor<2x5x?xi64>, %z: tensor<3xf16>, %tz: tensor<i64>) -> (tensor<f32>, tensor<f32>, tensor<2x5x6xf64>, tensor<f16>) {
  %0 = kt.nll_loss %x, %t : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = kt.nll_loss %x, %t32, %w {reduction = #kt.reduction<sum>, ignore_index = 1} : (tensor<4x3xf32>, tensor<4xi32>, tensor<3xf32>) -> tensor<f32>
  %2 = kt.nll_loss %y, %ty {reduction = #kt.reduction<none>} : (tensor<?x3x5x6xf64>, tensor<2x5x?xi64>) -> tensor<2x5x6xf64>
  %3 = kt.nll_loss %z, %tz {reduction = #kt.reduction<none>} : (tensor<3xf16>, tensor<i64>) -> tensor<f16>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<2x5x6xf64>, tensor<f16>
}

// -----

// CHECK-LABEL: func.func @cross_entropy
// CHECK: kt.cross_entropy %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK: kt.cross_entropy %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64, reduction = #kt.reduction<none>} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<4xf32>
// CHECK: kt.cross_entropy %{{.*}}, %{{.*}} {reduction = #kt.reduction<none>} : (tensor<?x3x5xbf16>, tensor<2x3x?xbf16>) -> tensor<2x5xbf16>
// CHECK: kt.cross_entropy %{{.*}}, %{{.*}} {reduction = #kt.reduction<sum>} : (tensor<3xf64>, tensor<3xf64>) -> tensor<f64>
func.func @cross_entropy(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<3xf32>, %y: tensor<?x3x5xbf16>, %p: tensor<2x3x?xbf16>, %z: tensor<3xf64>, %pz: tensor<3xf64>) -> (tensor<f32>, tensor<4xf32>, tensor<2x5xbf16>, tensor<f64>) {
  %0 = kt.cross_entropy %x, %t : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = kt.cross_entropy %x, %t, %w {reduction = #kt.reduction<none>, ignore_index = 0, label_smoothing = 0.1} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<4xf32>
  %2 = kt.cross_entropy %y, %p {reduction = #kt.reduction<none>} : (tensor<?x3x5xbf16>, tensor<2x3x?xbf16>) -> tensor<2x5xbf16>
  %3 = kt.cross_entropy %z, %pz {reduction = #kt.reduction<sum>} : (tensor<3xf64>, tensor<3xf64>) -> tensor<f64>
  return %0, %1, %2, %3 : tensor<f32>, tensor<4xf32>, tensor<2x5xbf16>, tensor<f64>
}

// -----

// CHECK-LABEL: func.func @sdpa
// CHECK: kt.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
// CHECK: kt.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {is_causal = true, scale = 5.000000e-01 : f64} : (tensor<3x1x4x8xf32>, tensor<2x6x8xf32>, tensor<1x6x5xf32>) -> tensor<3x2x4x5xf32>
// CHECK: kt.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4x8xf64>, tensor<?x?x8xf64>, tensor<2x6x?xf64>, tensor<4x6xi1>) -> tensor<2x4x?xf64>
// CHECK: kt.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xf16>, tensor<6x8xf16>, tensor<6x5xf16>, tensor<3x1x6xf16>) -> tensor<3x4x5xf16>
func.func @sdpa(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %q2: tensor<3x1x4x8xf32>, %v2: tensor<1x6x5xf32>, %q3: tensor<?x4x8xf64>, %k3: tensor<?x?x8xf64>, %v3: tensor<2x6x?xf64>, %m3: tensor<4x6xi1>, %q4: tensor<4x8xf16>, %k4: tensor<6x8xf16>, %v4: tensor<6x5xf16>, %m4: tensor<3x1x6xf16>) -> (tensor<2x4x5xf32>, tensor<3x2x4x5xf32>, tensor<2x4x?xf64>, tensor<3x4x5xf16>) {
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  %1 = kt.scaled_dot_product_attention %q2, %k, %v2 {is_causal = true, dropout_p = 0.0, scale = 0.5} : (tensor<3x1x4x8xf32>, tensor<2x6x8xf32>, tensor<1x6x5xf32>) -> tensor<3x2x4x5xf32>
  %2 = kt.scaled_dot_product_attention %q3, %k3, %v3, %m3 : (tensor<?x4x8xf64>, tensor<?x?x8xf64>, tensor<2x6x?xf64>, tensor<4x6xi1>) -> tensor<2x4x?xf64>
  %3 = kt.scaled_dot_product_attention %q4, %k4, %v4, %m4 : (tensor<4x8xf16>, tensor<6x8xf16>, tensor<6x5xf16>, tensor<3x1x6xf16>) -> tensor<3x4x5xf16>
  return %0, %1, %2, %3 : tensor<2x4x5xf32>, tensor<3x2x4x5xf32>, tensor<2x4x?xf64>, tensor<3x4x5xf16>
}
