// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -canonicalize -cse | FileCheck %s

// Edge cases found by the CPU-backend sweep of the execution tests
// (test/lib/cpu_sweep.py); each one failed to compile, crashed or gave wrong
// values before; the execution tests of test/Execution/KT run them through
// the CPU backend.

// Tests that a `?` operand dim that is 1 at run time broadcasts: the result
// size is the other operand's dim when it is 1 (a select), and the operand
// is copied to the result's size under an scf.if only when it broadcasts.
// CHECK-LABEL: func.func @sub_dynamic
// CHECK-SAME: (%[[A:.+]]: tensor<?x?xf64> {{.*}}, %[[B:.+]]: tensor<?x3xf64>
// CHECK-DAG: %[[DA:.+]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[DB:.+]] = tensor.dim %[[B]], %c0
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[DA]], %c1
// CHECK: %[[N:.+]] = arith.select %[[ONE]], %[[DB]], %[[DA]] : index
// CHECK: %[[AB:.+]] = scf.if %{{.+}} -> (tensor<?x?xf64>) {
// CHECK: tensor.extract %[[A]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[A]]
// CHECK: %[[BB:.+]] = scf.if %{{.+}} -> (tensor<?x3xf64>) {
// CHECK: tensor.extract %[[B]]
// CHECK: scf.yield %[[B]]
// CHECK: tensor.empty(%[[N]]) : tensor<?x3xf64>
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[BB]] : tensor<?x3xf64>, tensor<?x3xf64>)
// CHECK: arith.subf
func.func @sub_dynamic(%a: tensor<?x?xf64>, %b: tensor<?x3xf64>) -> tensor<?x3xf64> {
  %r = kt.sub %a, %b : (tensor<?x?xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>
  return %r : tensor<?x3xf64>
}

// -----

// Tests that static operands and dims need no run-time broadcast.
// CHECK-LABEL: func.func @add_static
// CHECK-NOT: scf.if
// CHECK: linalg.generic
func.func @add_static(%a: tensor<4x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %r = kt.add %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Tests that expand of a `?` dim to a static size copies when it is 1, and
// that a size other than 1 and 5 is reported at run time (the operand is
// then a zero-filled tensor of the result's size).
// CHECK-LABEL: func.func @expand_dynamic
// CHECK: %[[D:.+]] = tensor.dim %{{.+}}, %c0 : tensor<?x3xi64>
// CHECK: %[[NE:.+]] = arith.cmpi ne, %[[D]], %c5
// CHECK: %[[NOT1:.+]] = arith.cmpi ne, %[[D]], %c1
// CHECK: %[[BAD:.+]] = arith.andi %[[NE]], %[[NOT1]]
// CHECK: scf.if %[[BAD]] {
// CHECK-NEXT: func.call @kiln_cpu_runtime_error
// CHECK: scf.if %[[NE]] -> (tensor<?x3xi64>)
// CHECK: scf.if %[[BAD]]
// CHECK: linalg.fill
// CHECK: } else {
// CHECK: tensor.empty() : tensor<5x3xi64>
func.func @expand_dynamic(%x: tensor<?x3xi64>) -> tensor<5x3xi64> {
  %r = kt.expand %x {size = [5, -1]} : (tensor<?x3xi64>) -> tensor<5x3xi64>
  return %r : tensor<5x3xi64>
}

// -----

// Tests that slices, pads and concats of statically empty tensors make an
// empty (or filled) tensor instead of extract/insert_slice at offsets the
// verifier rejects.
// CHECK-LABEL: func.func @slice_empty
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x0xf32>
// CHECK-NEXT: return %[[E]]
func.func @slice_empty(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {
  %r = kt.slice %x {dim = 1, start = 0, end = 2} : (tensor<4x0xf32>) -> tensor<4x0xf32>
  return %r : tensor<4x0xf32>
}

// CHECK-LABEL: func.func @select_empty
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<1x0xf32>
// CHECK-NEXT: tensor.collapse_shape %[[E]]
func.func @select_empty(%x: tensor<3x0xf32>) -> tensor<0xf32> {
  %r = kt.select %x {dim = 0, index = 1} : (tensor<3x0xf32>) -> tensor<0xf32>
  return %r : tensor<0xf32>
}

// Tests that slice_scatter / select_scatter into a statically empty self
// return self (no tensor.insert_slice: offset 0 into a 0-size dim did not
// verify, a make_fx circular pad of an empty batch on the cpu backend).
// CHECK-LABEL: func.func @slice_scatter_empty
// CHECK-SAME: (%[[X:.+]]: tensor<0x3x6xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[X]]
func.func @slice_scatter_empty(%x: tensor<0x3x6xf32>, %v: tensor<0x3x3xf32>) -> tensor<0x3x6xf32> {
  %r = kt.slice_scatter %x, %v {dim = 2, start = 1, end = 4} : (tensor<0x3x6xf32>, tensor<0x3x3xf32>) -> tensor<0x3x6xf32>
  return %r : tensor<0x3x6xf32>
}

// CHECK-LABEL: func.func @select_scatter_empty
// CHECK-SAME: (%[[X:.+]]: tensor<3x0x2xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[X]]
func.func @select_scatter_empty(%x: tensor<3x0x2xf32>, %v: tensor<0x2xf32>) -> tensor<3x0x2xf32> {
  %r = kt.select_scatter %x, %v {dim = 0, index = -1} : (tensor<3x0x2xf32>, tensor<0x2xf32>) -> tensor<3x0x2xf32>
  return %r : tensor<3x0x2xf32>
}

// CHECK-LABEL: func.func @pad_empty
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x5xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<1x5xf32>)
// CHECK-NEXT: return %[[F]]
func.func @pad_empty(%x: tensor<0x3xf32>) -> tensor<1x5xf32> {
  %r = kt.pad %x {pad = [1, 1, 1, 0]} : (tensor<0x3xf32>) -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// CHECK-LABEL: func.func @pad_crop_to_empty
// CHECK: tensor.empty() : tensor<2x3x0xf64>
// CHECK-NOT: tensor.extract_slice
func.func @pad_crop_to_empty(%x: tensor<2x3x4xf64>) -> tensor<2x3x0xf64> {
  %r = kt.pad %x {pad = [-4, 0]} : (tensor<2x3x4xf64>) -> tensor<2x3x0xf64>
  return %r : tensor<2x3x0xf64>
}

// CHECK-LABEL: func.func @concat_empty
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<0xf32>
// CHECK-NEXT: return %[[E]]
func.func @concat_empty(%a: tensor<0xf32>, %b: tensor<0xf32>) -> tensor<0xf32> {
  %r = kt.concat %a, %b : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
  return %r : tensor<0xf32>
}

// -----

// Tests that stack inserts operands with `?` dims at the result's static
// sizes.
// CHECK-LABEL: func.func @stack_dynamic
// CHECK: tensor.cast %{{.+}} : tensor<?x1x3xf64> to tensor<2x1x3xf64>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [2, 1, 3] [1, 1, 1]
// CHECK: tensor.cast %{{.+}} : tensor<2x1x?xf64> to tensor<2x1x3xf64>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 1, 0] [2, 1, 3] [1, 1, 1]
func.func @stack_dynamic(%a: tensor<?x3xf64>, %b: tensor<2x?xf64>) -> tensor<2x2x3xf64> {
  %r = kt.stack %a, %b {dim = 1} : (tensor<?x3xf64>, tensor<2x?xf64>) -> tensor<2x2x3xf64>
  return %r : tensor<2x2x3xf64>
}

// -----

// Tests that a batched matmul with `?` batch and M dims restores the batch
// with a copy at the linear index, not an expand_shape with two `?` dims in
// one group (which crashes expand-strided-metadata in MLIR 22).
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK: linalg.matmul
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[S:.+]] = arith.muli %[[I]], %{{.+}} : index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[L:.+]] = arith.addi %[[S]], %[[J]] : index
// CHECK: tensor.extract %{{.+}}[%[[L]], %{{.+}}] : tensor<?x?xf32>
func.func @matmul_dynamic(%a: tensor<?x?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %r = kt.matmul %a, %b : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// -----

// Tests that two `?` batch dims broadcast at run time (either may be 1).
// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK: %[[DA:.+]] = tensor.dim %{{.+}}, %c0 : tensor<?x2x3xf32>
// CHECK: %[[DB:.+]] = tensor.dim %{{.+}}, %c0 : tensor<?x3x5xf32>
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[DA]], %c1
// CHECK: arith.select %[[ONE]], %[[DB]], %[[DA]] : index
// CHECK: scf.if
// CHECK: scf.if
// CHECK: linalg.batch_matmul
func.func @matmul_batch_broadcast(%a: tensor<?x2x3xf32>, %b: tensor<?x3x5xf32>) -> tensor<?x2x5xf32> {
  %r = kt.matmul %a, %b : (tensor<?x2x3xf32>, tensor<?x3x5xf32>) -> tensor<?x2x5xf32>
  return %r : tensor<?x2x5xf32>
}
