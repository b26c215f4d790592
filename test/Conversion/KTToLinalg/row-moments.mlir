// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=row-moments | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s --check-prefix=OFF
// RUN: not kiln-opt %s -kiln-lower-to-linalg=row-moments=maybe 2>&1 | FileCheck %s --check-prefix=BADOPT

// With row-moments (kiln-cpu sets it with fuse=true), layer_norm of an f32
// or f64 input that is a block argument takes its row count, mean and M2 in
// ONE generic with three f64 results (Welford's step: rowMomentsMerge of
// one element, its divide marked kiln.row_moments), so the row is read once
// for the statistics; the normalization reads the mean (rounded to the
// compute type) and M2 as before. An input computed in the same function (a
// prologue could be fused into the generic) and f16/bf16 keep the sum and
// the sum of squared deviations. Without the option nothing changes.
// BADOPT: for the --row-moments option: 'maybe' is invalid value for boolean argument

// Tests [N, C] f32 with weight and bias: one three-result reduction, no
// second reduction over x; rstd from M2; the mean truncated to f32.
// CHECK-LABEL: func.func @rows
// CHECK: %[[M:.+]]:3 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x100xf32>) outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
// CHECK: arith.extf {{.*}} : f32 to f64
// CHECK: arith.divf {{.*}} {kiln.row_moments} : f64
// CHECK: linalg.yield {{.*}} : f64, f64, f64
// CHECK: ins(%[[M]]#1 : tensor<8xf64>)
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: ins(%[[M]]#2 : tensor<8xf64>)
// CHECK: math.sqrt
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: return
// OFF-LABEL: func.func @rows
// OFF-NOT: kiln.row_moments
// OFF: iterator_types = ["parallel", "reduction"]
// OFF: iterator_types = ["parallel", "reduction"]
// OFF: return
func.func @rows(%x: tensor<8x100xf32>, %w: tensor<100xf32>, %b: tensor<100xf32>) -> tensor<8x100xf32> {
  %r = kt.layer_norm %x weight %w bias %b {normalized_shape = [100]} : (tensor<8x100xf32>, tensor<100xf32>, tensor<100xf32>) -> tensor<8x100xf32>
  return %r : tensor<8x100xf32>
}

// -----

// Tests two normalized dims of `?` size, f64 (no extf), and a rank-1 input
// (rank-0 statistics).
// CHECK-LABEL: func.func @two_dims_f64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.+}} : tensor<3x?x?xf64>) outs({{.*}} : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>)
// CHECK-NOT: arith.extf
// CHECK: arith.divf {{.*}} {kiln.row_moments} : f64
func.func @two_dims_f64(%x: tensor<3x?x?xf64>) -> tensor<3x?x?xf64> {
  %r = kt.layer_norm %x {normalized_shape = [5, 7]} : (tensor<3x?x?xf64>) -> tensor<3x?x?xf64>
  return %r : tensor<3x?x?xf64>
}
// CHECK-LABEL: func.func @one_row
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0 : tensor<4097xf32>) outs({{.*}} : tensor<f64>, tensor<f64>, tensor<f64>)
// CHECK: {kiln.row_moments}
func.func @one_row(%x: tensor<4097xf32>) -> tensor<4097xf32> {
  %r = kt.layer_norm %x {normalized_shape = [4097]} : (tensor<4097xf32>) -> tensor<4097xf32>
  return %r : tensor<4097xf32>
}

// -----

// Tests the forms that keep the two passes: an input computed in the same
// function, and f16.
// CHECK-LABEL: func.func @prologue
// CHECK-NOT: kiln.row_moments
// CHECK: return
// CHECK-LABEL: func.func @half
// CHECK-NOT: kiln.row_moments
// CHECK: return
func.func @prologue(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %p = kt.mul %x, %x : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32>
  %r = kt.layer_norm %p {normalized_shape = [100]} : (tensor<8x100xf32>) -> tensor<8x100xf32>
  return %r : tensor<8x100xf32>
}
func.func @half(%x: tensor<8x100xf16>) -> tensor<8x100xf16> {
  %r = kt.layer_norm %x {normalized_shape = [100]} : (tensor<8x100xf16>) -> tensor<8x100xf16>
  return %r : tensor<8x100xf16>
}
