// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s --check-prefix=MARK
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=onednn threads=2" | FileCheck %s --check-prefix=FULL
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=im2col threads=2" | FileCheck %s --check-prefix=IM2COL
// REQUIRES: onednn

// A conv's relu / clamp folded into the oneDNN call: kiln-cpu-outline-kernels
// puts a kt.conv2d's only consumer, a kt.relu or kt.clamp, into the conv's
// kernel; kiln-cpu-conv-im2col folds its linalg.generic into a oneDNN conv
// (kiln.conv_clamp = [lo, hi], -inf / +inf for an absent bound), and
// kiln-cpu-conv-to-onednn calls kiln_onednn_conv2d_post_f32 with the bias
// (or null), the paddings, the bias stride, accumulate and the bounds.

// ReLU6 after a 1x1 conv with a bias.
// OUTLINE-LABEL: func.func @relu6(
// OUTLINE: call @kernel_conv2d_clamp(
// OUTLINE-NOT: call @
// OUTLINE: func.func private @kernel_conv2d_clamp(
// OUTLINE: kt.conv2d
// OUTLINE: kt.clamp
// MARK-LABEL: func.func private @kernel_conv2d_clamp(
// MARK: linalg.conv_2d_nchw_fchw {{.*}}kiln.conv_clamp = array<f32: 0.000000e+00, 6.000000e+00>, kiln.conv_impl = "onednn"
// MARK-NOT: arith.cmpf
// MARK: return
// FULL: llvm.func @kiln_onednn_conv2d_post_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, i64)
// FULL-LABEL: llvm.func @kernel_conv2d_clamp(
// FULL-DAG: %[[LO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// FULL-DAG: %[[HI:.*]] = llvm.mlir.constant(6.000000e+00 : f32) : f32
// FULL: llvm.call @kiln_onednn_conv2d_post_f32({{.*}}, %[[LO]], %[[HI]], %{{[0-9]+}}) {kiln.conv_impl = "onednn"}
// FULL-NOT: llvm.fcmp
// FULL: llvm.return
// IM2COL-LABEL: llvm.func @kernel_conv2d_clamp(
// IM2COL-NOT: kiln_onednn
// IM2COL: llvm.fcmp "olt"
// IM2COL: llvm.return
func.func @relu6(%x: tensor<2x16x5x7xf32>, %w: tensor<24x16x1x1xf32>, %b: tensor<24xf32>) -> tensor<2x24x5x7xf32> {
  %c = kt.conv2d %x, %w, %b : (tensor<2x16x5x7xf32>, tensor<24x16x1x1xf32>, tensor<24xf32>) -> tensor<2x24x5x7xf32>
  %r = kt.clamp %c {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x24x5x7xf32>) -> tensor<2x24x5x7xf32>
  return %r : tensor<2x24x5x7xf32>
}

// -----

// kt.relu after a depthwise conv without a bias, `?` batch, padded in the
// call: the grouped form's collapse_shape and the tensor.dim of the `?`
// batch do not stop the fold; the bias pointer is null.
// OUTLINE-LABEL: func.func private @kernel_conv2d_relu(
// MARK-LABEL: func.func private @kernel_conv2d_relu(
// MARK: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_clamp = array<f32: 0.000000e+00, 0x7F800000>
// MARK-NOT: arith.cmpf
// MARK: return
// FULL-LABEL: llvm.func @kernel_conv2d_relu(
// FULL: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// FULL: llvm.call @kiln_onednn_conv2d_post_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]],
// FULL: llvm.return
func.func @dw_relu(%x: tensor<?x6x9x11xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<?x6x9x11xf32> {
  %c = kt.conv2d %x, %w {groups = 6 : i64, padding = [1, 1]} : (tensor<?x6x9x11xf32>, tensor<6x1x3x3xf32>) -> tensor<?x6x9x11xf32>
  %r = kt.relu %c : (tensor<?x6x9x11xf32>) -> tensor<?x6x9x11xf32>
  return %r : tensor<?x6x9x11xf32>
}

// -----

// Only an upper bound: the lower one is -inf.
// MARK-LABEL: func.func private @kernel_conv2d_clamp(
// MARK: kiln.conv_clamp = array<f32: 0xFF800000, 1.250000e+00>
func.func @max_only(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = kt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = kt.clamp %c {max = 1.25 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// The conv's result is read twice (returned too): two kernels, no fold.
// OUTLINE-LABEL: func.func @two_uses(
// OUTLINE: call @kernel_conv2d(
// OUTLINE: call @kernel_relu(
// FULL-LABEL: llvm.func @kernel_conv2d(
// FULL: llvm.call @kiln_onednn_conv2d_f32(
// FULL-NOT: kiln_onednn_conv2d_post_f32
func.func @two_uses(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = kt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = kt.relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %c, %r : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// f64: never oneDNN; the relu stays in the conv's kernel as a loop.
// MARK-LABEL: func.func private @kernel_conv2d_relu(
// MARK-NOT: kiln.conv_clamp
// MARK: arith.cmpf olt
// FULL-LABEL: llvm.func @kernel_conv2d_relu(
// FULL-NOT: kiln_onednn_conv2d_post_f32
// FULL: llvm.fcmp "olt"
func.func @f64(%x: tensor<1x3x8x8xf64>, %w: tensor<4x3x3x3xf64>) -> tensor<1x4x6x6xf64> {
  %c = kt.conv2d %x, %w : (tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>) -> tensor<1x4x6x6xf64>
  %r = kt.relu %c : (tensor<1x4x6x6xf64>) -> tensor<1x4x6x6xf64>
  return %r : tensor<1x4x6x6xf64>
}
