// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-vectorize="threads=2 vector-bits=256" | FileCheck %s

// Tests kiln-cpu-tile-vectorize on linalg.generics whose iterator types
// disagree with their output maps (normalizeOutputs): results over
// different dims in one generic (a rank-0 sum next to a [C] sum, row and
// column sums), one output keeping a dim marked "reduction". Independent
// results become one generic each, with iterator types read off the
// output's map, and take the usual paths; results that read each other's
// accumulator stay one scalar generic. Before, upstream's vectorizer made
// invalid IR ('vector.multi_reduction' op destination type 'vector<1xf32>'
// is incompatible with source type 'vector<1x1xf32>'; a kept "reduction"
// dim: 'vector.transfer_read' op requires a permutation_map with input
// dims of the same rank as the source type).

// The rank-0 sum: the whole input collapsed, 32-lane partial sums, one
// merge; the [C] sum: rows of 16 columns added into the accumulator row.
// CHECK-LABEL: func.func @scalar_and_columns
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
// CHECK: scf.for {{.*}} step %c32 iter_args(%{{.*}} = %{{.*}}) -> (tensor<32xf32>)
// CHECK: arith.addf {{.*}} : vector<32xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [0] : vector<32xf32> to f32
// CHECK: scf.for {{.*}} step %c1
// CHECK: scf.for {{.*}} step %c16
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [0] : vector<1x16xf32> to vector<16xf32>
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>
func.func @scalar_and_columns(%x: tensor<64x32xf32>, %i0: tensor<f32>, %i1: tensor<32xf32>) -> (tensor<f32>, tensor<32xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #all, #col], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%i0, %i1 : tensor<f32>, tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %v = arith.addf %o, %a : f32
    %v2 = arith.addf %p, %a : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<f32>, tensor<32xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<32xf32>
}

// -----

// Row sums of x and column sums of x * y: threads over the rows for the
// first (row reductions, 32 lanes), threads over the columns for the
// second (only the product in its body).
// CHECK-LABEL: func.func @rows_and_columns
// CHECK: scf.forall (%{{.*}}) = (0) to (256) step (128) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<256xf32>)
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<1x32xf32> to vector<1xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (1000) step (500) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1000xf32>)
// CHECK-NOT: arith.addf {{.*}} : vector<1x
// CHECK: arith.mulf {{.*}} : vector<1x16xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [0] : vector<1x16xf32> to vector<16xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @rows_and_columns(%x: tensor<256x1000xf32>, %y: tensor<256x1000xf32>, %i0: tensor<256xf32>, %i1: tensor<1000xf32>) -> (tensor<256xf32>, tensor<1000xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : tensor<256x1000xf32>, tensor<256x1000xf32>) outs(%i0, %i1 : tensor<256xf32>, tensor<1000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %p: f32):
    %v = arith.addf %o, %a : f32
    %m = arith.mulf %a, %b : f32
    %v2 = arith.addf %p, %m : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<256xf32>, tensor<1000xf32>)
  return %r#0, %r#1 : tensor<256xf32>, tensor<1000xf32>
}

// -----

// One result keeping a dim marked "reduction": relabeled parallel.
// CHECK-LABEL: func.func @kept_reduction
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [0] : vector<1x16xf32> to vector<16xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @kept_reduction(%x: tensor<64x32xf32>, %i: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%i : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %o, %a : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// The second result adds the first's accumulator: not split, not tiled,
// not vectorized (scalar loops later).
// CHECK-LABEL: func.func @dependent
// CHECK-NOT: vector.
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.yield
#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>
func.func @dependent(%x: tensor<64x32xf32>, %i0: tensor<f32>, %i1: tensor<32xf32>) -> (tensor<f32>, tensor<32xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #all, #col], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%i0, %i1 : tensor<f32>, tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %v = arith.addf %o, %a : f32
    %v2 = arith.addf %p, %o : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<f32>, tensor<32xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<32xf32>
}
