// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -canonicalize | FileCheck %s

// Tests max_pool2d_backward with a static H and W: the argmax is one
// all-parallel generic over the output reading the kH * kW strided window
// slices of the -inf padded input (marked kiln.scalar_loops: width stride
// 2) and writing the argmax's offset in its window (i8, kh * kW + kw), and
// the gradient is written by stride phases: one all-parallel generic per
// (row, column) phase over unit-stride slices of the padded gradient and
// offsets (-1 padding), in place into a stride-2 slice of gx, adding the
// gradient where the offset is the (kh, kw) that reaches the position.
// 3x3 s2 p1 on 7x8: rows 0, 2, .. are reached by kh 1 only, rows 1, 3, ..
// by kh 0 (output row a + 1) and kh 2 (output row a), in that order.

// CHECK-LABEL: func.func @phases
// CHECK-DAG: %[[K4:.*]] = arith.constant 4 : i8
// CHECK-DAG: %[[K8:.*]] = arith.constant 8 : i8
// CHECK-DAG: %[[NONE:.*]] = arith.constant -1 : i8
// CHECK: %[[XP:.*]] = tensor.pad %arg1 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.extract_slice %[[XP]][0, 0, 0, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[XP]][0, 0, 2, 2] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: %[[IDX:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: attrs = {kiln.scalar_loops}
// CHECK: arith.select %{{.*}}, %[[K8]], %{{.*}} : i8
// CHECK: -> tensor<2x3x4x4xi8>
// CHECK: %[[GP:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 0, 1]
// CHECK: %[[IP:.*]] = tensor.pad %[[IDX]] low[0, 0, 0, 0] high[0, 0, 0, 1]
// CHECK: tensor.yield %[[NONE]] : i8
// CHECK: %[[GX:.*]] = tensor.empty() : tensor<2x3x7x8xf32>
// CHECK: %[[D0:.*]] = tensor.extract_slice %[[GX]][0, 0, 0, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: %[[P0:.*]] = linalg.generic {{.*}} outs(%[[D0]] :
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %{{.*}}, %[[K4]] : i8
// CHECK: arith.select %[[HIT]]
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[P0]] into %[[GX]][0, 0, 0, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[GP]][0, 0, 1, 0] [2, 3, 3, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[IP]][0, 0, 1, 0] [2, 3, 3, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[GP]][0, 0, 0, 0] [2, 3, 3, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[IP]][0, 0, 0, 0] [2, 3, 3, 4] [1, 1, 1, 1]
// CHECK: tensor.insert_slice {{.*}}[0, 0, 1, 0] [2, 3, 3, 4] [1, 1, 2, 2]
// CHECK: tensor.insert_slice {{.*}}[0, 0, 1, 1] [2, 3, 3, 4] [1, 1, 2, 2]
// CHECK-NOT: tensor.extract %
// CHECK: return
func.func @phases(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x7x8xf32>) -> tensor<2x3x7x8xf32> {
  %r = kt.max_pool2d_backward %g, %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<2x3x4x4xf32>, tensor<2x3x7x8xf32>) -> tensor<2x3x7x8xf32>
  return %r : tensor<2x3x7x8xf32>
}

// -----

// Kernel 1, stride 2: odd rows and columns are reached by no window and
// are filled with 0.

// CHECK-LABEL: func.func @unreached
// CHECK: %[[GX:.*]] = tensor.empty() : tensor<1x1x5x5xf32>
// CHECK: linalg.generic
// CHECK: %[[Z:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 1] [1, 1, 3, 2] [1, 1, 2, 2]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] :
func.func @unreached(%g: tensor<1x1x3x3xf32>, %x: tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32> {
  %r = kt.max_pool2d_backward %g, %x {kernel_size = [1, 1], stride = [2, 2]} : (tensor<1x1x3x3xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  return %r : tensor<1x1x5x5xf32>
}

// -----

// A `?` H or W keeps the reduction generics (argmax over the window dims,
// a gather with tensor.extract).

// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.generic {{.*}}"reduction", "reduction"]
// CHECK: tensor.extract %
func.func @dynamic(%g: tensor<1x1x?x?xf32>, %x: tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32> {
  %r = kt.max_pool2d_backward %g, %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x1x?x?xf32>, tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32>
  return %r : tensor<1x1x?x?xf32>
}
