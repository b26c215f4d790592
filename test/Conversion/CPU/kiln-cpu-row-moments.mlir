// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=row-moments -kiln-cpu-tile-vectorize="threads=1 vector-bits=512" 2>&1 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=row-moments -kiln-cpu-tile-vectorize="threads=1 vector-bits=256" 2>&1 | FileCheck %s --check-prefix=AVX2

// layer_norm's one-read row statistics (the three-result generic that
// kiln-lower-to-linalg{row-moments} makes, its divide marked
// kiln.row_moments) become vector loops (OnlineRowStats.cpp,
// lowerRowMoments): per row, blocks of 16 vector steps of 4 registers;
// per block a shift (fma of x and 1/nb: the block's mean, the row's only
// read from memory), then the sums of d = x - shift and d * d (the block
// again, from L1, while the next row's lines of the same columns are
// prefetched), added across the lanes in f64 and merged into the row's
// (count, mean, M2) in f64; a partial last block with its whole steps and
// one masked step (pass a padded with 0, pass b with the shift: d = 0). A marked generic of another
// shape (f16, a fused prologue) is left as it is, without a diagnostic.

// Tests f32 rows of `?` length: 64 lanes at 512 bits (32 at 256), the two
// passes per block, no divide per element, the f64 merge; the partial block.
// CHECK-LABEL: func.func @rows
// CHECK: %[[BUF:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<16x?xf32> to memref<16x?xf32, strided<[?, ?], offset: ?>>
// CHECK: scf.for %[[R:.+]] = %c0 to %c16 step %c1 iter_args({{.*}}) -> (tensor<16xf64>, tensor<16xf64>, tensor<16xf64>)
// CHECK: %[[NEXT:.+]] = arith.minui %{{.+}}, %c15 : index
// CHECK: scf.for %[[J0:.+]] = %c0 to %{{.+}} step %c1024 iter_args({{.*}}) -> (f64, f64, f64)
// CHECK: scf.for %[[J:.+]] = %[[J0]] to %{{.+}} step %c64 iter_args({{.*}}) -> (vector<64xf32>)
// CHECK-NEXT: vector.transfer_read %{{.+}}[%[[R]], %[[J]]]{{.*}} {in_bounds = [true]} : tensor<16x?xf32>, vector<64xf32>
// CHECK-NEXT: math.fma {{.*}} : vector<64xf32>
// CHECK: %[[C:.+]] = vector.reduction <add>, %{{.+}} : vector<64xf32> into f32
// CHECK: scf.for %[[J2:.+]] = %[[J0]] to %{{.+}} step %c64 iter_args({{.*}}) -> (vector<64xf32>, vector<64xf32>)
// The next row's four cache lines of this step, prefetched from L1 time.
// CHECK-NEXT: memref.prefetch %[[BUF]][%[[NEXT]], %[[J2]]], read, locality<3>, data
// CHECK: memref.prefetch %[[BUF]][%[[NEXT]], %{{.+}}], read, locality<3>, data
// CHECK: memref.prefetch %[[BUF]][%[[NEXT]], %{{.+}}], read, locality<3>, data
// CHECK: memref.prefetch %[[BUF]][%[[NEXT]], %{{.+}}], read, locality<3>, data
// CHECK-NEXT: vector.transfer_read %{{.+}}[%[[R]], %[[J2]]], %[[C]] {in_bounds = [true]}
// CHECK-NEXT: arith.subf {{.*}} : vector<64xf32>
// CHECK-NEXT: arith.addf {{.*}} : vector<64xf32>
// CHECK-NEXT: math.fma {{.*}} : vector<64xf32>
// CHECK-NOT: arith.divf {{.*}} : vector
// CHECK: arith.extf {{.*}} : vector<64xf32> to vector<64xf64>
// CHECK: vector.reduction <add>, %{{.+}} : vector<64xf64> into f64
// CHECK: arith.maximumf {{.*}} : f64
// CHECK: scf.yield {{.*}} : f64, f64, f64
// The partial last block: its whole steps unmasked, then one masked step
// (pass a padded with 0, pass b with its shift; the masked step's
// prefetches clamped to the row).
// CHECK: scf.if %{{.+}} -> (f64, f64, f64)
// CHECK: %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<64xi1>
// CHECK: scf.for %[[JA:.+]] = %{{.+}} to %[[JEND:.+]] step %c64
// CHECK-NEXT: vector.transfer_read %{{.+}}[%[[R]], %[[JA]]], %cst{{.*}} {in_bounds = [true]}
// CHECK: vector.transfer_read %{{.+}}[%[[R]], %[[JEND]]], %cst{{.*}}, %[[MASK]] {in_bounds = [true]}
// CHECK: %[[C2:.+]] = vector.reduction <add>, %{{.+}} : vector<64xf32> into f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[JEND]] step %c64
// CHECK: vector.transfer_read %{{.+}}, %[[C2]] {in_bounds = [true]}
// CHECK: arith.minui
// CHECK: memref.prefetch
// CHECK: vector.transfer_read %{{.+}}[%[[R]], %[[JEND]]], %[[C2]], %[[MASK]] {in_bounds = [true]}
// CHECK: tensor.insert
// CHECK: tensor.insert
// CHECK: tensor.insert
// CHECK-NOT: kiln.row_moments
// AVX2-LABEL: func.func @rows
// AVX2: step %c512
// AVX2: vector.transfer_read {{.*}} : tensor<16x?xf32>, vector<32xf32>
func.func @rows(%x: tensor<16x?xf32>) -> tensor<16x?xf32> {
  %r = kt.layer_norm %x {normalized_shape = [1100]} : (tensor<16x?xf32>) -> tensor<16x?xf32>
  return %r : tensor<16x?xf32>
}

// -----

// Tests f64 (32 lanes, no widening of the lane sums) and one row (rank-0
// statistics, no row loop, no next row to prefetch).
// CHECK-LABEL: func.func @one_row_f64
// CHECK-NOT: memref.prefetch
// CHECK-NOT: scf.for {{.*}} step %c1 iter_args
// CHECK: scf.for {{.*}} step %c512 iter_args({{.*}}) -> (f64, f64, f64)
// CHECK: vector.transfer_read {{.*}} : tensor<4097xf64>, vector<32xf64>
// CHECK-NOT: kiln.row_moments
func.func @one_row_f64(%x: tensor<4097xf64>) -> tensor<4097xf64> {
  %r = kt.layer_norm %x {normalized_shape = [4097]} : (tensor<4097xf64>) -> tensor<4097xf64>
  return %r : tensor<4097xf64>
}

// -----

// Tests that a marked generic with a fused prologue (x * x read in the
// body) is left as it is (a scalar loop), without a diagnostic.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @prologue
// CHECK: linalg.generic
// CHECK: {kiln.row_moments}
func.func @prologue(%x: tensor<16x100xf32>, %n: tensor<16xf64>, %m: tensor<16xf64>, %q: tensor<16xf64>) -> (tensor<16xf64>, tensor<16xf64>, tensor<16xf64>) {
  %one = arith.constant 1.0 : f64
  %r:3 = linalg.generic {indexing_maps = [#id, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x100xf32>) outs(%n, %m, %q : tensor<16xf64>, tensor<16xf64>, tensor<16xf64>) {
  ^bb0(%in: f32, %no: f64, %mo: f64, %qo: f64):
    %sq = arith.mulf %in, %in : f32
    %v = arith.extf %sq : f32 to f64
    %n2 = arith.addf %no, %one : f64
    %f = arith.divf %one, %n2 {kiln.row_moments} : f64
    %d = arith.subf %v, %mo : f64
    %df = arith.mulf %d, %f : f64
    %m2 = arith.addf %mo, %df : f64
    %w = arith.mulf %no, %f : f64
    %dw = arith.mulf %d, %w : f64
    %ddw = arith.mulf %d, %dw : f64
    %q2 = arith.addf %qo, %ddw : f64
    linalg.yield %n2, %m2, %q2 : f64, f64, f64
  } -> (tensor<16xf64>, tensor<16xf64>, tensor<16xf64>)
  return %r#0, %r#1, %r#2 : tensor<16xf64>, tensor<16xf64>, tensor<16xf64>
}
