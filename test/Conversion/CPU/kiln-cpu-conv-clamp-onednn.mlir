// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s --check-prefix=MARK
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=onednn threads=2 conv-channels-last=false" | FileCheck %s --check-prefix=FULL
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=im2col threads=2" | FileCheck %s --check-prefix=IM2COL
// REQUIRES: onednn

// A conv's relu / clamp folded into the oneDNN call: kiln-cpu-outline-kernels
// puts a kt.conv2d's only consumer, a kt.relu or kt.clamp, into the conv's
// kernel; kiln-cpu-conv-im2col folds its linalg.generic into a oneDNN conv
// (kiln.conv_clamp = [lo, hi], -inf / +inf for an absent bound), and
// kiln-cpu-conv-to-onednn calls kiln_onednn_conv2d_post_f32 with the bias
// (or null), the paddings, the bias stride, accumulate and the bounds.

// (The full pipeline runs in NCHW here, as without kiln-cpu-conv-channels-last; the channels-last
// form, the depthwise conv included: kiln-cpu-conv-channels-last.mlir.)

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
// FULL: llvm.func @kiln_onednn_conv2d_post_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32, f32, f32, i64)
// FULL-LABEL: llvm.func @kernel_conv2d_clamp(
// FULL-DAG: %[[LO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// FULL-DAG: %[[HI:.*]] = llvm.mlir.constant(6.000000e+00 : f32) : f32
// FULL: llvm.call @kiln_onednn_conv2d_post_f32({{.*}}, %[[LO]], %[[HI]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {kiln.conv_impl = "onednn"}
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

// -----

// An expansion conv, ReLU6, a depthwise conv, ReLU6 (mobilenet_v2): the
// first ReLU6 goes into the depthwise conv's kernel as its input's clamp
// (kernel_clamp_conv2d_clamp; kiln.conv_input_clamp), not into the 1x1
// conv's kernel (which would clamp in a pass after the oneDNN primitive).
// OUTLINE-LABEL: func.func @expand_dw(
// OUTLINE: call @kernel_conv2d(
// OUTLINE: call @kernel_clamp_conv2d_clamp(
// OUTLINE-LABEL: func.func private @kernel_clamp_conv2d_clamp(
// OUTLINE: kt.clamp
// OUTLINE: kt.conv2d
// OUTLINE: kt.clamp
// MARK-LABEL: func.func private @kernel_clamp_conv2d_clamp(
// MARK-NOT: arith.cmpf
// MARK: linalg.copy {kiln.conv_pad} ins(%arg0
// MARK: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_clamp = array<f32: 0.000000e+00, 6.000000e+00>, kiln.conv_impl = "onednn", kiln.conv_input_clamp = array<f32: 0.000000e+00, 6.000000e+00>
// MARK: return
// FULL-LABEL: llvm.func @kernel_conv2d(
// FULL: llvm.call @kiln_onednn_conv2d_bias_f32(
// FULL-LABEL: llvm.func @kernel_clamp_conv2d_clamp(
// FULL-DAG: %[[FLAGS:.*]] = llvm.mlir.constant(3 : i64) : i64
// FULL-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// FULL-DAG: %[[SIX:.*]] = llvm.mlir.constant(6.000000e+00 : f32) : f32
// FULL: llvm.call @kiln_onednn_conv2d_post_f32({{.*}}, %[[FLAGS]], %[[ZERO]], %[[SIX]], %[[ZERO]], %[[SIX]], %{{[0-9]+}}) {kiln.conv_impl = "onednn"}
func.func @expand_dw(%x: tensor<2x8x10x10xf32>, %w1: tensor<24x8x1x1xf32>, %b1: tensor<24xf32>, %w2: tensor<24x1x3x3xf32>, %b2: tensor<24xf32>) -> tensor<2x24x10x10xf32> {
  %c1 = kt.conv2d %x, %w1, %b1 : (tensor<2x8x10x10xf32>, tensor<24x8x1x1xf32>, tensor<24xf32>) -> tensor<2x24x10x10xf32>
  %r1 = kt.clamp %c1 {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  %c2 = kt.conv2d %r1, %w2, %b2 {groups = 24 : i64, padding = [1, 1]} : (tensor<2x24x10x10xf32>, tensor<24x1x3x3xf32>, tensor<24xf32>) -> tensor<2x24x10x10xf32>
  %r2 = kt.clamp %c2 {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  return %r2 : tensor<2x24x10x10xf32>
}

// -----

// A clamp whose bounds exclude 0 (min 1) would change the depthwise conv's
// zero padding: it stays the first conv's epilogue.
// OUTLINE-LABEL: func.func @min_one(
// OUTLINE: call @kernel_conv2d_clamp(
// OUTLINE: call @kernel_conv2d(
// MARK-LABEL: func.func private @kernel_conv2d_clamp(
// MARK: kiln.conv_clamp = array<f32: 1.000000e+00, 6.000000e+00>
// MARK-LABEL: func.func private @kernel_conv2d(
// MARK-NOT: kiln.conv_input_clamp
// MARK: return
func.func @min_one(%x: tensor<2x8x10x10xf32>, %w1: tensor<24x8x1x1xf32>, %w2: tensor<24x1x3x3xf32>) -> tensor<2x24x10x10xf32> {
  %c1 = kt.conv2d %x, %w1 : (tensor<2x8x10x10xf32>, tensor<24x8x1x1xf32>) -> tensor<2x24x10x10xf32>
  %r1 = kt.clamp %c1 {min = 1.0 : f64, max = 6.0 : f64} : (tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  %c2 = kt.conv2d %r1, %w2 {groups = 24 : i64, padding = [1, 1]} : (tensor<2x24x10x10xf32>, tensor<24x1x3x3xf32>) -> tensor<2x24x10x10xf32>
  return %c2 : tensor<2x24x10x10xf32>
}
