// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s

// Tests that a binary op broadcasts its lower-rank operand through the
// indexing map and that arguments become read-only buffers.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: {bufferization.writable = false}
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: outs(%[[E]] : tensor<2x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: kt.
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a static size-1 dim broadcasts by reading index 0.
// CHECK-DAG: #[[ZERO:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @mul_unit_dim
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[ZERO]], #{{.+}}]
// CHECK: arith.mulf
func.func @mul_unit_dim(%a: tensor<4x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = kt.mul %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that dynamic dims size the result with tensor.dim.
// CHECK-LABEL: func.func @exp_dynamic
// CHECK-SAME: (%[[A:.+]]: tensor<?x?xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[A]], %[[C0]]
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[A]], %[[C1]]
// CHECK: tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: math.exp
func.func @exp_dynamic(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.exp %a : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Tests that maximum propagates NaN (arith.maximumf) and bf16 computes in f32.
// CHECK-LABEL: func.func @maximum_bf16
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @maximum_bf16(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = kt.maximum %a, %b : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Tests that round is round-half-to-even.
// CHECK-LABEL: func.func @round_even
// CHECK: math.roundeven
func.func @round_even(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.round %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a sum with keepdim reduces into the kept dims (accumulating
// f32 in f64, rounded once) and re-inserts the unit dim with
// tensor.expand_shape.
// CHECK-LABEL: func.func @sum_keepdim
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%{{.+}} : tensor<2xf64>)
// CHECK: %[[S:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[Z]] : tensor<2xf64>)
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.addf %{{.+}} : f64
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[S]] : tensor<2xf64>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: tensor.expand_shape %[[R]] {{\[\[}}0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
func.func @sum_keepdim(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %0 = kt.sum %a {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Tests that an integer sum accumulates in i64.
// CHECK-LABEL: func.func @sum_i32
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: arith.addi %{{.+}} : i64
func.func @sum_i32(%a: tensor<5xi32>) -> tensor<i64> {
  %0 = kt.sum %a : (tensor<5xi32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that argmax carries a value and an index accumulator.
// CHECK-LABEL: func.func @argmax_dim
// CHECK: %{{.+}}:2 = linalg.generic
// CHECK: linalg.index 1
func.func @argmax_dim(%a: tensor<3x4xf32>) -> tensor<3xi64> {
  %0 = kt.argmax %a {dim = 1} : (tensor<3x4xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that a 2-D matmul is a zero-filled linalg.matmul.
// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[Z]] : tensor<3x5xf32>)
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = kt.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Tests that broadcast batch dims are materialized, collapsed and fed to
// linalg.batch_matmul.
// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK: tensor.collapse_shape {{.+}} : tensor<2x5x3x4xf32> into tensor<10x3x4xf32>
// CHECK: tensor.collapse_shape {{.+}} : tensor<2x5x4x6xf32> into tensor<10x4x6xf32>
// CHECK: linalg.batch_matmul
// CHECK: tensor.expand_shape {{.+}} : tensor<10x3x6xf32> into tensor<2x5x3x6xf32>
func.func @matmul_batch_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = kt.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// Tests that linear transposes the weight and accumulates onto the bias.
// CHECK-LABEL: func.func @linear_bias
// CHECK: linalg.transpose ins(%{{.+}} : tensor<5x4xf32>) outs(%{{.+}} : tensor<4x5xf32>) permutation = [1, 0]
// CHECK: %[[B:.+]] = linalg.generic
// CHECK: linalg.matmul ins({{.+}}) outs(%[[B]] : tensor<3x5xf32>)
func.func @linear_bias(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Tests that softmax is max, sum of exp (accumulated in f64), 1/sum once
// per row (rounded to f32), and a normalize that multiplies (no divide per
// element).
// CHECK-LABEL: func.func @softmax_last
// CHECK: linalg.generic {{.+}}["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.+}}["parallel", "reduction"]
// CHECK: math.exp %{{.+}} : f32
// CHECK: arith.addf %{{.+}} : f64
// CHECK: linalg.generic {{.+}}["parallel"]} ins(%{{.*}} : tensor<2xf64>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.divf %{{.+}} : f64
// CHECK: arith.truncf
// CHECK: linalg.generic {{.+}}["parallel", "parallel"]
// CHECK-NOT: arith.divf
// CHECK: math.exp
// CHECK-NEXT: arith.mulf
// CHECK-NOT: arith.divf
// CHECK: return
func.func @softmax_last(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kt.softmax %a {dim = -1} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests shape ops: reshape (collapse + expand), permute (linalg.transpose),
// slice (extract_slice with a stride), pad (tensor.pad).
// CHECK-LABEL: func.func @shape_ops
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<6x4xf32>) outs(%{{.+}} : tensor<4x6xf32>) permutation = [1, 0]
// CHECK: tensor.extract_slice %{{.+}}[0, 1] [4, 2] [1, 2] : tensor<4x6xf32> to tensor<4x2xf32>
// CHECK: tensor.pad %{{.+}} low[1, 0] high[0, 2]
func.func @shape_ops(%a: tensor<2x3x4xf32>) -> tensor<5x4xf32> {
  %0 = kt.reshape %a {shape = [6, 4]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kt.permute %0 {dims = [1, 0]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %2 = kt.slice %1 {dim = 1, start = 1, end = -1, step = 2} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %3 = kt.pad %2 {pad = [0, 2, 1, 0]} : (tensor<4x2xf32>) -> tensor<5x4xf32>
  return %3 : tensor<5x4xf32>
}

// -----

// Tests that concat inserts each operand into one tensor.empty.
// CHECK-LABEL: func.func @concat_dim1
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x5xf32>
// CHECK: %[[I:.+]] = tensor.insert_slice %{{.+}} into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.+}} into %[[I]][0, 3] [2, 2] [1, 1]
func.func @concat_dim1(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %0 = kt.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that integer division checks the divisor at run time (the message is
// the interpreter's) and floating division does not.
// CHECK: module attributes {kiln.runtime_errors = ["{{.*}}kiln-lower-to-linalg.mlir:{{[0-9]+}}:8: integer division by zero"]}
// CHECK-LABEL: func.func @div_int_checked
// CHECK: linalg.generic
// CHECK: %[[Z:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK: scf.if %[[Z]] {
// CHECK: func.call @kiln_cpu_runtime_error
// CHECK: arith.divsi
// CHECK: linalg.generic
// CHECK-NOT: scf.if
// CHECK: arith.divf
func.func @div_int_checked(%x: tensor<4xi32>, %y: tensor<4xi32>, %f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>) {
  %r = kt.div %x, %y {rounding_mode = #kt.rounding_mode<trunc>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %q = kt.div %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r, %q : tensor<4xi32>, tensor<4xf32>
}

// -----

// Tests kt.reshape with size operands (-2 entries): the input collapsed to
// 1-D, its element count checked at run time against the sizes' product,
// and expanded with the size operands as the `?` output sizes (one `?`
// dim: tensor.expand_shape; several: tensor.reshape with a shape tensor,
// as memref.expand_shape into several `?` dims crashes MLIR 22's
// expand-strided-metadata).
// CHECK-LABEL: func.func @reshape_sizes
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>
// CHECK: %[[B:.+]] = tensor.dim %[[X]], %c0 : tensor<?x?x8xf32>
// CHECK: %[[T:.+]] = tensor.dim %[[X]], %c1 : tensor<?x?x8xf32>
// CHECK: tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<?x?x8xf32> into tensor<?xf32>
// CHECK: arith.remui
// CHECK: scf.if
// CHECK: call @kiln_cpu_runtime_error
// CHECK: %[[S:.+]] = tensor.from_elements %[[B]], %[[T]], %{{.+}}, %{{.+}} : tensor<4xindex>
// CHECK: tensor.reshape %{{.+}}(%[[S]]) : (tensor<?xf32>, tensor<4xindex>) -> tensor<?x?x2x4xf32>
// CHECK-LABEL: func.func @reshape_one_size
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [%{{.+}}, 8] : tensor<?xf32> into tensor<?x8xf32>
func.func @reshape_sizes(%x: tensor<?x?x8xf32>) -> tensor<?x?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %0 = kt.reshape %x, %b, %t {shape = [-2, -2, 2, -1]} : (tensor<?x?x8xf32>, index, index) -> tensor<?x?x2x4xf32>
  return %0 : tensor<?x?x2x4xf32>
}
func.func @reshape_one_size(%x: tensor<?x?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %bt = arith.muli %b, %t : index
  %0 = kt.reshape %x, %bt {shape = [-2, 8]} : (tensor<?x?x8xf32>, index) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// kt.slice with a dynamic end (x[:, :t] with t = y.size(0)): the operand is
// normalized at run time (t < 0 counts from the end, clamp to [0, 6]) and
// the window is a tensor.extract_slice with a dynamic size (0 and offset 0
// when end <= start).
// CHECK-LABEL: func.func @slice_dynamic_end
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3x6xf32>
// CHECK: %[[T:.*]] = tensor.dim
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[T]], %{{.*}} : index
// CHECK: %[[WRAP:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[T]] : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[SEL]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: %[[LEN:.*]] = arith.ceildivsi
// CHECK: %[[POS:.*]] = arith.cmpi sgt, %[[END]]
// CHECK: %[[SIZE:.*]] = arith.select %[[POS]], %[[LEN]]
// CHECK: %[[OFF:.*]] = arith.select %[[POS]]
// CHECK: tensor.extract_slice %[[X]][0, %[[OFF]]] [3, %[[SIZE]]] [1, 1] : tensor<3x6xf32> to tensor<3x?xf32>
func.func @slice_dynamic_end(%x: tensor<3x6xf32>, %y: tensor<?xf32>) -> tensor<3x?xf32> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %y, %c0 : tensor<?xf32>
  %0 = kt.slice %x, %t {dim = 1, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}

// -----

// Both bounds dynamic, a step, a dynamic source dim: each operand normalized
// against tensor.dim of the source.
// CHECK-LABEL: func.func @slice_dynamic_both
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c1
// CHECK: arith.addi %{{.*}}, %[[N]] : index
// CHECK: arith.minsi %{{.*}}, %[[N]] : index
// CHECK: arith.addi %{{.*}}, %[[N]] : index
// CHECK: arith.minsi %{{.*}}, %[[N]] : index
// CHECK: tensor.extract_slice %[[X]][0, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 2] : tensor<?x?xf32> to tensor<?x?xf32>
func.func @slice_dynamic_both(%x: tensor<?x?xf32>, %s: index, %e: index) -> tensor<?x?xf32> {
  %0 = kt.slice %x, %s, %e {dim = 1, dynamic_start, dynamic_end, step = 2} : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// kt.slice_scatter with a dynamic start: the same window (normalized
// operand), src checked against it at run time, then tensor.insert_slice.
// CHECK-LABEL: func.func @slice_scatter_dynamic_start
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3x6xf32> {{.*}}%[[S:[a-z0-9]+]]: index
// CHECK: arith.cmpi slt, %[[S]]
// CHECK: arith.addi %[[S]]
// CHECK: scf.if
// CHECK: tensor.insert_slice %{{.*}} into %[[X]][0, %{{.*}}] [3, %{{.*}}] [1, 1] : tensor<3x?xf32> into tensor<3x6xf32>
func.func @slice_scatter_dynamic_start(%x: tensor<3x6xf32>, %v: tensor<3x?xf32>, %s: index) -> tensor<3x6xf32> {
  %0 = kt.slice_scatter %x, %v, %s {dim = 1, dynamic_start} : (tensor<3x6xf32>, tensor<3x?xf32>, index) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}
