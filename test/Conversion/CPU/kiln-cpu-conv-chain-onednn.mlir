// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -cse -kiln-cpu-private-conv-inits | FileCheck %s --check-prefix=INITS
// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -cse -kiln-cpu-private-conv-inits -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=onednn threads=2" -o /dev/null
// REQUIRES: onednn

// A chain of ungrouped f32 convs (conv -> relu -> conv: the resnet basic
// block) is one kernel (kiln-cpu-outline-kernels); each conv's bias init
// gets a tensor of its own after CSE (kiln-cpu-private-conv-inits), so the
// second conv's output does not reuse the first one's buffer; the buffer
// between the two convs, which only they touch, is passed channels-last to
// both calls: strides [C*H*W, 0 (group), 1, W*C, C] = [3136, 0, 1, 224, 16].

// OUTLINE-LABEL: func.func @basic(
// OUTLINE: call @kernel_conv2d_relu_conv2d(
// OUTLINE-NOT: call @
// OUTLINE: func.func private @kernel_conv2d_relu_conv2d(
// OUTLINE: kt.conv2d
// OUTLINE: kt.relu
// OUTLINE: kt.conv2d
// INITS-LABEL: func.func private @kernel_conv2d_relu_conv2d(
// INITS: %[[I1:.*]] = bufferization.alloc_tensor() : tensor<2x16x14x14xf32>
// INITS: linalg.generic {{.*}} outs(%[[I1]] : {{.*}}) attrs =  {kiln.conv_bias}
// INITS: %[[I2:.*]] = bufferization.alloc_tensor() : tensor<2x16x14x14xf32>
// INITS: linalg.generic {{.*}} outs(%[[I2]] : {{.*}}) attrs =  {kiln.conv_bias}
// CHECK-LABEL: func.func private @kernel_conv2d_relu_conv2d(
// n 2 g 1 c 16 14x14, f 16 k 3x3 -> 14x14; x NCHW, w, y channels-last.
// CHECK: call @kiln_onednn_conv2d_post_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c1_i64, %c16_i64, %c14_i64, %c14_i64, %c16_i64, %c3_i64, %c3_i64, %c14_i64, %c14_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c3136_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64, %c0_i64, %c144_i64, %c9_i64, %c3_i64, %c1_i64, %c3136_i64, %c0_i64, %c1_i64, %c224_i64, %c16_i64,
// The second conv reads it channels-last (padded in the call) and writes NCHW.
// CHECK: call @kiln_onednn_conv2d_bias_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c1_i64, %c16_i64, %c14_i64, %c14_i64, %c16_i64, %c3_i64, %c3_i64, %c14_i64, %c14_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c3136_i64, %c0_i64, %c1_i64, %c224_i64, %c16_i64, %c0_i64, %c144_i64, %c9_i64, %c3_i64, %c1_i64, %c3136_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64,
func.func @basic(%x: tensor<2x16x14x14xf32>, %w1: tensor<16x16x3x3xf32>, %b1: tensor<16xf32>, %w2: tensor<16x16x3x3xf32>, %b2: tensor<16xf32>) -> tensor<2x16x14x14xf32> {
  %c1 = kt.conv2d %x, %w1, %b1 {padding = [1, 1]} : (tensor<2x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<2x16x14x14xf32>
  %r1 = kt.relu %c1 : (tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %c2 = kt.conv2d %r1, %w2, %b2 {padding = [1, 1]} : (tensor<2x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<2x16x14x14xf32>
  return %c2 : tensor<2x16x14x14xf32>
}

// -----

// The middle result is returned too: no chain, two kernels, NCHW strides.
// OUTLINE-LABEL: func.func @middle_returned(
// OUTLINE: call @kernel_conv2d_relu(
// OUTLINE: call @kernel_conv2d(
// CHECK-LABEL: func.func private @kernel_conv2d_relu(
// CHECK: call @kiln_onednn_conv2d_post_f32({{.*}}, %c3136_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64,
func.func @middle_returned(%x: tensor<2x16x14x14xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x16x3x3xf32>) -> (tensor<2x16x14x14xf32>, tensor<2x16x14x14xf32>) {
  %c1 = kt.conv2d %x, %w1 {padding = [1, 1]} : (tensor<2x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x14x14xf32>
  %r1 = kt.relu %c1 : (tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %c2 = kt.conv2d %r1, %w2 {padding = [1, 1]} : (tensor<2x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x14x14xf32>
  return %r1, %c2 : tensor<2x16x14x14xf32>, tensor<2x16x14x14xf32>
}

// -----

// A depthwise conv ends no chain (its loops want NCHW rows): two kernels.
// OUTLINE-LABEL: func.func @to_depthwise(
// OUTLINE: call @kernel_conv2d(
// OUTLINE: call @kernel_conv2d_0(
func.func @to_depthwise(%x: tensor<2x16x14x14xf32>, %w1: tensor<16x16x1x1xf32>, %w2: tensor<16x1x3x3xf32>) -> tensor<2x16x14x14xf32> {
  %c1 = kt.conv2d %x, %w1 : (tensor<2x16x14x14xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x14x14xf32>
  %c2 = kt.conv2d %c1, %w2 {padding = [1, 1], groups = 16 : i64} : (tensor<2x16x14x14xf32>, tensor<16x1x3x3xf32>) -> tensor<2x16x14x14xf32>
  return %c2 : tensor<2x16x14x14xf32>
}

// -----

// 1x1 -> 1x1: a chain (one kernel), but both convs take oneDNN's plain
// layout (libkiln_onednn's rule, kiln::rt::oneDNNBlockedLayout), so the
// buffer between them stays NCHW (strides [1568, 0, 196, 14, 1]):
// channels-last there would add a reorder on each side.
// OUTLINE-LABEL: func.func @pointwise_pair(
// OUTLINE: call @kernel_conv2d_conv2d(
// CHECK-LABEL: func.func private @kernel_conv2d_conv2d(
// CHECK-NOT: %c1_i64, %c112_i64, %c8_i64
// CHECK: call @kiln_onednn_conv2d_f32({{.*}}, %c1568_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64, %c0_i64
// CHECK-NOT: %c1_i64, %c112_i64, %c8_i64
// CHECK: call @kiln_onednn_conv2d_f32({{.*}}, %c1568_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64, %c0_i64
// CHECK-NOT: %c1_i64, %c112_i64, %c8_i64
// CHECK: return
func.func @pointwise_pair(%x: tensor<2x8x14x14xf32>, %w1: tensor<8x8x1x1xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<2x8x14x14xf32> {
  %c1 = kt.conv2d %x, %w1 : (tensor<2x8x14x14xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x14x14xf32>
  %c2 = kt.conv2d %c1, %w2 : (tensor<2x8x14x14xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x14x14xf32>
  return %c2 : tensor<2x8x14x14xf32>
}
