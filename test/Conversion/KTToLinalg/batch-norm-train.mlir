// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -canonicalize | FileCheck %s

// Tests the shape of kt.batch_norm_train's lowering: each channel's first
// element as the shift (a [C] generic reading x[0, c, 0, 0]; zeros when
// the dynamic batch is 0), then per-channel sums of the deviations from it and of their squares
// (the shifted-data variance: two generics over the input whose outputs
// are [C] f64, every dim but 1 a reduction), then one pointwise generic
// over the input for the result.
// CHECK-LABEL: func.func @bn_train
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq
// CHECK: scf.if %[[EMPTY]]
// CHECK: linalg.fill
// CHECK: else
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK: %[[C:.*]] = linalg.index 0
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %[[C]], %{{.*}}, %{{.*}}] : tensor<?x3x4x4xf32>
// CHECK-NOT: iterator_types = ["reduction"
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf64>)
// CHECK: arith.subf
// CHECK-NOT: arith.mulf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf64>)
// CHECK: arith.subf
// CHECK: arith.mulf
// The variance's sum of squared deviations (var * N) past f32's range
// makes it inf, as PyTorch's float accumulation (issue 15).
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<?x3x4x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bn_train(%x: tensor<?x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = kt.batch_norm_train %x weight %w bias %b {eps = 1.0e-3} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Static sizes: no run-time test; the shift converted to the f32
// statistics type for a bf16 input; still two reductions.
// CHECK-LABEL: func.func @bn_train_static_bf16
// CHECK-NOT: scf.if
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} outs(%{{.*}} : tensor<5xf32>)
// CHECK: tensor.extract %{{.*}} : tensor<2x5x3xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<5xf64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<5xf64>)
// CHECK-NOT: iterator_types = ["reduction"
// CHECK: return
func.func @bn_train_static_bf16(%x: tensor<2x5x3xbf16>) -> (tensor<2x5x3xbf16>, tensor<5xf32>, tensor<5xf32>) {
  %0:3 = kt.batch_norm_train %x {eps = 1.0e-5} : (tensor<2x5x3xbf16>) -> (tensor<2x5x3xbf16>, tensor<5xf32>, tensor<5xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x5x3xbf16>, tensor<5xf32>, tensor<5xf32>
}

// -----

// Tests kt.batch_norm_backward's: one two-result per-channel reduction with
// [C] f64 results (sum of grad_output, sum of grad_output * (x - mean), one
// read of both), per-channel generics, then one pointwise generic over the
// input.
// CHECK-LABEL: func.func @bn_backward
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x5xf16>, tensor<2x3x5xf16>, tensor<3xf32>) outs(%{{.*}}, %{{.*}} : tensor<3xf64>, tensor<3xf64>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK-NOT: iterator_types = ["reduction"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<2x3x5xf16>)
// CHECK: return
func.func @bn_backward(%g: tensor<2x3x5xf16>, %x: tensor<2x3x5xf16>, %m: tensor<3xf32>, %r: tensor<3xf32>) -> (tensor<2x3x5xf16>, tensor<3xf16>, tensor<3xf16>) {
  %0:3 = kt.batch_norm_backward %g, %x, %m, %r : (tensor<2x3x5xf16>, tensor<2x3x5xf16>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf16>, tensor<3xf16>, tensor<3xf16>)
  return %0#0, %0#1, %0#2 : tensor<2x3x5xf16>, tensor<3xf16>, tensor<3xf16>
}

// -----

// Tests kt.batch_norm_backward with a folded ReLU6: per channel, the
// interval [lo, hi] of x where 0 <= y <= 6 for y = x * s + t (s = invstd *
// weight, t = bias - mean * s; in f64, two [C] generics choosing the bound
// by the sign of s); the two-result reduction (one mask select feeding both
// sums) and the pointwise pass read grad_output through lo <= x <= hi (two
// compares and a select per element, extra [C] inputs lo, hi); no pass
// writes a masked gradient.
// CHECK-LABEL: func.func @bn_backward_relu6
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: -> tensor<3xf32>
// CHECK: arith.select
// CHECK: -> tensor<3xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%{{.*}}, %{{.*}} : tensor<3xf64>, tensor<3xf64>)
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf ole
// CHECK: arith.andi
// CHECK: arith.select
// CHECK-NOT: arith.select
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK-NOT: iterator_types = ["reduction"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK: arith.select
// CHECK: return
func.func @bn_backward_relu6(%g: tensor<2x3x5xf32>, %x: tensor<2x3x5xf32>, %m: tensor<3xf32>, %r: tensor<3xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = kt.batch_norm_backward %g, %x, %m, %r weight %w bias %b {activation = #kt.activation<relu6>} : (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests a folded ReLU without weight and bias: the strict mask lo < x < hi.
// CHECK-LABEL: func.func @bn_backward_relu
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%{{.*}}, %{{.*}} : tensor<3xf64>, tensor<3xf64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: return
func.func @bn_backward_relu(%g: tensor<?x3x5xf32>, %x: tensor<?x3x5xf32>, %m: tensor<3xf32>, %r: tensor<3xf32>) -> (tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = kt.batch_norm_backward %g, %x, %m, %r {activation = #kt.activation<relu>} : (tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>
}
