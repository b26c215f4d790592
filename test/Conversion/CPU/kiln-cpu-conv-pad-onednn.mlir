// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s --check-prefix=MARK
// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu="conv=onednn threads=2" | FileCheck %s --check-prefix=FULL
// REQUIRES: onednn

// In-kernel padding of oneDNN convs: kiln-cpu-conv-im2col marks the zero
// fill + interior copy that pad an f32 conv's input (kiln.conv_pad) where
// the call can pad itself (zero padding of H and W only, static H and W);
// kiln-cpu-conv-to-onednn then calls
// kiln_onednn_conv2d_pad_f32 on the unpadded input with the four paddings
// and erases the fill, the copy and the padded buffer.

// FULL: llvm.func @kiln_onednn_conv2d_pad_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// FULL-NOT: kiln.conv_pad

// Depthwise, stride 2, padding 1, odd sizes: the grouped form's x is the
// unpadded 2x6x9x11 input split as [n, g 6, c 1, h 9, w 11] with strides
// 594, 99 (= c * 99), 99, 11, 1.
// MARK-LABEL: func.func @dw
// MARK: linalg.fill {kiln.conv_pad}
// MARK: linalg.copy {kiln.conv_pad} ins(%arg0
// MARK: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_impl = "onednn"
// CHECK-LABEL: func.func @dw(
// CHECK-NOT: memref.alloc() {{.*}} : memref<2x6x11x13xf32>
// CHECK-NOT: linalg.copy
// n 2 g 6 c 1 h 9 w 11; f 1 k 3x3; out 5x6; strides 2 2, dilations 1 1;
// x strides; w strides; y strides; pads 1 1 1 1; accumulate 0; threads 2
// CHECK: call @kiln_onednn_conv2d_pad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c6_i64, %c1_i64, %c9_i64, %c11_i64, %c1_i64, %c3_i64, %c3_i64, %c5_i64, %c6_i64, %c2_i64, %c2_i64, %c1_i64, %c1_i64, %c594_i64, %c99_i64, %c99_i64, %c11_i64, %c1_i64, %c9_i64, %c9_i64, %c9_i64, %c3_i64, %c1_i64, %c180_i64, %c30_i64, %c30_i64, %c6_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c0_i64, %c2_i64) {kiln.conv_impl = "onednn"}
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @dw(%x: tensor<2x6x9x11xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<2x6x5x6xf32> {
  %r = kt.conv2d %x, %w {groups = 6 : i64, padding = [1, 1], stride = [2, 2]} : (tensor<2x6x9x11xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x5x6xf32>
  return %r : tensor<2x6x5x6xf32>
}

// Ungrouped, padding 2 (larger than the kernel's reach on the border),
// bias (the bias entry: the paddings, then the bias stride 1): x is the
// 1x5x7x6 argument.
// MARK-LABEL: func.func @dense
// MARK: linalg.fill {kiln.conv_pad}
// MARK: linalg.copy {kiln.conv_pad}
// CHECK-LABEL: func.func @dense(
// CHECK-NOT: memref<1x5x11x10xf32>
// CHECK: call @kiln_onednn_conv2d_bias_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c1_i64, %c5_i64, %c7_i64, %c6_i64, %c4_i64, %c3_i64, %c3_i64, %c9_i64, %c8_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c210_i64, %c0_i64, %c42_i64, %c6_i64, %c1_i64, %c0_i64, %c45_i64, %c9_i64, %c3_i64, %c1_i64, %c288_i64, %c0_i64, %c72_i64, %c8_i64, %c1_i64, %c2_i64, %c2_i64, %c2_i64, %c2_i64, %c1_i64, %c2_i64)
func.func @dense(%x: tensor<1x5x7x6xf32>, %w: tensor<4x5x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x9x8xf32> {
  %r = kt.conv2d %x, %w, %b {padding = [2, 2]} : (tensor<1x5x7x6xf32>, tensor<4x5x3x3xf32>, tensor<4xf32>) -> tensor<1x4x9x8xf32>
  return %r : tensor<1x4x9x8xf32>
}

// `?` batch: still in-kernel (H and W are static).
// CHECK-LABEL: func.func @dyn_batch(
// CHECK: call @kiln_onednn_conv2d_pad_f32(
func.func @dyn_batch(%x: tensor<?x8x10x10xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<?x8x10x10xf32> {
  %r = kt.conv2d %x, %w {groups = 8 : i64, padding = [1, 1]} : (tensor<?x8x10x10xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x10x10xf32>
  return %r : tensor<?x8x10x10xf32>
}

// `?` height: the padded copy stays (unmarked).
// MARK-LABEL: func.func @dyn_height
// MARK-NOT: kiln.conv_pad
// MARK: linalg.conv_2d_ngchw_gfchw
// CHECK-LABEL: func.func @dyn_height(
// CHECK: linalg.copy
// CHECK: call @kiln_onednn_conv2d_f32(
func.func @dyn_height(%x: tensor<2x8x?x10xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<2x8x?x10xf32> {
  %r = kt.conv2d %x, %w {groups = 8 : i64, padding = [1, 1]} : (tensor<2x8x?x10xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x?x10xf32>
  return %r : tensor<2x8x?x10xf32>
}

// The ungrouped weight-gradient form (kernel larger than the output):
// libkiln_onednn gives the padding to oneDNN's backward-weights primitive,
// so it is in-kernel too.
// MARK-LABEL: func.func @wgrad_shape
// MARK: linalg.fill {kiln.conv_pad}
// MARK: linalg.copy {kiln.conv_pad}
// MARK: linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func @wgrad_shape(
// CHECK-NOT: linalg.copy
// CHECK: call @kiln_onednn_conv2d_pad_f32(
func.func @wgrad_shape(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x5x5xf32>) -> tensor<1x3x3x3xf32> {
  %r = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<1x2x5x5xf32>, tensor<3x2x5x5xf32>) -> tensor<1x3x3x3xf32>
  return %r : tensor<1x3x3x3xf32>
}

// The grouped one too: libkiln_onednn's depthwise weight-gradient loops pad
// each plane as they copy it (depthwiseWeightGrad).
// MARK-LABEL: func.func @wgrad_shape_grouped
// MARK: linalg.fill {kiln.conv_pad}
// MARK: linalg.copy {kiln.conv_pad}
// MARK: linalg.conv_2d_ngchw_gfchw
// CHECK-LABEL: func.func @wgrad_shape_grouped(
// CHECK-NOT: linalg.copy
// CHECK: call @kiln_onednn_conv2d_pad_f32(
func.func @wgrad_shape_grouped(%x: tensor<1x2x5x5xf32>, %w: tensor<2x1x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %r = kt.conv2d %x, %w {groups = 2 : i64, padding = [1, 1]} : (tensor<1x2x5x5xf32>, tensor<2x1x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

// f64: not oneDNN, nothing marked.
// MARK-LABEL: func.func @f64
// MARK-NOT: kiln.conv_pad
// MARK: return
func.func @f64(%x: tensor<1x4x6x6xf64>, %w: tensor<4x1x3x3xf64>) -> tensor<1x4x6x6xf64> {
  %r = kt.conv2d %x, %w {groups = 4 : i64, padding = [1, 1]} : (tensor<1x4x6x6xf64>, tensor<4x1x3x3xf64>) -> tensor<1x4x6x6xf64>
  return %r : tensor<1x4x6x6xf64>
}
