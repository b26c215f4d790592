// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col=impl=im2col | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col=impl=direct | FileCheck %s --check-prefix=DIRECT
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col=onednn=false | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col=onednn=false -kiln-select-matmul | FileCheck %s --check-prefix=BLAS

// Tests kiln-cpu-conv-im2col: im2col rewrites a linalg conv (input already
// padded, init = bias or zeros) into an scf.for over the batch (and the
// groups) with a patch-copy generic (strides and dilations in its input map),
// a collapse to [C*KH*KW, OH*OW] and a plain linalg.matmul into the
// [F, OH*OW] slice of the collapsed init; direct keeps the conv, marked;
// auto without oneDNN (onednn=false; kiln-cpu-conv-to-onednn.mlir tests
// auto with it) follows chooseConvImpl (im2col once the GEMM is M, N, K >= 24; 1x1
// stride-1 kernels need no copy). kiln-select-matmul then gives the new
// matmul to OpenBLAS.

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3 * 2 + d1 * 2, d4 * 2 + d2 * 2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @stride2_dilation2
// CHECK-SAME: (%[[X:.*]]: tensor<3x32x21x21xf32>, %[[W:.*]]: tensor<64x32x3x3xf32>, %[[INIT:.*]]: tensor<3x64x9x9xf32>)
// CHECK-NOT: linalg.conv_2d
// CHECK: %[[ACC0:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0], [1], [2, 3]] : tensor<3x64x9x9xf32> into tensor<3x64x81xf32>
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<64x32x3x3xf32> into tensor<64x288xf32>
// CHECK: %[[LOOP:.*]] = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (tensor<3x64x81xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%[[N]], 0, 0, 0] [1, 32, 21, 21] [1, 1, 1, 1] : tensor<3x32x21x21xf32> to tensor<32x21x21xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<32x3x3x9x9xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<32x21x21xf32>) outs(%[[E]] : tensor<32x3x3x9x9xf32>) attrs = {kiln.conv_impl = "im2col"}
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1, 2], [3, 4]] : tensor<32x3x3x9x9xf32> into tensor<288x81xf32>
// CHECK: %[[O:.*]] = tensor.extract_slice %[[ACC]][%[[N]], 0, 0] [1, 64, 81] [1, 1, 1] : tensor<3x64x81xf32> to tensor<64x81xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[WM]], %[[COLS]] : tensor<64x288xf32>, tensor<288x81xf32>) outs(%[[O]] : tensor<64x81xf32>)
// CHECK: %[[U:.*]] = tensor.insert_slice %[[M]] into %[[ACC]][%[[N]], 0, 0] [1, 64, 81] [1, 1, 1]
// CHECK: scf.yield %[[U]]
// CHECK: } {kiln.conv_impl = "im2col"}
// CHECK: tensor.expand_shape %[[LOOP]] {{\[}}[0], [1], [2, 3]] output_shape [3, 64, 9, 9]
// DIRECT-LABEL: func.func @stride2_dilation2
// DIRECT-NOT: scf.for
// DIRECT: linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, kiln.conv_impl = "direct", strides = dense<2> : tensor<2xi64>}
// AUTO-LABEL: func.func @stride2_dilation2
// AUTO: scf.for
// AUTO: } {kiln.conv_impl = "im2col"}
// BLAS-LABEL: func.func @stride2_dilation2
// BLAS: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @stride2_dilation2(%x: tensor<3x32x21x21xf32>, %w: tensor<64x32x3x3xf32>, %init: tensor<3x64x9x9xf32>) -> tensor<3x64x9x9xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<3x32x21x21xf32>, tensor<64x32x3x3xf32>) outs(%init : tensor<3x64x9x9xf32>) -> tensor<3x64x9x9xf32>
  return %r : tensor<3x64x9x9xf32>
}

// -----

// Groups: a loop over the groups inside the batch loop; the weights of
// group g are a slice of the collapsed [G, F/G, C/G*KH*KW] weights.
// CHECK-DAG: #[[GIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d4 * 2 + d2)>
// CHECK-LABEL: func.func @groups
// CHECK-SAME: (%[[X:.*]]: tensor<2x2x16x10x13xf64>, %[[W:.*]]: tensor<2x24x16x3x3xf64>, %[[INIT:.*]]: tensor<2x2x24x8x6xf64>)
// CHECK: %[[ACC0:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0], [1], [2], [3, 4]] : tensor<2x2x24x8x6xf64> into tensor<2x2x24x48xf64>
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1], [2, 3, 4]] : tensor<2x24x16x3x3xf64> into tensor<2x24x144xf64>
// CHECK: scf.for %[[N:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]])
// CHECK: scf.for %[[G:.*]] = {{.*}} iter_args(%[[ACC2:.*]] = %[[ACC]])
// CHECK: tensor.extract_slice %[[X]][%[[N]], %[[G]], 0, 0, 0] [1, 1, 16, 10, 13] [1, 1, 1, 1, 1] : tensor<2x2x16x10x13xf64> to tensor<16x10x13xf64>
// CHECK: linalg.generic {indexing_maps = [#[[GIN]], #{{.*}}]{{.*}}outs(%{{.*}} : tensor<16x3x3x8x6xf64>) attrs = {kiln.conv_impl = "im2col"}
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4]] : tensor<16x3x3x8x6xf64> into tensor<144x48xf64>
// CHECK: %[[WG:.*]] = tensor.extract_slice %[[WM]][%[[G]], 0, 0] [1, 24, 144] [1, 1, 1] : tensor<2x24x144xf64> to tensor<24x144xf64>
// CHECK: %[[O:.*]] = tensor.extract_slice %[[ACC2]][%[[N]], %[[G]], 0, 0] [1, 1, 24, 48] [1, 1, 1, 1] : tensor<2x2x24x48xf64> to tensor<24x48xf64>
// CHECK: linalg.matmul ins(%[[WG]], %{{.*}} : tensor<24x144xf64>, tensor<144x48xf64>) outs(%[[O]] : tensor<24x48xf64>)
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC2]][%[[N]], %[[G]], 0, 0] [1, 1, 24, 48] [1, 1, 1, 1]
// CHECK: } {kiln.conv_impl = "im2col"}
// CHECK: } {kiln.conv_impl = "im2col"}
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 2, 24, 8, 6]
// DIRECT-LABEL: func.func @groups
// DIRECT: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "direct"
// AUTO-LABEL: func.func @groups
// AUTO: } {kiln.conv_impl = "im2col"}
// BLAS-LABEL: func.func @groups
// BLAS: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @groups(%x: tensor<2x2x16x10x13xf64>, %w: tensor<2x24x16x3x3xf64>, %init: tensor<2x2x24x8x6xf64>) -> tensor<2x2x24x8x6xf64> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>}
         ins(%x, %w : tensor<2x2x16x10x13xf64>, tensor<2x24x16x3x3xf64>) outs(%init : tensor<2x2x24x8x6xf64>) -> tensor<2x2x24x8x6xf64>
  return %r : tensor<2x2x24x8x6xf64>
}

// -----

// Depthwise (groups == C): auto keeps it direct (a 1-row GEMM per group).
// CHECK-LABEL: func.func @depthwise
// CHECK: } {kiln.conv_impl = "im2col"}
// AUTO-LABEL: func.func @depthwise
// AUTO-NOT: scf.for
// AUTO: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "direct"
func.func @depthwise(%x: tensor<1x8x1x9x9xf32>, %w: tensor<8x1x1x3x3xf32>, %init: tensor<1x8x1x7x7xf32>) -> tensor<1x8x1x7x7xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x8x1x9x9xf32>, tensor<8x1x1x3x3xf32>) outs(%init : tensor<1x8x1x7x7xf32>) -> tensor<1x8x1x7x7xf32>
  return %r : tensor<1x8x1x7x7xf32>
}

// -----

// 1x1 stride 1: no patch copy, the sample itself (collapsed) is the
// right-hand side; auto takes it from C = 8 on. `?` batch.
// CHECK-LABEL: func.func @pointwise_dynamic_batch
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x5x7xf32>
// CHECK: %[[NB:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8x5x7xf32>
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %[[NB]]
// CHECK-NOT: linalg.generic
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%[[N]], 0, 0, 0] [1, 8, 5, 7] [1, 1, 1, 1] : tensor<?x8x5x7xf32> to tensor<8x5x7xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<8x5x7xf32> into tensor<8x35xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[C]] : tensor<4x8xf32>, tensor<8x35xf32>)
// AUTO-LABEL: func.func @pointwise_dynamic_batch
// AUTO: } {kiln.conv_impl = "im2col"}
// BLAS-LABEL: func.func @pointwise_dynamic_batch
// BLAS: linalg.matmul {kiln.matmul_impl = "generated"}
func.func @pointwise_dynamic_batch(%x: tensor<?x8x5x7xf32>, %w: tensor<4x8x1x1xf32>, %init: tensor<?x4x5x7xf32>) -> tensor<?x4x5x7xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<?x8x5x7xf32>, tensor<4x8x1x1xf32>) outs(%init : tensor<?x4x5x7xf32>) -> tensor<?x4x5x7xf32>
  return %r : tensor<?x4x5x7xf32>
}

// -----

// A `?` width stays direct even with impl=im2col (see Im2col.cpp), as do
// integer convs (no attribute at all).
// CHECK-LABEL: func.func @dynamic_width
// CHECK-NOT: scf.for
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "direct"
func.func @dynamic_width(%x: tensor<1x32x9x?xf32>, %w: tensor<32x32x3x3xf32>, %init: tensor<1x32x7x?xf32>) -> tensor<1x32x7x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x32x9x?xf32>, tensor<32x32x3x3xf32>) outs(%init : tensor<1x32x7x?xf32>) -> tensor<1x32x7x?xf32>
  return %r : tensor<1x32x7x?xf32>
}

// CHECK-LABEL: func.func @integer
// CHECK-NOT: kiln.conv_impl
// CHECK: return
func.func @integer(%x: tensor<1x32x9x9xi32>, %w: tensor<32x32x3x3xi32>, %init: tensor<1x32x7x7xi32>) -> tensor<1x32x7x7xi32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x32x9x9xi32>, tensor<32x32x3x3xi32>) outs(%init : tensor<1x32x7x7xi32>) -> tensor<1x32x7x7xi32>
  return %r : tensor<1x32x7x7xi32>
}

// -----

// The zero padding feeding a conv (either implementation) becomes a fill of
// a fresh tensor + linalg.copy into its interior (vectorized and threaded
// later; a tensor.pad would bufferize to a scalar fill + memref.copy), and
// each conv gets its own zero-filled init (CSE would otherwise merge the
// two, and bufferization would copy one for the other).
// CHECK-LABEL: func.func @padded_pair
// CHECK-SAME: (%[[X:.*]]: tensor<2x32x7x7xf32>
// CHECK: %[[P:.*]] = bufferization.alloc_tensor() : tensor<2x32x9x9xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : tensor<2x32x9x9xf32>)
// CHECK: %[[W:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [2, 32, 7, 7] [1, 1, 1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<2x32x7x7xf32>) outs(%[[W]] : tensor<2x32x7x7xf32>)
// CHECK: tensor.insert_slice %[[C]] into %[[F]][0, 0, 1, 1] [2, 32, 7, 7] [1, 1, 1, 1]
// CHECK: %[[I1:.*]] = bufferization.alloc_tensor() : tensor<2x32x7x7xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[I1]] : tensor<2x32x7x7xf32>)
// CHECK: } {kiln.conv_impl = "im2col"}
// CHECK: bufferization.alloc_tensor() : tensor<2x32x9x9xf32>
// CHECK: linalg.copy
// CHECK: %[[I2:.*]] = bufferization.alloc_tensor() : tensor<2x32x7x7xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[I2]] : tensor<2x32x7x7xf32>)
// CHECK: } {kiln.conv_impl = "im2col"}
// CHECK-NOT: tensor.pad
// DIRECT-LABEL: func.func @padded_pair
// DIRECT-NOT: tensor.pad
// DIRECT: linalg.copy
// DIRECT: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "direct"
// DIRECT: linalg.copy
// DIRECT: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "direct"
func.func @padded_pair(%x: tensor<2x32x7x7xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<2x32x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x32x7x7xf32> to tensor<2x32x9x9xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%p, %w : tensor<2x32x9x9xf32>, tensor<32x32x3x3xf32>) outs(%init : tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32>
  %p2 = tensor.pad %c1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x32x7x7xf32> to tensor<2x32x9x9xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%p2, %w : tensor<2x32x9x9xf32>, tensor<32x32x3x3xf32>) outs(%init : tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32>
  return %c2 : tensor<2x32x7x7xf32>
}
