// RUN: kiln-opt %s -kiln-cpu-tile-vectorize="threads=1 vector-bits=256" 2>&1 | FileCheck %s

// Tests that a row reduction whose combiner has no neutral element (acc - x)
// is left scalar without a diagnostic: upstream's partial-reduction tiling
// used to be tried and printed "error: 'linalg.generic' op Failed to get an
// identity value for the reduction operation" although the pass succeeds.
// CHECK-NOT: error
// CHECK-LABEL: func.func @sub_combiner
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK-NOT: vector.
// CHECK-NOT: error
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sub_combiner(%x: tensor<4x100xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %acc, %in : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
