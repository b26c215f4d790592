// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s

// Tests that nll_loss (mean, weighted) is one parallel generic over the
// target reading the input and the weight at the target class (clamped into
// [0, C)), zeroing ignored elements, then one reduction into rank-0 f64
// accumulators and a division by the summed weight.
// A target outside [0, C) that is not ignored is reported at run time:
// the message template (location, {0} = target, {1} = C) is recorded on the
// module and the element calls the error function under scf.if.
// CHECK: module attributes {kiln.runtime_errors = ["{{.*}}loss.mlir:{{[0-9]+}}:8: target {0} is out of range [0, {1}) (ignore_index is -100)"]}
// CHECK: func.func private @kiln_cpu_runtime_error(i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @nll_mean_weighted
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK-SAME: ins(%{{.+}} : tensor<5xi64>)
// CHECK: %[[IGN:.+]] = arith.cmpi eq, %{{.+}}, %c-100_i64 : i64
// CHECK: %[[OK:.+]] = arith.andi
// CHECK: scf.if
// CHECK: func.call @kiln_cpu_runtime_error(%c0_i64{{.*}}, %{{.+}}, %{{.+}}, %c0_i64{{.*}}) : (i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK: %[[T:.+]] = arith.select %[[OK]], %{{.+}}, %c0 : index
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[T]]] : tensor<5x4xf32>
// CHECK: tensor.extract %{{.+}}[%[[T]]] : tensor<4xf32>
// CHECK: arith.select %[[IGN]]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK-SAME: outs(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>)
// CHECK: arith.divf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: tensor.from_elements {{.*}} : tensor<f32>
// CHECK-NOT: kt.
func.func @nll_mean_weighted(%x: tensor<5x4xf32>, %t: tensor<5xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %r = kt.nll_loss %x, %t, %w : (tensor<5x4xf32>, tensor<5xi64>, tensor<4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that cross_entropy with spatial dims reduces the class dim (dim 1,
// the last loop) for the max (maxnumf, in f32 for an f16 input) and the
// sum of exp (exp in f32, accumulated in f64), takes log(sum) once per
// element (row) in f64, reads log_softmax at the target as
// (x[t] - max) - lse in f64, and `none` keeps the target's shape.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[EL:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @ce_spatial_none
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[EL]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<2x5xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.maxnumf {{.*}} : f32
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[EL]], #[[EL]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<2x5xf64>)
// CHECK: %[[D:.+]] = arith.subf {{.*}} : f32
// CHECK: %[[E:.+]] = math.exp %[[D]] : f32
// CHECK: %[[EW:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK: arith.addf %{{.+}}, %[[EW]] : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.log {{.*}} : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: tensor.extract %{{.+}} : tensor<2x3x5xf16>
// CHECK: arith.subf {{.*}} : f64
// CHECK: arith.subf {{.*}} : f64
// CHECK: linalg.generic {{.*}}outs(%{{.+}} : tensor<2x5xf16>)
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK-NOT: math.exp {{.*}} : f64
func.func @ce_spatial_none(%x: tensor<2x3x5xf16>, %t: tensor<2x5xi32>) -> tensor<2x5xf16> {
  %r = kt.cross_entropy %x, %t {reduction = #kt.reduction<none>} : (tensor<2x3x5xf16>, tensor<2x5xi32>) -> tensor<2x5xf16>
  return %r : tensor<2x5xf16>
}

// -----

// Tests that label smoothing adds a (elements, class) reduction of
// -w[c] * logp[c] whose combiner is a plain f64 subtraction (no select on
// ignored elements: those are zeroed in the per-element generic, so that
// kiln-cpu tiles and vectorizes the reduction), and mixes (1 - ls) nll +
// ls / C smooth.
// CHECK-LABEL: func.func @ce_smoothing
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: math.exp {{.*}} : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK: math.log
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<4xf64>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f64, %{{.+}}: f32, %[[ACC:.+]]: f64):
// CHECK-NOT: arith.select
// CHECK: %[[NEXT:.+]] = arith.subf %[[ACC]], %{{.+}} : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK-SAME: outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: arith.constant 8.000000e-01 : f64
// CHECK: tensor.from_elements
func.func @ce_smoothing(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<3xf32>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t, %w {reduction = #kt.reduction<sum>, label_smoothing = 2.000000e-01 : f64} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that probability targets are read in the input's layout (one
// reduction of -t * logp after the max, the sum of exp and its log) and
// mean divides by the element count (NaN when C is 0).
// CHECK-LABEL: func.func @ce_prob_mean
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = []
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xf32>, tensor<f32>, tensor<f64>, tensor<3xf32>)
// CHECK: arith.cmpi eq
// CHECK: arith.constant 0x7FF8000000000000 : f64
// CHECK: arith.divf
func.func @ce_prob_mean(%x: tensor<3xf32>, %t: tensor<3xf32>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
