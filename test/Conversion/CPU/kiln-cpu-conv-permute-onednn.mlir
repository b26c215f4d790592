// RUN: kiln-opt %s -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn | FileCheck %s --check-prefix=MARK
// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu="conv=onednn threads=2" | FileCheck %s --check-prefix=FULL
// REQUIRES: onednn

// Permuted conv operands read in place. kiln-autodiff's weight gradient of
// a convolution is a kt.conv2d over the input and the output gradient with
// their batch and channel dims swapped (two kt.permutes). A 4-D permute
// read only by convs is cloned into each conv's kernel
// (kiln-cpu-outline-kernels) instead of being a copy kernel of its own;
// kiln-cpu-conv-im2col marks the linalg.transpose it lowers to
// (kiln.conv_view) where an ungrouped f32 oneDNN conv alone reads it (as
// its weight, its input, or its input's padding copy's source), and
// kiln-cpu-conv-to-onednn passes the transpose's source to the call with
// permuted sizes and strides and erases the transpose and its buffer.
// Here the call's x is %arg0 (8x4x6x6) seen as [n 4, g 1, c 8, h 6, w 6]
// with strides [36, 0, 144, 6, 1], its weight %arg1 (8x5x6x6) as [g 1,
// f 5, c 8, 6, 6] with strides [0, 36, 180, 6, 1]; the padding is the
// call's own (the weight-gradient form pads in oneDNN's backward-weights
// primitive).

// (The outlined kernels follow both callers: the checks of @shared's
// caller come first.)
// OUTLINE-LABEL: func.func @wgrad(
// OUTLINE-NOT: kt.permute
// OUTLINE: call @kernel_conv2d(%arg0, %arg1)
// A permute that something besides convs reads stays a kernel of its own
// (a copy), and the conv reads that copy.
// OUTLINE-LABEL: func.func @shared(
// OUTLINE: %[[P:.*]] = call @kernel_permute(%arg0)
// OUTLINE: call @kernel_conv2d_0(%[[P]], %arg1)
// OUTLINE: call @kernel_neg(%[[P]])
// OUTLINE-LABEL: func.func private @kernel_conv2d(
// OUTLINE: kt.permute %arg0
// OUTLINE: kt.permute %arg1
// OUTLINE: kt.conv2d
// OUTLINE-LABEL: func.func private @kernel_conv2d_0(
// OUTLINE-NOT: kt.permute
// OUTLINE: return

// MARK-LABEL: func.func @wgrad(
// MARK: linalg.transpose ins(%arg0 {{.*}} permutation = [1, 0, 2, 3]  {kiln.conv_view}
// MARK: linalg.transpose ins(%arg1 {{.*}} permutation = [1, 0, 2, 3]  {kiln.conv_view}
// MARK: linalg.copy {kiln.conv_pad}
// MARK: linalg.conv_2d_nchw_fchw

// CHECK-LABEL: func.func @wgrad(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : i64
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[C36:.*]] = arith.constant 36 : i64
// CHECK-DAG: %[[C144:.*]] = arith.constant 144 : i64
// CHECK-DAG: %[[C180:.*]] = arith.constant 180 : i64
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.copy
// CHECK: %[[XI:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[WI:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: call @kiln_onednn_conv2d_pad_f32({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, %[[C4]], %[[C1]], %[[C8]], %[[C6]], %[[C6]], %[[C5]], %[[C6]], %[[C6]], {{[^,]*}}, {{[^,]*}}, %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C36]], %[[C0]], %[[C144]], %[[C6]], %[[C1]], %[[C0]], %[[C36]], %[[C180]], %[[C6]], %[[C1]],
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @wgrad(%x: tensor<8x4x6x6xf32>, %gy: tensor<8x5x6x6xf32>) -> tensor<4x5x3x3xf32> {
  %xp = kt.permute %x {dims = [1, 0, 2, 3]} : (tensor<8x4x6x6xf32>) -> tensor<4x8x6x6xf32>
  %gp = kt.permute %gy {dims = [1, 0, 2, 3]} : (tensor<8x5x6x6xf32>) -> tensor<5x8x6x6xf32>
  %r = kt.conv2d %xp, %gp {padding = [1, 1]} : (tensor<4x8x6x6xf32>, tensor<5x8x6x6xf32>) -> tensor<4x5x3x3xf32>
  return %r : tensor<4x5x3x3xf32>
}

// (Without outlining, the transpose feeding the conv has another reader.)
// MARK-LABEL: func.func @shared(
// MARK-NOT: kiln.conv_view
// MARK: return
func.func @shared(%x: tensor<2x3x5x5xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<3x4x3x3xf32>, tensor<3x2x5x5xf32>) {
  %xp = kt.permute %x {dims = [1, 0, 2, 3]} : (tensor<2x3x5x5xf32>) -> tensor<3x2x5x5xf32>
  %r = kt.conv2d %xp, %w : (tensor<3x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<3x4x3x3xf32>
  %n = kt.neg %xp : (tensor<3x2x5x5xf32>) -> tensor<3x2x5x5xf32>
  return %r, %n : tensor<3x4x3x3xf32>, tensor<3x2x5x5xf32>
}

// The whole pipeline: the weight gradient's kernel allocates its output
// only (no transposed or padded copy) and calls oneDNN.
// FULL-LABEL: llvm.func @wgrad(
// FULL: llvm.call @kernel_conv2d(
// FULL-LABEL: llvm.func @kernel_conv2d(
// FULL: llvm.call @malloc
// FULL-NOT: llvm.call @malloc
// FULL: llvm.call @kiln_onednn_conv2d_pad_f32(
// FULL-LABEL: llvm.func @kernel_permute(

// One transposed copy read as both the input and the weight: kept (the
// call reads the copy).
// CHECK-LABEL: func.func @self(
// CHECK: linalg.transpose ins(%arg0
// CHECK: call @kiln_onednn_conv2d_f32(
func.func @self(%x: tensor<8x4x6x6xf32>) -> tensor<4x4x1x1xf32> {
  %xp = kt.permute %x {dims = [1, 0, 2, 3]} : (tensor<8x4x6x6xf32>) -> tensor<4x8x6x6xf32>
  %r = kt.conv2d %xp, %xp : (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>) -> tensor<4x4x1x1xf32>
  return %r : tensor<4x4x1x1xf32>
}
