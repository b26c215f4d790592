// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s --check-prefix=LOWER
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize | FileCheck %s --check-prefix=SCATTER
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s --check-prefix=CALL
// RUN: kiln-opt %s -split-input-file -kiln-cpu='conv=onednn threads=2' | FileCheck %s --check-prefix=FULL
// RUN: kiln-opt %s -split-input-file -kiln-cpu='conv=direct threads=2' | FileCheck %s --check-prefix=DIRECT
// REQUIRES: onednn

// kt.conv_transpose2d (conv2d's input gradient) whole on oneDNN
// (lib/Conversion/CPU/OneDNNConvBackward.cpp): the lowering marks its
// stride-1 conv with the transposed conv's parameters (kiln.conv_transpose
// = [sh, sw, ph, pw, oph, opw]); where kiln-cpu-conv-im2col picks oneDNN
// the conv becomes the scatter generic on x and w as they are (no
// interleave, no flip), cropped by the padding, and after bufferization a
// call of kiln_onednn_conv_transpose2d_f32 (backward-data primitive), or
// of kiln_onednn_conv_transpose2d_crop_f32 on the crop's own buffer where
// the full buffer is only read through the crop's copy (static shapes):
// the primitive takes the crop as its padding.
// A depthwise one (one input channel per group) gets the same marker on
// its grouped conv and becomes kiln_onednn_dw_conv_transpose2d_f32
// (libkiln_onednn's own loops). Other conv choices, other grouped convs
// and a bias keep the stride-1 conv.

// LOWER-LABEL: func.func @strided
// LOWER: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_transpose = array<i64: 2, 2, 1, 1, 1, 1>, strides = dense<1> : tensor<2xi64>}
// SCATTER-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3, d4)>
// SCATTER-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d2, d1, d5, d6)>
// SCATTER-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3 * 2 + d5, d4 * 2 + d6)>
// SCATTER-LABEL: func.func @strided
// SCATTER-SAME: (%[[XA:[^:]*]]: tensor<2x16x7x7xf32> {{.*}}, %[[WA:[^:]*]]: tensor<16x8x3x3xf32>
// SCATTER-NOT: tensor.insert_slice
// SCATTER: %[[F:.*]] = linalg.fill {{.*}} -> tensor<2x8x15x15xf32>
// SCATTER: %[[G:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "reduction"]} ins(%[[XA]], %[[WA]] : tensor<2x16x7x7xf32>, tensor<16x8x3x3xf32>) outs(%[[F]] : tensor<2x8x15x15xf32>) attrs = {kiln.conv_impl = "onednn", kiln.conv_transpose_scatter = array<i64: 2, 2, 1, 1>}
// SCATTER: tensor.extract_slice %[[G]][0, 0, 1, 1] [2, 8, 14, 14] [1, 1, 1, 1]
// SCATTER-NOT: linalg.conv_2d
// CALL: func.func private @kiln_onednn_conv_transpose2d_crop_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CALL-LABEL: func.func @strided
// CALL-NOT: linalg.conv_2d
// CALL-NOT: memref.copy
// CALL-NOT: memref.alloc() {{.*}} : memref<2x8x15x15xf32>
// CALL: %[[Y:.*]] = memref.alloc() {{.*}} : memref<2x8x14x14xf32>
// CALL-NOT: memref.copy
// x n ci oh ow, w co kh kw, the crop's h w, strides 2 2, dilations 1 1,
// ..., the crop's offsets 1 1, accumulate 0 (the zero fill is dropped),
// threads 2
// CALL: call @kiln_onednn_conv_transpose2d_crop_f32({{.*}}, %c2_i64, %c16_i64, %c7_i64, %c7_i64, %c8_i64, %c3_i64, %c3_i64, %c14_i64, %c14_i64, %c2_i64, %c2_i64, %c1_i64, %c1_i64, {{.*}}, %c1_i64, %c1_i64, %c0_i64, %c2_i64) {kiln.conv_impl = "onednn"}
// CALL-NOT: memref.copy
// CALL: return %[[Y]]
// FULL: llvm.call @kiln_onednn_conv_transpose2d_crop_f32
// DIRECT-NOT: kiln_onednn_conv_transpose2d
func.func @strided(%x: tensor<2x16x7x7xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x8x14x14xf32> {
  %0 = kt.conv_transpose2d %x, %w {stride = [2, 2], padding = [1, 1], output_padding = [1, 1]} : (tensor<2x16x7x7xf32>, tensor<16x8x3x3xf32>) -> tensor<2x8x14x14xf32>
  return %0 : tensor<2x8x14x14xf32>
}

// -----

// Dilation 2, stride 3, output_padding past the padding: the buffer
// extends past the windows' reach (rows of zeros); a dynamic batch.
// SCATTER-DAG: #[[Y2:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3 * 3 + d5 * 2, d4 * 3 + d6 * 2)>
// SCATTER-LABEL: func.func @dilated_dynamic
// SCATTER: tensor.dim
// SCATTER: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[Y2]]]
// SCATTER-SAME: kiln.conv_transpose_scatter = array<i64: 3, 3, 2, 2>
// SCATTER: tensor.extract_slice {{.*}}[0, 0, 0, 0] [%{{.*}}, 3, 11, 11] [1, 1, 1, 1]
// (A `?` batch: the full buffer is kept, and the result a view of it.)
// CALL-LABEL: func.func @dilated_dynamic
// CALL: call @kiln_onednn_conv_transpose2d_f32(
// CALL: memref.subview %{{.*}}[0, 0, 0, 0] [%{{.*}}, 3, 11, 11]
func.func @dilated_dynamic(%x: tensor<?x4x3x3xf32>, %w: tensor<4x3x2x2xf32>) -> tensor<?x3x11x11xf32> {
  %0 = kt.conv_transpose2d %x, %w {stride = [3, 3], output_padding = [2, 2], dilation = [2, 2]} : (tensor<?x4x3x3xf32>, tensor<4x3x2x2xf32>) -> tensor<?x3x11x11xf32>
  return %0 : tensor<?x3x11x11xf32>
}

// -----

// A bias (the conv's init is not zeros), groups, f64: the stride-1 conv
// stays (with a bias: the bias entry, kiln-cpu-conv-bias-onednn.mlir).
// SCATTER-LABEL: func.func @bias
// SCATTER: linalg.conv_2d_nchw_fchw {{.*}}kiln.conv_impl = "onednn"
// SCATTER-NOT: kiln.conv_transpose_scatter
// CALL-LABEL: func.func @bias
// CALL-NOT: kiln_onednn_conv_transpose2d_f32
// CALL: call @kiln_onednn_conv2d_bias_f32
func.func @bias(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x11x11xf32> {
  %0 = kt.conv_transpose2d %x, %w, %b {stride = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x11x11xf32>
  return %0 : tensor<1x3x11x11xf32>
}

// -----

// LOWER-LABEL: func.func @groups
// LOWER-NOT: kiln.conv_transpose =
// CALL-LABEL: func.func @groups
// CALL-NOT: kiln_onednn_conv_transpose2d_f32
func.func @groups(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x11x11xf32> {
  %0 = kt.conv_transpose2d %x, %w {stride = [2, 2], groups = 2} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x11x11xf32>
  return %0 : tensor<1x6x11x11xf32>
}

// -----

// Depthwise (one input channel per group; a depthwise conv's input
// gradient): marked on the grouped conv, its scatter form writes channel
// g * F + f (here F = 2) of a 4-D buffer, cropped, then a call of
// kiln_onednn_dw_conv_transpose2d_f32 (libkiln_onednn's own loops) on the
// crop's buffer: no interleaved copy, no flip, no grouped conv.
// LOWER-LABEL: func.func @depthwise
// LOWER: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_transpose = array<i64: 2, 2, 1, 1, 1, 1>, strides = dense<1> : tensor<2xi64>}
// SCATTER-DAG: #[[DX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3, d4)>
// SCATTER-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)>
// SCATTER-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d2, d3 * 2 + d5, d4 * 2 + d6)>
// SCATTER-LABEL: func.func @depthwise
// SCATTER-SAME: (%[[DXA:[^:]*]]: tensor<2x5x7x7xf32> {{.*}}, %[[DWA:[^:]*]]: tensor<5x2x3x3xf32>
// SCATTER-NOT: tensor.insert_slice
// SCATTER: %[[DF:.*]] = linalg.fill {{.*}} -> tensor<2x10x15x15xf32>
// SCATTER: linalg.generic {indexing_maps = [#[[DX]], #[[DW]], #[[DY]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[DXA]], %[[DWA]] : tensor<2x5x7x7xf32>, tensor<5x2x3x3xf32>) outs(%[[DF]] : tensor<2x10x15x15xf32>) attrs = {kiln.conv_impl = "onednn", kiln.conv_transpose_scatter = array<i64: 2, 2, 1, 1, 5>}
// SCATTER: tensor.extract_slice {{.*}}[0, 0, 1, 1] [2, 10, 14, 14] [1, 1, 1, 1]
// SCATTER-NOT: linalg.conv_2d
// CALL: func.func private @kiln_onednn_dw_conv_transpose2d_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CALL-LABEL: func.func @depthwise
// CALL-NOT: linalg.conv_2d
// CALL-NOT: memref<2x10x15x15xf32>
// CALL: %[[DY2:.*]] = memref.alloc() {{.*}} : memref<2x10x14x14xf32>
// x n g oh ow, w f kh kw, the crop's h w, strides 2 2, dilations 1 1,
// ..., the crop's offsets 1 1, accumulate 0, threads 2
// CALL: call @kiln_onednn_dw_conv_transpose2d_f32({{.*}}, %c2_i64, %c5_i64, %c7_i64, %c7_i64, %c2_i64, %c3_i64, %c3_i64, %c14_i64, %c14_i64, %c2_i64, %c2_i64, %c1_i64, %c1_i64, {{.*}}, %c1_i64, %c1_i64, %c0_i64, %c2_i64) {kiln.conv_impl = "onednn"}
// CALL-NOT: memref.copy
// CALL: return %[[DY2]]
// FULL-LABEL: llvm.func @depthwise
// FULL: llvm.call @kiln_onednn_dw_conv_transpose2d_f32
// DIRECT-LABEL: llvm.func @depthwise
// DIRECT-NOT: kiln_onednn_dw_conv_transpose2d
func.func @depthwise(%x: tensor<2x5x7x7xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<2x10x14x14xf32> {
  %0 = kt.conv_transpose2d %x, %w {stride = [2, 2], padding = [1, 1], output_padding = [1, 1], groups = 5} : (tensor<2x5x7x7xf32>, tensor<5x2x3x3xf32>) -> tensor<2x10x14x14xf32>
  return %0 : tensor<2x10x14x14xf32>
}

// -----

// Depthwise with a `?` batch and no padding: the full buffer is the
// result (no crop), the call's crop offsets are 0 0.
// SCATTER-LABEL: func.func @depthwise_dynamic
// SCATTER: tensor.dim
// SCATTER: linalg.generic
// SCATTER-SAME: kiln.conv_transpose_scatter = array<i64: 2, 2, 1, 1, 3>
// CALL-LABEL: func.func @depthwise_dynamic
// CALL-NOT: linalg.conv_2d
// CALL: call @kiln_onednn_dw_conv_transpose2d_f32({{.*}}, %c0_i64, %c0_i64, %c0_i64, %c2_i64)
func.func @depthwise_dynamic(%x: tensor<?x3x6x6xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<?x3x13x13xf32> {
  %0 = kt.conv_transpose2d %x, %w {stride = [2, 2], groups = 3} : (tensor<?x3x6x6xf32>, tensor<3x1x3x3xf32>) -> tensor<?x3x13x13xf32>
  return %0 : tensor<?x3x13x13xf32>
}

// -----

// Not depthwise (two input channels per group, a multiplier-2 conv's input
// gradient) or with a bias: the stride-1 grouped conv stays.
// LOWER-LABEL: func.func @grouped_two_per_group
// LOWER-NOT: kiln.conv_transpose =
// SCATTER-LABEL: func.func @grouped_two_per_group
// SCATTER: linalg.conv_2d_ngchw_gfchw
// CALL-LABEL: func.func @grouped_two_per_group
// CALL-NOT: kiln_onednn_dw_conv_transpose2d_f32
func.func @grouped_two_per_group(%x: tensor<1x4x5x5xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x2x11x11xf32> {
  %0 = kt.conv_transpose2d %x, %w {stride = [2, 2], groups = 2} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x2x11x11xf32>
  return %0 : tensor<1x2x11x11xf32>
}

// -----

// LOWER-LABEL: func.func @depthwise_bias
// SCATTER-LABEL: func.func @depthwise_bias
// SCATTER: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_transpose =
// CALL-LABEL: func.func @depthwise_bias
// CALL-NOT: kiln_onednn_dw_conv_transpose2d_f32
func.func @depthwise_bias(%x: tensor<1x4x5x5xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x11x11xf32> {
  %0 = kt.conv_transpose2d %x, %w, %b {stride = [2, 2], groups = 4} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x11x11xf32>
  return %0 : tensor<1x4x11x11xf32>
}

// -----

// LOWER-LABEL: func.func @f64
// SCATTER-LABEL: func.func @f64
// SCATTER-NOT: kiln.conv_transpose_scatter
// CALL-LABEL: func.func @f64
// CALL-NOT: kiln_onednn_conv_transpose2d_f32
func.func @f64(%x: tensor<1x4x5x5xf64>, %w: tensor<4x3x3x3xf64>) -> tensor<1x3x11x11xf64> {
  %0 = kt.conv_transpose2d %x, %w {stride = [2, 2]} : (tensor<1x4x5x5xf64>, tensor<4x3x3x3xf64>) -> tensor<1x3x11x11xf64>
  return %0 : tensor<1x3x11x11xf64>
}
