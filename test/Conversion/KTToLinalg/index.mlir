// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s

// Tests that stack gives each operand a unit dim and inserts it at its
// position along the new dim.
// CHECK-LABEL: func.func @stack_dim1
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x2x3xf32>
// CHECK: %[[A:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [2, 1, 3]
// CHECK: %[[S0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0, 0] [2, 1, 3] [1, 1, 1]
// CHECK: %[[B:.+]] = tensor.expand_shape
// CHECK: tensor.insert_slice %[[B]] into %[[S0]][0, 1, 0] [2, 1, 3] [1, 1, 1]
// CHECK-NOT: kt.
func.func @stack_dim1(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  %r = kt.stack %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %r : tensor<2x2x3xf32>
}

// -----

// Tests that gather iterates over the index and reads self at the converted
// index along `dim`.
// CHECK-LABEL: func.func @gather_dim1
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {{.*}}, %[[I:.+]]: tensor<2x5xi64>
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<2x5xi64>) outs(%{{.+}} : tensor<2x5xf32>)
// CHECK: %[[C:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[R:.+]] = linalg.index 0 : index
// An index outside [0, 3) is reported (kiln.runtime_errors) and gives 0
// without reading %x.
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[C]], %{{.+}} : index
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[C]], %{{.+}} : index
// CHECK: %[[BAD:.+]] = arith.ori %[[LT]], %[[GE]] : i1
// CHECK: scf.if %[[BAD]] {
// CHECK: func.call @kiln_cpu_runtime_error
// CHECK: scf.if %[[BAD]] -> (f32) {
// CHECK: scf.yield %{{.+}} : f32
// CHECK: } else {
// CHECK: tensor.extract %[[X]][%[[R]], %[[C]]] : tensor<2x3xf32>
func.func @gather_dim1(%x: tensor<2x3xf32>, %i: tensor<2x5xi64>) -> tensor<2x5xf32> {
  %r = kt.gather %x, %i {dim = 1} : (tensor<2x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// Tests that index_select reads the i32 index through the map of `dim`.
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @index_select_i32
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32> {{.*}}, %[[I:.+]]: tensor<5xi32>
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.+}}]{{.*}} ins(%[[I]] : tensor<5xi32>)
// CHECK: %[[C:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: tensor.extract %[[X]][%[[C]], %[[J]]]
func.func @index_select_i32(%x: tensor<4x3xf32>, %i: tensor<5xi32>) -> tensor<5x3xf32> {
  %r = kt.index_select %x, %i {dim = 0} : (tensor<4x3xf32>, tensor<5xi32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

// Tests that embedding reads a row of the weight per index.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[W:.+]]: tensor<10x4xf32> {{.*}}, %[[I:.+]]: tensor<2x3xi64>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.+}}]
// CHECK: %[[C:.+]] = arith.index_cast
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: tensor.extract %[[W]][%[[C]], %[[J]]] : tensor<10x4xf32>
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %r = kt.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}
