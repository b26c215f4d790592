// RUN: kiln-opt %s -kiln-select-matmul | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s -kiln-select-matmul=impl=generated | FileCheck %s --check-prefix=GEN
// RUN: kiln-opt %s -kiln-select-matmul=impl=openblas | FileCheck %s --check-prefix=BLAS

// Tests the matmul implementation attribute: auto picks generated code for
// tiny products (M * N * K < 8192, static) and OpenBLAS for all others
// (a dynamic dim counts as large; a thin product with M < 24 too);
// impl= forces one; integer matmuls get no attribute (always generated).

// AUTO-LABEL: func.func @big
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas"}
// GEN: linalg.matmul {kiln.matmul_impl = "generated"}
// BLAS: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @big(%a: tensor<256x512xf32>, %b: tensor<512x128xf32>, %c: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x128xf32>) outs(%c : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}

// AUTO-LABEL: func.func @small
// AUTO: linalg.batch_matmul {kiln.matmul_impl = "generated"}
// BLAS-LABEL: func.func @small
// BLAS: linalg.batch_matmul {kiln.matmul_impl = "openblas"}
func.func @small(%a: tensor<4x8x16xf64>, %b: tensor<4x16x8xf64>, %c: tensor<4x8x8xf64>) -> tensor<4x8x8xf64> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf64>, tensor<4x16x8xf64>) outs(%c : tensor<4x8x8xf64>) -> tensor<4x8x8xf64>
  return %r : tensor<4x8x8xf64>
}

// A classifier at batch 8: M = 8 but N * K large (OpenBLAS was 8x faster
// than the generated kernel). Just under and at the tiny bound.
// AUTO-LABEL: func.func @thin
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @thin(%a: tensor<8x1280xf32>, %b: tensor<1280x1000xf32>, %c: tensor<8x1000xf32>) -> tensor<8x1000xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x1280xf32>, tensor<1280x1000xf32>) outs(%c : tensor<8x1000xf32>) -> tensor<8x1000xf32>
  return %r : tensor<8x1000xf32>
}
// AUTO-LABEL: func.func @under_bound
// AUTO: linalg.matmul {kiln.matmul_impl = "generated"}
func.func @under_bound(%a: tensor<4x2047xf32>, %b: tensor<2047x1xf32>, %c: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x2047xf32>, tensor<2047x1xf32>) outs(%c : tensor<4x1xf32>) -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}
// AUTO-LABEL: func.func @at_bound
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @at_bound(%a: tensor<4x2048xf32>, %b: tensor<2048x1xf32>, %c: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x2048xf32>, tensor<2048x1xf32>) outs(%c : tensor<4x1xf32>) -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}

// AUTO-LABEL: func.func @dynamic
// AUTO: kiln.matmul_impl = "openblas"
func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// AUTO-LABEL: func.func @integer
// AUTO-NOT: kiln.matmul_impl
// AUTO: return
func.func @integer(%a: tensor<64x64xi64>, %b: tensor<64x64xi64>, %c: tensor<64x64xi64>) -> tensor<64x64xi64> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xi64>, tensor<64x64xi64>) outs(%c : tensor<64x64xi64>) -> tensor<64x64xi64>
  return %r : tensor<64x64xi64>
}

// Contractions in other GEMM forms. A linalg.transpose of the last two dims
// feeding a product that goes to OpenBLAS is read directly (the product
// becomes a generic with the swapped map: cblas's transpose flag), and a
// zero fill of C is dropped for beta = 0 (kiln.matmul_zero_init).

#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// AUTO-LABEL: func.func @linear_weight
// AUTO-SAME: (%[[X:.*]]: tensor<256x512xf32>, %[[W:.*]]: tensor<128x512xf32>, %[[C:.*]]: tensor<256x128xf32>)
// AUTO: linalg.generic {indexing_maps = [#{{.*}}, #[[NK:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<256x512xf32>, tensor<128x512xf32>) outs(%[[C]] : tensor<256x128xf32>) attrs = {kiln.matmul_impl = "openblas"}
// AUTO-NOT: kiln.matmul_zero_init
// GEN-LABEL: func.func @linear_weight
// GEN: linalg.transpose
// GEN: linalg.matmul {kiln.matmul_impl = "generated"}
func.func @linear_weight(%x: tensor<256x512xf32>, %w: tensor<128x512xf32>, %c: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %e = tensor.empty() : tensor<512x128xf32>
  %wt = linalg.transpose ins(%w : tensor<128x512xf32>) outs(%e : tensor<512x128xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<256x512xf32>, tensor<512x128xf32>) outs(%c : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}

// AUTO-LABEL: func.func @zero_init
// AUTO: %[[E:.*]] = tensor.empty() : tensor<64x64xf64>
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas", kiln.matmul_zero_init} ins({{.*}}) outs(%[[E]] : tensor<64x64xf64>)
// GEN-LABEL: func.func @zero_init
// GEN: linalg.fill
// GEN-NOT: kiln.matmul_zero_init
// GEN: return
func.func @zero_init(%a: tensor<64x32xf64>, %b: tensor<32x64xf64>) -> tensor<64x64xf64> {
  %cst = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64x64xf64>
  %f = linalg.fill ins(%cst : f64) outs(%e : tensor<64x64xf64>) -> tensor<64x64xf64>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf64>, tensor<32x64xf64>) outs(%f : tensor<64x64xf64>) -> tensor<64x64xf64>
  return %r : tensor<64x64xf64>
}

// A fill of another value stays (beta = 1).
// AUTO-LABEL: func.func @one_init
// AUTO: linalg.fill
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @one_init(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// A generic contraction with A stored [K, M] and B stored [N, K].
// AUTO-LABEL: func.func @generic_transposed
// AUTO: linalg.generic {{.*}} attrs = {kiln.matmul_impl = "openblas"}
// BLAS-LABEL: func.func @generic_transposed
// BLAS: kiln.matmul_impl = "openblas"
func.func @generic_transposed(%a: tensor<32x48xf32>, %b: tensor<40x32xf32>, %c: tensor<48x40xf32>) -> tensor<48x40xf32> {
  %r = linalg.generic {indexing_maps = [#km, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<32x48xf32>, tensor<40x32xf32>) outs(%c : tensor<48x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<48x40xf32>
  return %r : tensor<48x40xf32>
}

// Small generic contractions that stay generated keep the generic tiling
// path: no attribute. Bodies other than multiply-add, and two batch dims,
// are not GEMMs.
// AUTO-LABEL: func.func @not_gemm
// AUTO-NOT: kiln.matmul_impl
// AUTO: return
// BLAS-LABEL: func.func @not_gemm
// BLAS-NOT: kiln.matmul_impl
// BLAS: return
func.func @not_gemm(%a: tensor<32x48xf32>, %b: tensor<48x40xf32>, %c: tensor<32x40xf32>,
                    %x: tensor<2x3x8x8xf32>, %y: tensor<2x3x8x8xf32>, %z: tensor<2x3x8x8xf32>) -> (tensor<32x40xf32>, tensor<2x3x8x8xf32>) {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<32x48xf32>, tensor<48x40xf32>) outs(%c : tensor<32x40xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.maximumf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<32x40xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                         affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>,
                                         affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>) outs(%z : tensor<2x3x8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8x8xf32>
  return %r, %r2 : tensor<32x40xf32>, tensor<2x3x8x8xf32>
}

// A 4-D product's transposed operand reaches batch_matmul through a
// collapse of its batch dims (attention's backward, P^T dO): the transpose is
// read through the collapse of its input with the swapped map.
// AUTO-LABEL: func.func @collapsed_batch_transpose
// AUTO-SAME: (%[[P:.*]]: tensor<2x3x40x40xf32>, %[[D:.*]]: tensor<2x3x40x32xf32>)
// AUTO: %[[PC:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x40x40xf32> into tensor<6x40x40xf32>
// AUTO: %[[DC:.*]] = tensor.collapse_shape %[[D]]
// AUTO: linalg.generic {indexing_maps = [#[[KM3:.*]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PC]], %[[DC]] : tensor<6x40x40xf32>, tensor<6x40x32xf32>) outs({{.*}}) attrs = {kiln.matmul_impl = "openblas", kiln.matmul_zero_init}
// GEN-LABEL: func.func @collapsed_batch_transpose
// GEN: linalg.transpose
// GEN: linalg.batch_matmul {kiln.matmul_impl = "generated"}
func.func @collapsed_batch_transpose(%p: tensor<2x3x40x40xf32>, %d: tensor<2x3x40x32xf32>) -> tensor<6x40x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x40x40xf32>
  %pt = linalg.transpose ins(%p : tensor<2x3x40x40xf32>) outs(%e : tensor<2x3x40x40xf32>) permutation = [0, 1, 3, 2]
  %a = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<2x3x40x40xf32> into tensor<6x40x40xf32>
  %b = tensor.collapse_shape %d [[0, 1], [2], [3]] : tensor<2x3x40x32xf32> into tensor<6x40x32xf32>
  %c0 = tensor.empty() : tensor<6x40x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%c0 : tensor<6x40x32xf32>) -> tensor<6x40x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<6x40x40xf32>, tensor<6x40x32xf32>) outs(%c : tensor<6x40x32xf32>) -> tensor<6x40x32xf32>
  return %r : tensor<6x40x32xf32>
}

// A collapse that merges one of the last two dims is not a batch collapse:
// the transpose stays.
// AUTO-LABEL: func.func @collapse_merges_rows
// AUTO: linalg.transpose
// AUTO: tensor.collapse_shape
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @collapse_merges_rows(%p: tensor<2x40x30xf32>, %d: tensor<40x32xf32>) -> tensor<60x32xf32> {
  %e = tensor.empty() : tensor<2x30x40xf32>
  %pt = linalg.transpose ins(%p : tensor<2x40x30xf32>) outs(%e : tensor<2x30x40xf32>) permutation = [0, 2, 1]
  %a = tensor.collapse_shape %pt [[0, 1], [2]] : tensor<2x30x40xf32> into tensor<60x40xf32>
  %c = tensor.empty() : tensor<60x32xf32>
  %r = linalg.matmul ins(%a, %d : tensor<60x40xf32>, tensor<40x32xf32>) outs(%c : tensor<60x32xf32>) -> tensor<60x32xf32>
  return %r : tensor<60x32xf32>
}
