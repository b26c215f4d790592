// RUN: kiln-opt %s -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu="conv=onednn threads=2" -o /dev/null
// REQUIRES: onednn

// A conv read only through static slices from 0 of its H and W computes
// only what they keep. kiln-autodiff's weight gradient of a stride-2 conv
// is a dilated conv whose "output" (the kernel) has rows and columns past
// the kernel's size, sliced off after: here 4x4 sliced to 3x3.
// kiln-cpu-outline-kernels puts the slices in the conv's kernel;
// kiln-cpu-conv-im2col makes the conv's output the last slice's shape (a
// fresh fill of the init's value; the input may be larger than the output
// needs) and drops the slices.

// OUTLINE-LABEL: func.func @wgrad_s2(
// OUTLINE: %[[R:.*]] = call @kernel_conv2d_slice_slice(%arg0, %arg1)
// OUTLINE: return %[[R]]
// OUTLINE-LABEL: func.func @offset(
// OUTLINE: %[[C:.*]] = call @kernel_conv2d(
// OUTLINE: kt.slice %[[C]]
// OUTLINE-LABEL: func.func @two_uses(
// OUTLINE: %[[C2:.*]] = call @kernel_conv2d(
// OUTLINE: kt.slice %[[C2]]
// OUTLINE-LABEL: func.func private @kernel_conv2d_slice_slice(
// OUTLINE: kt.conv2d
// OUTLINE: kt.slice
// OUTLINE: kt.slice

// CHECK-LABEL: func.func @wgrad_s2(
// CHECK-NOT: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [4, 8, 3, 4]
// CHECK: linalg.fill ins(%{{.*}}) outs(%{{.*}} : tensor<4x8x3x3xf32>)
// CHECK: %[[R:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, kiln.conv_impl = "onednn", strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %arg1 : tensor<4x2x16x16xf32>, tensor<8x2x7x7xf32>) outs(%{{.*}} : tensor<4x8x3x3xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[R]]
func.func @wgrad_s2(%x: tensor<4x2x14x14xf32>, %gy: tensor<8x2x7x7xf32>) -> tensor<4x8x3x3xf32> {
  %c = kt.conv2d %x, %gy {dilation = [2, 2], padding = [1, 1]} : (tensor<4x2x14x14xf32>, tensor<8x2x7x7xf32>) -> tensor<4x8x4x4xf32>
  %a = kt.slice %c {dim = 2 : i64, start = 0 : i64, end = -1 : i64} : (tensor<4x8x4x4xf32>) -> tensor<4x8x3x4xf32>
  %b = kt.slice %a {dim = 3 : i64, start = 0 : i64, end = -1 : i64} : (tensor<4x8x3x4xf32>) -> tensor<4x8x3x3xf32>
  return %b : tensor<4x8x3x3xf32>
}

// A slice from 1: not the conv's first rows; the conv keeps its shape.
// CHECK-LABEL: func.func @offset(
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<4x8x4x4xf32>
// CHECK: tensor.extract_slice
func.func @offset(%x: tensor<4x2x14x14xf32>, %gy: tensor<8x2x7x7xf32>) -> tensor<4x8x3x4xf32> {
  %c = kt.conv2d %x, %gy {dilation = [2, 2], padding = [1, 1]} : (tensor<4x2x14x14xf32>, tensor<8x2x7x7xf32>) -> tensor<4x8x4x4xf32>
  %a = kt.slice %c {dim = 2 : i64, start = 1 : i64} : (tensor<4x8x4x4xf32>) -> tensor<4x8x3x4xf32>
  return %a : tensor<4x8x3x4xf32>
}

// The conv's whole result is read too: it keeps its shape.
// CHECK-LABEL: func.func @two_uses(
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<4x8x4x4xf32>
// CHECK: tensor.extract_slice
func.func @two_uses(%x: tensor<4x2x14x14xf32>, %gy: tensor<8x2x7x7xf32>) -> (tensor<4x8x4x4xf32>, tensor<4x8x3x4xf32>) {
  %c = kt.conv2d %x, %gy {dilation = [2, 2], padding = [1, 1]} : (tensor<4x2x14x14xf32>, tensor<8x2x7x7xf32>) -> tensor<4x8x4x4xf32>
  %a = kt.slice %c {dim = 2 : i64, start = 0 : i64, end = -1 : i64} : (tensor<4x8x4x4xf32>) -> tensor<4x8x3x4xf32>
  return %c, %a : tensor<4x8x4x4xf32>, tensor<4x8x3x4xf32>
}
