// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-vectorize="threads=2 vector-bits=256" 2>&1 | FileCheck %s

// Tests kiln-cpu-tile-vectorize's reduction fast path on linalg.generics
// with several reduction results over one iteration space
// (takesReductionPath): each result gets its own accumulator in the same
// loops (one read of the inputs), cascaded (widenedSumTerms /
// splitWidenedSum) or partial-reduced and merged per result; combiners
// without a neutral element or results that read each other's
// accumulator stay on the pointwise path (tiled, no vector reduction).

// batch_norm_backward's two sums over [N, C, HW] (dims 0 and 2 reduced):
// threads over C, then per channel cascade blocks of 256 f32 elements,
// each block two 32-lane f32 partial sums (one loop reads x and y once),
// each merged across lanes, widened and added into its own f64 accumulator.
// CHECK-LABEL: func.func @two_widened_sums
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<16xf64>, tensor<16xf64>)
// CHECK: scf.for {{.*}} step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<8xf64>, tensor<8xf64>)
// CHECK: scf.for {{.*}} step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1xf64>, tensor<1xf64>)
// CHECK: scf.for {{.*}} step %c256 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1xf64>, tensor<1xf64>)
// CHECK: scf.for {{.*}} step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x1x32xf32>, tensor<1x1x32xf32>)
// CHECK: vector.create_mask
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : tensor<1x1x?xf32>, vector<1x1x32xf32>
// CHECK: %[[Y:.*]] = vector.transfer_read {{.*}} : tensor<1x1x?xf32>, vector<1x1x32xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : vector<1x1x32xf32>
// CHECK-DAG: arith.addf %{{.*}}, %[[X]] : vector<1x1x32xf32>
// CHECK-DAG: arith.addf %{{.*}}, %[[P]] : vector<1x1x32xf32>
// CHECK: scf.yield
// CHECK: vector.multi_reduction <add>, {{.*}} [1, 2] : vector<1x1x32xf32> to vector<1xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [1, 2] : vector<1x1x32xf32> to vector<1xf32>
// CHECK: arith.extf {{.*}} : vector<1xf32> to vector<1xf64>
// CHECK: arith.addf {{.*}} : vector<1xf64>
// CHECK: arith.extf {{.*}} : vector<1xf32> to vector<1xf64>
// CHECK: arith.addf {{.*}} : vector<1xf64>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice
// CHECK-NEXT: tensor.parallel_insert_slice
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d1)>
func.func @two_widened_sums(%x: tensor<8x16x3001xf32>, %y: tensor<8x16x3001xf32>) -> (tensor<16xf64>, tensor<16xf64>) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<16xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<16xf64>) -> tensor<16xf64>
  %e2 = tensor.empty() : tensor<16xf64>
  %f2 = linalg.fill ins(%z : f64) outs(%e2 : tensor<16xf64>) -> tensor<16xf64>
  %r:2 = linalg.generic {indexing_maps = [#id3, #id3, #ch3, #ch3], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x, %y : tensor<8x16x3001xf32>, tensor<8x16x3001xf32>) outs(%f, %f2 : tensor<16xf64>, tensor<16xf64>) {
  ^bb0(%a: f32, %b: f32, %o: f64, %p: f64):
    %w = arith.extf %a : f32 to f64
    %v = arith.addf %o, %w : f64
    %m = arith.mulf %a, %b : f32
    %w2 = arith.extf %m : f32 to f64
    %v2 = arith.addf %w2, %p : f64
    linalg.yield %v, %v2 : f64, f64
  } -> (tensor<16xf64>, tensor<16xf64>)
  return %r#0, %r#1 : tensor<16xf64>, tensor<16xf64>
}

// -----

// Two f32 results with different known combiners (a sum and a max): no
// cascade (no widening), one partial reduction of 32 lanes per result in
// one loop, each merged with its own combiner (add from 0, max from -inf).
// CHECK-LABEL: func.func @sum_and_max
// CHECK: arith.constant dense<0xFF800000> : vector<1x32xf32>
// CHECK: scf.forall
// CHECK: scf.for {{.*}} step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x32xf32>, tensor<1x32xf32>)
// CHECK: arith.addf {{.*}} : vector<1x32xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [1] : vector<1x32xf32> to vector<1xf32>
// CHECK: vector.multi_reduction <maximumf>, {{.*}} [1] : vector<1x32xf32> to vector<1xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_and_max(%x: tensor<64x1000xf32>, %i0: tensor<64xf32>, %i1: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xf32>) outs(%i0, %i1 : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %v = arith.addf %o, %a : f32
    %v2 = arith.maximumf %p, %a : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<64xf32>, tensor<64xf32>)
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Refused: a combiner without a neutral element (acc - x) in one result.
// The op is tiled like a pointwise op (the innermost parallel dim in steps
// of 2 registers) and its reductions are not vectorized; no diagnostic.
// CHECK-NOT: error
// CHECK-LABEL: func.func @sum_and_sub
// CHECK-NOT: vector.multi_reduction
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK-NOT: vector.multi_reduction
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_and_sub(%x: tensor<4x100xf32>, %i0: tensor<4xf32>, %i1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%i0, %i1 : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %v = arith.addf %o, %a : f32
    %v2 = arith.subf %p, %a : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Refused: the second result reads the first's accumulator (a sum of
// prefix sums), so the two are not independent reductions; partial sums
// per lane would change its value.
// CHECK-LABEL: func.func @prefix_sums
// CHECK-NOT: vector.multi_reduction
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: vector.multi_reduction
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @prefix_sums(%x: tensor<4x100xf32>, %i0: tensor<4xf32>, %i1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%i0, %i1 : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %v = arith.addf %o, %a : f32
    %v2 = arith.addf %p, %o : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Refused: a loop-invariant term (a count, cross_entropy's mean over
// probability targets): upstream's vectorizer adds it once per vector, not
// once per lane (the count of 5 came out 1). Takes the pointwise path: one
// element per step, the count's add scalar, no 5-lane vector.
// CHECK-LABEL: func.func @sum_and_count
// CHECK-NOT: vector<5xf64>
// CHECK: scf.for %{{.*}} = %c0 to %c5 step %c1
// CHECK: arith.addf %{{.*}}, %{{.*}} : f64
// CHECK-NOT: vector<5xf64>
// CHECK: return
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @sum_and_count(%x: tensor<5xf64>, %i0: tensor<f64>, %i1: tensor<f64>) -> (tensor<f64>, tensor<f64>) {
  %one = arith.constant 1.0 : f64
  %r:2 = linalg.generic {indexing_maps = [#v, #s, #s], iterator_types = ["reduction"]}
      ins(%x : tensor<5xf64>) outs(%i0, %i1 : tensor<f64>, tensor<f64>) {
  ^bb0(%a: f64, %o: f64, %p: f64):
    %v = arith.addf %o, %a : f64
    %v2 = arith.addf %p, %one : f64
    linalg.yield %v, %v2 : f64, f64
  } -> (tensor<f64>, tensor<f64>)
  return %r#0, %r#1 : tensor<f64>, tensor<f64>
}
