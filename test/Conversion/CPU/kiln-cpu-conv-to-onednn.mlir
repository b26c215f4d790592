// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s --check-prefix=MARK
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col=impl=onednn -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-im2col | FileCheck %s --check-prefix=AUTO
// REQUIRES: onednn

// Tests kiln-cpu-conv-im2col{impl=onednn} (f32 convs marked "onednn" and
// kept; f64 ones take auto's choice), impl=auto (oneDNN for every f32
// conv: depthwise ones run libkiln_onednn's direct loops) and kiln-cpu-conv-to-onednn (after
// bufferization the marked conv becomes a call of kiln_onednn_conv2d_f32 on
// pointers, sizes, strides; a zero fill of the output right before it is
// dropped and the call overwrites: accumulate = 0).

// MARK-LABEL: func.func @plain
// AUTO-LABEL: func.func @plain
// AUTO: linalg.conv_2d_nchw_fchw {{.*}}kiln.conv_impl = "onednn"
// MARK: linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, kiln.conv_impl = "onednn", strides = dense<[2, 1]> : tensor<2xi64>}
// CHECK: func.func private @kiln_onednn_conv2d_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @plain
// CHECK-NOT: linalg.conv_2d
// CHECK: %[[XP:.*]] = llvm.inttoptr
// CHECK: %[[WP:.*]] = llvm.inttoptr
// CHECK: %[[YP:.*]] = llvm.inttoptr
// x, w, y; n g c h w; f kh kw; oh ow; strides 2 1; dilations 1 2;
// x strides (n g c h w, g: 0), w strides (g f c kh kw, g: 0), y strides,
// accumulate 1 (the init is an argument), threads 2
// CHECK: call @kiln_onednn_conv2d_f32(%[[XP]], %[[WP]], %[[YP]], %c3_i64, %c1_i64, %c8_i64, %c21_i64, %c20_i64, %c16_i64, %c3_i64, %c5_i64, %c10_i64, %c12_i64, %c2_i64, %c1_i64, %c1_i64, %c2_i64, %c3360_i64, %c0_i64, %c420_i64, %c20_i64, %c1_i64, %c0_i64, %c120_i64, %c15_i64, %c5_i64, %c1_i64, %c1920_i64, %c0_i64, %c120_i64, %c12_i64, %c1_i64, %c1_i64, %c2_i64) {kiln.conv_impl = "onednn"}
func.func @plain(%x: tensor<3x8x21x20xf32>, %w: tensor<16x8x3x5xf32>, %init: tensor<3x16x10x12xf32>) -> tensor<3x16x10x12xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
         ins(%x, %w : tensor<3x8x21x20xf32>, tensor<16x8x3x5xf32>) outs(%init : tensor<3x16x10x12xf32>) -> tensor<3x16x10x12xf32>
  return %r : tensor<3x16x10x12xf32>
}

// -----

// A zero init: the fill goes, accumulate = 0 (the last but one argument).
// MARK-LABEL: func.func @zero_init
// MARK: linalg.fill
// MARK: kiln.conv_impl = "onednn"
// CHECK-LABEL: func.func @zero_init
// CHECK-NOT: linalg.fill
// CHECK: %[[Y:.*]] = memref.alloc()
// CHECK-NOT: linalg.fill
// CHECK: call @kiln_onednn_conv2d_f32({{.*}}, %c1_i64, %c0_i64, %c2_i64) {kiln.conv_impl = "onednn"}
// CHECK-NOT: linalg.conv_2d
// CHECK: return %[[Y]]
func.func @zero_init(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x7x7xf32>) -> tensor<1x6x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32>) outs(%f : tensor<1x6x7x7xf32>) -> tensor<1x6x7x7xf32>
  return %r : tensor<1x6x7x7xf32>
}

// -----

// A nonzero fill stays and the call accumulates onto it.
// CHECK-LABEL: func.func @one_init
// CHECK: linalg.fill
// CHECK: call @kiln_onednn_conv2d_f32({{.*}}, %c1_i64, %c1_i64, %c2_i64) {kiln.conv_impl = "onednn"}
func.func @one_init(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x7x7xf32> {
  %z = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x6x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x7x7xf32>) -> tensor<1x6x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32>) outs(%f : tensor<1x6x7x7xf32>) -> tensor<1x6x7x7xf32>
  return %r : tensor<1x6x7x7xf32>
}

// -----

// Groups: the 5-D form, every size and stride from the memrefs' metadata.
// MARK-LABEL: func.func @grouped
// AUTO-LABEL: func.func @grouped
// AUTO: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_impl = "onednn"
// MARK: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "onednn", strides = dense<1> : tensor<2xi64>}
// CHECK-LABEL: func.func @grouped
// n 2 g 4 c 3 h 9 w 9; f 5 kh 3 kw 3; oh 7 ow 7; x strides 972 243 81 9 1;
// w strides 135 27 9 3 1; y strides 980 245 49 7 1
// CHECK: call @kiln_onednn_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c4_i64, %c3_i64, %c9_i64, %c9_i64, %c5_i64, %c3_i64, %c3_i64, %c7_i64, %c7_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c972_i64, %c243_i64, %c81_i64, %c9_i64, %c1_i64, %c135_i64, %c27_i64, %c9_i64, %c3_i64, %c1_i64, %c980_i64, %c245_i64, %c49_i64, %c7_i64, %c1_i64, %c1_i64, %c2_i64)
// CHECK-NOT: linalg.conv_2d
func.func @grouped(%x: tensor<2x4x3x9x9xf32>, %w: tensor<4x5x3x3x3xf32>, %init: tensor<2x4x5x7x7xf32>) -> tensor<2x4x5x7x7xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<2x4x3x9x9xf32>, tensor<4x5x3x3x3xf32>) outs(%init : tensor<2x4x5x7x7xf32>) -> tensor<2x4x5x7x7xf32>
  return %r : tensor<2x4x5x7x7xf32>
}

// -----

// f64 keeps the existing paths (auto's choice: here im2col), no call.
// MARK-LABEL: func.func @f64
// AUTO-LABEL: func.func @f64
// AUTO: } {kiln.conv_impl = "im2col"}
// MARK-NOT: "onednn"
// MARK: } {kiln.conv_impl = "im2col"}
// CHECK-LABEL: func.func @f64
// CHECK-NOT: kiln_onednn
// CHECK: return %arg2 : memref<3x64x19x19xf64>
func.func @f64(%x: tensor<3x32x21x21xf64>, %w: tensor<64x32x3x3xf64>, %init: tensor<3x64x19x19xf64>) -> tensor<3x64x19x19xf64> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<3x32x21x21xf64>, tensor<64x32x3x3xf64>) outs(%init : tensor<3x64x19x19xf64>) -> tensor<3x64x19x19xf64>
  return %r : tensor<3x64x19x19xf64>
}

// -----

// Depthwise (one input channel per group): auto sends it to libkiln_onednn
// too (its direct depthwise loops run it, not a oneDNN primitive).
// AUTO-LABEL: func.func @depthwise
// AUTO: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_impl = "onednn"
// MARK-LABEL: func.func @depthwise
// MARK: linalg.conv_2d_ngchw_gfchw {{.*}}kiln.conv_impl = "onednn"
// CHECK-LABEL: func.func @depthwise
// CHECK: call @kiln_onednn_conv2d_f32
func.func @depthwise(%x: tensor<2x8x1x9x9xf32>, %w: tensor<8x1x1x3x3xf32>, %init: tensor<2x8x1x7x7xf32>) -> tensor<2x8x1x7x7xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<2x8x1x9x9xf32>, tensor<8x1x1x3x3xf32>) outs(%init : tensor<2x8x1x7x7xf32>) -> tensor<2x8x1x7x7xf32>
  return %r : tensor<2x8x1x7x7xf32>
}

// -----

// One input channel, ungrouped: a weight gradient at batch 1 (kiln-autodiff
// swaps batch and channels: the kernel, the forward's output gradient, is
// larger than the output, the forward's kernel) goes to oneDNN under auto
// (libkiln_onednn runs it as a backward-weights primitive); a 1-channel
// conv with a small kernel keeps the table's choice.
// AUTO-LABEL: func.func @one_channel_weight_grad
// AUTO: linalg.conv_2d_nchw_fchw {{.*}}kiln.conv_impl = "onednn"
// AUTO-LABEL: func.func @one_channel_small_kernel
// AUTO-NOT: "onednn"
// AUTO: kiln.conv_impl = "{{direct|im2col}}"
// CHECK-LABEL: func.func @one_channel_weight_grad
// CHECK: call @kiln_onednn_conv2d_f32
func.func @one_channel_weight_grad(%x: tensor<3x1x13x11xf32>, %w: tensor<8x1x11x9xf32>, %init: tensor<3x8x3x3xf32>) -> tensor<3x8x3x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<3x1x13x11xf32>, tensor<8x1x11x9xf32>) outs(%init : tensor<3x8x3x3xf32>) -> tensor<3x8x3x3xf32>
  return %r : tensor<3x8x3x3xf32>
}
func.func @one_channel_small_kernel(%x: tensor<3x1x13x11xf32>, %w: tensor<8x1x3x3xf32>, %init: tensor<3x8x11x9xf32>) -> tensor<3x8x11x9xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<3x1x13x11xf32>, tensor<8x1x3x3xf32>) outs(%init : tensor<3x8x11x9xf32>) -> tensor<3x8x11x9xf32>
  return %r : tensor<3x8x11x9xf32>
}
