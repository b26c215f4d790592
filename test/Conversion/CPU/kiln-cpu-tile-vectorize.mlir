// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-vectorize="threads=2 vector-bits=256" | FileCheck %s

// Tests the thread and register tiles of kiln-cpu-tile-vectorize: a
// pointwise op gets an scf.forall of 2 threads over rows and 16-wide
// (2 x 256-bit) vector rows; a row reduction becomes a partial reduction
// into a 32-wide accumulator plus a merge; small ops stay on one thread.

// CHECK-LABEL: func.func @pointwise
// CHECK: scf.forall (%{{.*}}) = (0) to (512) step (256)
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %c16
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: math.exp {{.*}} : vector<1x16xf32>
// CHECK: vector.transfer_write
// CHECK: scf.forall.in_parallel
func.func @pointwise(%x: tensor<512x128xf32>) -> tensor<512x128xf32> {
  %e = tensor.empty() : tensor<512x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x128xf32>) outs(%e : tensor<512x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<512x128xf32>
  return %r : tensor<512x128xf32>
}

// -----

// CHECK-LABEL: func.func @row_sum
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: vector.transfer_write {{.*}} : vector<1x32xf32>, tensor<1x32xf32>
// CHECK: scf.for {{.*}} step %c32
// CHECK: arith.addf {{.*}} : vector<1x32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [1] : vector<1x32xf32> to vector<1xf32>
func.func @row_sum(%x: tensor<256x1000xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x1000xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

// Small ops run on one thread; a partial tail tile is masked.
// CHECK-LABEL: func.func @small_tail
// CHECK-NOT: scf.forall
// CHECK: vector.create_mask
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
func.func @small_tail(%x: tensor<3x37xf32>, %y: tensor<3x37xf32>) -> tensor<3x37xf32> {
  %e = tensor.empty() : tensor<3x37xf32>
  %r = linalg.add ins(%x, %y : tensor<3x37xf32>, tensor<3x37xf32>) outs(%e : tensor<3x37xf32>) -> tensor<3x37xf32>
  return %r : tensor<3x37xf32>
}

// -----

// A generated matmul: 8 x 16 x 1 register tiles, n loop outside m.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall
// CHECK: scf.for {{.*}} step %c16
// CHECK: scf.for {{.*}} step %c8
// CHECK: scf.for
// CHECK: vector.contract {{.*}} vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul {kiln.matmul_impl = "generated"} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// Matmuls marked openblas are left for kiln-matmul-to-blas.
// CHECK-LABEL: func.func @blas
// CHECK-NOT: scf.for
// CHECK: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @blas(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul {kiln.matmul_impl = "openblas"} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
