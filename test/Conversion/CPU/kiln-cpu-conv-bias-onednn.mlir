// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s --check-prefix=MARK
// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu="conv=onednn threads=2" | FileCheck %s --check-prefix=FULL
// REQUIRES: onednn

// A oneDNN conv's bias: kiln-cpu-conv-im2col marks the linalg.generic that
// broadcasts the 1-D bias into the conv's output init (kiln.conv_bias);
// kiln-cpu-conv-to-onednn drops it and calls kiln_onednn_conv2d_bias_f32
// with the bias pointer, the four paddings (0 when the input is not padded
// in the call) and the bias stride: the output is written once.

// FULL: llvm.func @kiln_onednn_conv2d_bias_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// FULL-NOT: kiln.conv_bias

// 1x1, ungrouped, no padding: x 2x16x5x7, w 24x16x1x1, bias 24.
// MARK-LABEL: func.func @pointwise
// MARK: linalg.generic {{.*}}ins(%arg2 : tensor<24xf32>){{.*}}kiln.conv_bias
// MARK: linalg.conv_2d_nchw_fchw {{.*}}kiln.conv_impl = "onednn"
// CHECK-LABEL: func.func @pointwise(
// CHECK-SAME: %[[X:.*]]: memref<2x16x5x7xf32>, %[[W:.*]]: memref<24x16x1x1xf32>, %[[B:.*]]: memref<24xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// n 2 g 1 c 16 h 5 w 7; f 24 k 1x1; out 5x7; strides, dilations 1;
// x, w, y strides; pads 0 0 0 0; bias stride 1; threads 2
// CHECK: call @kiln_onednn_conv2d_bias_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c1_i64, %c16_i64, %c5_i64, %c7_i64, %c24_i64, %c1_i64, %c1_i64, %c5_i64, %c7_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c560_i64, %c0_i64, %c35_i64, %c7_i64, %c1_i64, %c0_i64, %c16_i64, %c1_i64, %c1_i64, %c1_i64, %c840_i64, %c0_i64, %c35_i64, %c7_i64, %c1_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c1_i64, %c2_i64) {kiln.conv_impl = "onednn"}
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pointwise(%x: tensor<2x16x5x7xf32>, %w: tensor<24x16x1x1xf32>, %b: tensor<24xf32>) -> tensor<2x24x5x7xf32> {
  %r = kt.conv2d %x, %w, %b : (tensor<2x16x5x7xf32>, tensor<24x16x1x1xf32>, tensor<24xf32>) -> tensor<2x24x5x7xf32>
  return %r : tensor<2x24x5x7xf32>
}

// Depthwise, stride 2, padded in the call, with a bias: both at once (the
// grouped form's output is the expand_shape of the broadcast's buffer).
// MARK-LABEL: func.func @dw
// MARK: linalg.fill {kiln.conv_pad}
// MARK: linalg.copy {kiln.conv_pad}
// MARK: linalg.generic {{.*}}kiln.conv_bias
// MARK: linalg.conv_2d_ngchw_gfchw
// CHECK-LABEL: func.func @dw(
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.generic
// CHECK: call @kiln_onednn_conv2d_bias_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c6_i64, %c1_i64, %c9_i64, %c11_i64, %c1_i64, %c3_i64, %c3_i64, %c5_i64, %c6_i64, %c2_i64, %c2_i64, %c1_i64, %c1_i64, %c594_i64, %c99_i64, %c99_i64, %c11_i64, %c1_i64, %c9_i64, %c9_i64, %c9_i64, %c3_i64, %c1_i64, %c180_i64, %c30_i64, %c30_i64, %c6_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c2_i64)
// CHECK: return
func.func @dw(%x: tensor<2x6x9x11xf32>, %w: tensor<6x1x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x5x6xf32> {
  %r = kt.conv2d %x, %w, %b {groups = 6 : i64, padding = [1, 1], stride = [2, 2]} : (tensor<2x6x9x11xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<2x6x5x6xf32>
  return %r : tensor<2x6x5x6xf32>
}

// Without a bias nothing is marked (the zero fill is dropped as before).
// MARK-LABEL: func.func @no_bias
// MARK-NOT: kiln.conv_bias
// MARK: return
// CHECK-LABEL: func.func @no_bias(
// CHECK: call @kiln_onednn_conv2d_f32(
func.func @no_bias(%x: tensor<2x16x5x7xf32>, %w: tensor<24x16x1x1xf32>) -> tensor<2x24x5x7xf32> {
  %r = kt.conv2d %x, %w : (tensor<2x16x5x7xf32>, tensor<24x16x1x1xf32>) -> tensor<2x24x5x7xf32>
  return %r : tensor<2x24x5x7xf32>
}

// f64 is never oneDNN: the broadcast stays unmarked.
// MARK-LABEL: func.func @f64
// MARK-NOT: kiln.conv_bias
// MARK: return
func.func @f64(%x: tensor<2x16x5x7xf64>, %w: tensor<24x16x1x1xf64>, %b: tensor<24xf64>) -> tensor<2x24x5x7xf64> {
  %r = kt.conv2d %x, %w, %b : (tensor<2x16x5x7xf64>, tensor<24x16x1x1xf64>, tensor<24xf64>) -> tensor<2x24x5x7xf64>
  return %r : tensor<2x24x5x7xf64>
}
