// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-channels-last | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-channels-last -kiln-fuse -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-channels-last -kiln-cpu-outline-kernels -kiln-lower-to-linalg -canonicalize -kiln-cpu-conv-im2col=impl=onednn -canonicalize -cse -kiln-cpu-private-conv-inits -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -kiln-cpu-conv-to-onednn=threads=2 -canonicalize | FileCheck %s --check-prefix=CALLS
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=onednn threads=2" -o /dev/null
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=onednn threads=2 conv-channels-last=false" -mlir-print-ir-after=kiln-fuse -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file -kiln-cpu-conv-channels-last -kiln-cpu-outline-kernels -kiln-lower-to-linalg -canonicalize -kiln-cpu-pad-to-copy -kiln-cpu-pool-windows -canonicalize | FileCheck %s --check-prefix=POOL
// RUN: kiln-opt %s -split-input-file -kiln-cpu="conv=onednn threads=2" -mlir-print-ir-after=kiln-cpu-outline-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE
// REQUIRES: onednn

// Channels-last activations between oneDNN convs (kiln-cpu-conv-channels-last).
// The resnet pattern: a conv, the residual add and its relu, the next conv.
// The conv gets a channels-last twin (permute [0, 2, 3, 1]), the add and
// relu run on [N, H, W, C] (the block input permuted once), the next conv
// reads the relu through permute [0, 3, 1, 2]. kiln-cpu-outline-kernels puts
// the twin into the first conv's kernel and the input permute into the
// second's; kiln-cpu-conv-to-onednn turns both into the calls' strides: the
// first writes y with strides [C*H*W, 0 (group), 1, W*C, C] =
// [3136, 0, 1, 224, 16], the second reads x with them. No transpose is left
// in either kernel.

// CHECK-LABEL: func.func @basic(
// CHECK: %[[C1:.*]] = kt.conv2d %arg0, %arg1, %arg2
// CHECK: %[[T1:.*]] = kt.permute %[[C1]] {dims = [0, 2, 3, 1]} : (tensor<2x16x14x14xf32>) -> tensor<2x14x14x16xf32>
// CHECK: %[[X:.*]] = kt.permute %arg0 {dims = [0, 2, 3, 1]}
// CHECK: %[[A:.*]] = kt.add %[[T1]], %[[X]] : (tensor<2x14x14x16xf32>, tensor<2x14x14x16xf32>) -> tensor<2x14x14x16xf32>
// CHECK: %[[R:.*]] = kt.relu %[[A]] : (tensor<2x14x14x16xf32>) -> tensor<2x14x14x16xf32>
// CHECK: %[[IN:.*]] = kt.permute %[[R]] {dims = [0, 3, 1, 2]}
// CHECK: %[[C2:.*]] = kt.conv2d %[[IN]], %arg3, %arg4
// CHECK-NOT: kt.permute
// CHECK: return %[[C2]]
// OUTLINE-LABEL: func.func @basic(
// OUTLINE: %[[T1:.*]] = call @kernel_conv2d_permute(%arg0, %arg1, %arg2)
// OUTLINE: %[[X:.*]] = call @kernel_permute(%arg0)
// OUTLINE: %[[R:.*]] = call @fused_add_relu_0(%[[T1]], %[[X]])
// OUTLINE: call @kernel_conv2d(%[[R]], %arg3, %arg4)
// OUTLINE-LABEL: func.func private @kernel_conv2d_permute(
// OUTLINE: kt.conv2d
// OUTLINE: kt.permute {{.*}} {dims = [0, 2, 3, 1]}
// OUTLINE-LABEL: func.func private @kernel_conv2d(
// OUTLINE: kt.permute {{.*}} {dims = [0, 3, 1, 2]}
// OUTLINE: kt.conv2d
// CALLS-LABEL: func.func private @kernel_conv2d_permute(
// CALLS-NOT: linalg.transpose
// n 2 g 1 c 16 14x14, f 16 k 3x3 -> 14x14; x NCHW, w, y channels-last.
// CALLS: call @kiln_onednn_conv2d_bias_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c1_i64, %c16_i64, %c14_i64, %c14_i64, %c16_i64, %c3_i64, %c3_i64, %c14_i64, %c14_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c3136_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64, %c0_i64, %c144_i64, %c9_i64, %c3_i64, %c1_i64, %c3136_i64, %c0_i64, %c1_i64, %c224_i64, %c16_i64,
// CALLS-NOT: linalg.transpose
// CALLS: return
// CALLS-LABEL: func.func private @kernel_conv2d(
// CALLS-NOT: linalg.transpose
// x channels-last, y NCHW (the function's result).
// CALLS: call @kiln_onednn_conv2d_bias_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c1_i64, %c16_i64, %c14_i64, %c14_i64, %c16_i64, %c3_i64, %c3_i64, %c14_i64, %c14_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c3136_i64, %c0_i64, %c1_i64, %c224_i64, %c16_i64, %c0_i64, %c144_i64, %c9_i64, %c3_i64, %c1_i64, %c3136_i64, %c0_i64, %c196_i64, %c14_i64, %c1_i64,
// CALLS-NOT: linalg.transpose
// CALLS: return
// Without the pass nothing is permuted.
// OFF-LABEL: func.func @basic(
// OFF-NOT: kt.permute
// OFF: return
func.func @basic(%x: tensor<2x16x14x14xf32>, %w1: tensor<16x16x3x3xf32>, %b1: tensor<16xf32>, %w2: tensor<16x16x3x3xf32>, %b2: tensor<16xf32>) -> tensor<2x16x14x14xf32> {
  %c1 = kt.conv2d %x, %w1, %b1 {padding = [1, 1]} : (tensor<2x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<2x16x14x14xf32>
  %a = kt.add %c1, %x : (tensor<2x16x14x14xf32>, tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %r = kt.relu %a : (tensor<2x16x14x14xf32>) -> tensor<2x16x14x14xf32>
  %c2 = kt.conv2d %r, %w2, %b2 {padding = [1, 1]} : (tensor<2x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<2x16x14x14xf32>
  return %c2 : tensor<2x16x14x14xf32>
}

// -----

// A conv's relu/clamp stays with it (the call clamps as it stores): the
// twin is the relu's (kiln-fuse makes the two one kernel, and the twin
// goes into it). A batch_norm that was not folded into its conv, written
// out as kiln-decompose does ((x - mean) * s with [C, 1, 1] statistics),
// runs channels-last with the statistics reshaped to [1, 1, 1, C] (a
// reshape: one dim is not 1; a [C, H, W] operand would be unsqueezed and
// permuted); the result, returned, is permuted back. A `?` batch, a
// scalar operand as it is.
// CHECK-LABEL: func.func @epilogues(
// CHECK: %[[C:.*]] = kt.conv2d %arg0, %arg1 {padding = [1, 1]}
// CHECK: %[[R:.*]] = kt.relu %[[C]]
// CHECK: %[[T:.*]] = kt.permute %[[R]] {dims = [0, 2, 3, 1]} : (tensor<?x8x6x6xf32>) -> tensor<?x6x6x8xf32>
// CHECK: %[[M:.*]] = kt.reshape %arg2 {shape = [1, 1, 1, 8]} : (tensor<8x1x1xf32>) -> tensor<1x1x1x8xf32>
// CHECK: %[[S:.*]] = kt.sub %[[T]], %[[M]] : (tensor<?x6x6x8xf32>, tensor<1x1x1x8xf32>) -> tensor<?x6x6x8xf32>
// CHECK: %[[P:.*]] = kt.mul %[[S]], %{{.*}} : (tensor<?x6x6x8xf32>, tensor<1x1x1x8xf32>) -> tensor<?x6x6x8xf32>
// CHECK: %[[Q:.*]] = kt.mul %[[P]], %{{.*}} : (tensor<?x6x6x8xf32>, tensor<f32>) -> tensor<?x6x6x8xf32>
// CHECK: %[[B:.*]] = kt.permute %[[Q]] {dims = [0, 3, 1, 2]} : (tensor<?x6x6x8xf32>) -> tensor<?x8x6x6xf32>
// CHECK: %[[E:.*]] = kt.conv2d %[[B]], %arg5
// CHECK-NOT: kt.permute
// CHECK: return %[[E]]
// OUTLINE-LABEL: func.func @epilogues(
// OUTLINE: call @fused_conv2d_relu_0(%arg0, %arg1) : (tensor<?x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<?x6x6x8xf32>
// OUTLINE-LABEL: func.func private @fused_conv2d_relu_0(
// OUTLINE: kt.fusion
// OUTLINE: kt.conv2d
// OUTLINE: kt.relu
// OUTLINE: kt.permute {{.*}} {dims = [0, 2, 3, 1]}
func.func @epilogues(%x: tensor<?x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %m: tensor<8x1x1xf32>, %s: tensor<8x1x1xf32>, %k: tensor<f32>, %w2: tensor<8x8x1x1xf32>) -> tensor<?x8x6x6xf32> {
  %c = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<?x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x6x6xf32>
  %r = kt.relu %c : (tensor<?x8x6x6xf32>) -> tensor<?x8x6x6xf32>
  %a = kt.sub %r, %m : (tensor<?x8x6x6xf32>, tensor<8x1x1xf32>) -> tensor<?x8x6x6xf32>
  %b = kt.mul %a, %s : (tensor<?x8x6x6xf32>, tensor<8x1x1xf32>) -> tensor<?x8x6x6xf32>
  %d = kt.mul %b, %k : (tensor<?x8x6x6xf32>, tensor<f32>) -> tensor<?x8x6x6xf32>
  %e = kt.conv2d %d, %w2 : (tensor<?x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x6x6xf32>
  return %e : tensor<?x8x6x6xf32>
}

// -----

// kt.batch_norm (inference) of a conv it was not folded into: x * a + b on
// the twin, with PyTorch's a = weight * rsqrt(var + eps) and
// b = bias - mean * a as [C] vectors (broadcast along the last dim).
// CHECK-LABEL: func.func @batch_norm(
// CHECK: %[[T:.*]] = kt.permute %{{.*}} {dims = [0, 2, 3, 1]}
// CHECK: %[[V:.*]] = kt.add %arg3, %{{.*}} : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK: %[[I:.*]] = kt.rsqrt %[[V]]
// CHECK: %[[A:.*]] = kt.mul %arg4, %[[I]]
// CHECK: %[[MA:.*]] = kt.mul %arg2, %[[A]]
// CHECK: %[[N:.*]] = kt.neg %[[MA]]
// CHECK: %[[SH:.*]] = kt.add %arg5, %[[N]]
// CHECK: %[[Y:.*]] = kt.mul %[[T]], %[[A]] : (tensor<2x6x6x8xf32>, tensor<8xf32>) -> tensor<2x6x6x8xf32>
// CHECK: %[[Z:.*]] = kt.add %[[Y]], %[[SH]] : (tensor<2x6x6x8xf32>, tensor<8xf32>) -> tensor<2x6x6x8xf32>
// CHECK: %[[R:.*]] = kt.relu %[[Z]] : (tensor<2x6x6x8xf32>)
// CHECK: %[[IN:.*]] = kt.permute %[[R]] {dims = [0, 3, 1, 2]}
// CHECK: kt.conv2d %[[IN]], %arg6
// CHECK: %[[C2:.*]] = kt.conv2d %arg0, %arg1
// CHECK-NEXT: kt.batch_norm %[[C2]]
func.func @batch_norm(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>) -> (tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>) {
  %c = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32>
  %n = kt.batch_norm %c, %m, %v weight %g bias %b {eps = 1.0e-03 : f64} : (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x6x6xf32>
  %r = kt.relu %n : (tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %e = kt.conv2d %r, %w2 : (tensor<2x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x6x6xf32>
  // A batch_norm whose result is returned stays as it is.
  %c2 = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32>
  %n2 = kt.batch_norm %c2, %m, %v weight %g bias %b {eps = 1.0e-03 : f64} : (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x6x6xf32>
  return %e, %n2 : tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>
}

// -----

// A mean over H and W (global average pooling) of a twin reduces the twin's
// dims 1 and 2; with keepdim its [N, 1, 1, C] result is reshaped to
// [N, C, 1, 1] (same element order). A mean over other dims reads NCHW.
// CHECK-LABEL: func.func @pool(
// CHECK: %[[T:.*]] = kt.permute %{{.*}} {dims = [0, 2, 3, 1]}
// CHECK: %[[R:.*]] = kt.relu %{{.*}} : (tensor<?x6x6x8xf32>)
// CHECK: %[[B:.*]] = kt.permute %[[R]] {dims = [0, 3, 1, 2]}
// CHECK: %[[M:.*]] = kt.mean %[[R]] {dim = [1, 2], keepdim = true} : (tensor<?x6x6x8xf32>) -> tensor<?x1x1x8xf32>
// CHECK: %[[S:.*]] = kt.reshape %[[M]] {shape = [-1, 8, 1, 1]} : (tensor<?x1x1x8xf32>) -> tensor<?x8x1x1xf32>
// CHECK: %[[N:.*]] = kt.sum %[[R]] {dim = [1, 2]} : (tensor<?x6x6x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[O:.*]] = kt.mean %[[B]] {dim = [1]}
// CHECK: return %[[S]], %[[N]], %[[O]]
func.func @pool(%x: tensor<?x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %y: tensor<?x8x6x6xf32>) -> (tensor<?x8x1x1xf32>, tensor<?x8xf32>, tensor<?x6x6xf32>) {
  %c = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<?x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x6x6xf32>
  %a = kt.add %c, %y : (tensor<?x8x6x6xf32>, tensor<?x8x6x6xf32>) -> tensor<?x8x6x6xf32>
  %r = kt.relu %a : (tensor<?x8x6x6xf32>) -> tensor<?x8x6x6xf32>
  %m = kt.mean %r {dim = [-2, -1], keepdim = true} : (tensor<?x8x6x6xf32>) -> tensor<?x8x1x1xf32>
  %n = kt.sum %r {dim = [2, 3]} : (tensor<?x8x6x6xf32>) -> tensor<?x8xf32>
  %o = kt.mean %r {dim = [1]} : (tensor<?x8x6x6xf32>) -> tensor<?x6x6xf32>
  return %m, %n, %o : tensor<?x8x1x1xf32>, tensor<?x8xf32>, tensor<?x6x6xf32>
}

// -----

// Reductions of all dims (no `dim` attribute) of a conv's result stay on the
// NCHW value (the pass crashed on them: a null ArrayAttr iterated; found by
// module_fuzz, a buffer updated with `conv(x).mean()`).
// CHECK-LABEL: func.func @full_reductions(
// CHECK: %[[C:.*]] = kt.conv2d
// CHECK: kt.mean %[[C]] : (tensor<4x2x2x1xf32>) -> tensor<f32>
// CHECK: kt.sum %[[C]] : (tensor<4x2x2x1xf32>) -> tensor<f32>
// CHECK: kt.amax %[[C]] : (tensor<4x2x2x1xf32>) -> tensor<f32>
func.func @full_reductions(%x: tensor<4x2x4x3xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %c = kt.conv2d %x, %w, %b {groups = 2} : (tensor<4x2x4x3xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<4x2x2x1xf32>
  %m = kt.mean %c : (tensor<4x2x2x1xf32>) -> tensor<f32>
  %s = kt.sum %c : (tensor<4x2x2x1xf32>) -> tensor<f32>
  %a = kt.amax %c : (tensor<4x2x2x1xf32>) -> tensor<f32>
  return %m, %s, %a : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A max pool of a twin (resnet's stem): the pool reads the twin through a
// permute of its own and gets a twin of its result; both go into the pool's
// kernel, and kiln-cpu-pool-windows pools the [N, H, W, C] source directly
// (padded in that layout: H by 1, W by 0; window slices strided in H and W,
// whole in C) and writes [N, OH, OW, C]: no transpose left.
// CHECK-LABEL: func.func @stem(
// CHECK: %[[T:.*]] = kt.permute %{{.*}} {dims = [0, 2, 3, 1]}
// CHECK: %[[IN:.*]] = kt.permute %[[T]] {dims = [0, 3, 1, 2]}
// CHECK: %[[P:.*]] = kt.max_pool2d %[[IN]]
// CHECK: %[[PT:.*]] = kt.permute %[[P]] {dims = [0, 2, 3, 1]}
// CHECK: kt.add %{{.*}}, %[[PT]] : (tensor<2x7x5x8xf32>, tensor<2x7x5x8xf32>)
// OUTLINE-LABEL: func.func @stem(
// OUTLINE: %[[T:.*]] = call @fused_conv2d_relu_0(%arg0, %arg1, %arg2) : {{.*}} -> tensor<2x13x10x8xf32>
// OUTLINE: call @kernel_max_pool2d_permute(%[[T]]) : (tensor<2x13x10x8xf32>) -> tensor<2x7x5x8xf32>
// POOL-LABEL: func.func private @kernel_max_pool2d_permute(
// POOL-NOT: linalg.transpose
// POOL: %[[F:.*]] = linalg.fill {{.*}} -> tensor<2x15x10x8xf32>
// POOL: %[[S:.*]] = tensor.extract_slice %[[F]][0, 1, 0, 0] [2, 13, 10, 8] [1, 1, 1, 1]
// POOL: %[[C:.*]] = linalg.copy ins(%arg0 : tensor<2x13x10x8xf32>) outs(%[[S]]
// POOL: %[[X:.*]] = tensor.insert_slice %[[C]] into %[[F]]
// POOL: tensor.extract_slice %[[X]][0, 0, 0, 0] [2, 7, 5, 8] [1, 2, 2, 1]
// POOL: tensor.extract_slice %[[X]][0, 2, 1, 0] [2, 7, 5, 8] [1, 2, 2, 1]
// POOL: %[[G:.*]] = linalg.generic
// POOL-NOT: linalg.transpose
// POOL: return %[[G]] : tensor<2x7x5x8xf32>
func.func @stem(%x: tensor<2x3x13x10xf32>, %w1: tensor<8x3x3x3xf32>, %b1: tensor<8xf32>, %w2: tensor<8x8x3x3xf32>, %w3: tensor<8x8x1x1xf32>) -> tensor<2x8x7x5xf32> {
  %c1 = kt.conv2d %x, %w1, %b1 {padding = [1, 1]} : (tensor<2x3x13x10xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x13x10xf32>
  %r = kt.relu %c1 : (tensor<2x8x13x10xf32>) -> tensor<2x8x13x10xf32>
  %p = kt.max_pool2d %r {kernel_size = [3, 2], stride = [2, 2], padding = [1, 0]} : (tensor<2x8x13x10xf32>) -> tensor<2x8x7x5xf32>
  %c2 = kt.conv2d %p, %w2 {padding = [1, 1]} : (tensor<2x8x7x5xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x7x5xf32>
  %a = kt.add %c2, %p : (tensor<2x8x7x5xf32>, tensor<2x8x7x5xf32>) -> tensor<2x8x7x5xf32>
  %o = kt.conv2d %a, %w3 : (tensor<2x8x7x5xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x7x5xf32>
  return %o : tensor<2x8x7x5xf32>
}

// -----

// Left as they are: a conv that meets a grouped conv of two channels per
// group through a clamp, a depthwise conv with a channel multiplier (two
// output channels per group; both run in NCHW), an f64 conv, a grouped conv,
// a pointwise op with more NCHW full-size operands than channels-last ones,
// a conv whose twin nothing reads (the twin is erased), and a conv of one
// input channel (kiln-cpu-conv-im2col does not give it to oneDNN).
// CHECK-LABEL: func.func @left(
// CHECK-NOT: kt.permute
// CHECK: return
func.func @left(%x: tensor<2x8x6x6xf32>, %w: tensor<16x8x1x1xf32>, %dw: tensor<16x2x3x3xf32>, %xd: tensor<2x8x6x6xf64>, %wd: tensor<8x8x1x1xf64>, %wg: tensor<8x4x1x1xf32>, %y: tensor<2x8x6x6xf32>, %z: tensor<2x8x6x6xf32>, %cond: tensor<2x8x6x6xi1>, %w2: tensor<8x8x1x1xf32>, %x1: tensor<2x1x6x6xf32>, %w1: tensor<8x1x3x3xf32>, %wm: tensor<16x1x3x3xf32>) -> (tensor<2x16x6x6xf32>, tensor<2x8x6x6xf64>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x16x6x6xf32>) {
  %e = kt.conv2d %x, %w : (tensor<2x8x6x6xf32>, tensor<16x8x1x1xf32>) -> tensor<2x16x6x6xf32>
  %c6 = kt.clamp %e {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %d = kt.conv2d %c6, %dw {padding = [1, 1], groups = 8 : i64} : (tensor<2x16x6x6xf32>, tensor<16x2x3x3xf32>) -> tensor<2x16x6x6xf32>
  %f = kt.conv2d %xd, %wd : (tensor<2x8x6x6xf64>, tensor<8x8x1x1xf64>) -> tensor<2x8x6x6xf64>
  %g = kt.conv2d %x, %wg {groups = 2 : i64} : (tensor<2x8x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x6x6xf32>
  %u = kt.conv2d %y, %w2 : (tensor<2x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x6x6xf32>
  %s = kt.where %cond, %u, %z : (tensor<2x8x6x6xi1>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %v = kt.conv2d %z, %w2 : (tensor<2x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x6x6xf32>
  %one = kt.conv2d %x1, %w1 {padding = [1, 1]} : (tensor<2x1x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x6x6xf32>
  %q = kt.add %one, %one : (tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %m = kt.conv2d %x, %wm {padding = [1, 1], groups = 8 : i64} : (tensor<2x8x6x6xf32>, tensor<16x1x3x3xf32>) -> tensor<2x16x6x6xf32>
  return %d, %f, %g, %s, %v, %q, %m : tensor<2x16x6x6xf32>, tensor<2x8x6x6xf64>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x16x6x6xf32>
}

// -----

// mobilenet_v2's inverted residual: 1x1 expansion, ReLU6, depthwise 3x3
// (one input and one output channel per group), ReLU6, 1x1 projection, the
// residual add. Every conv runs channels-last: the expansion's twin is the
// conv's own, its ReLU6 runs on it and reaches the depthwise conv through
// the conv's permute, which kiln-cpu-outline-kernels puts into the
// depthwise conv's kernel with the ReLU6 as its prologue; the depthwise
// conv's ReLU6 is its epilogue and its twin goes into its kernel.
// CHECK-LABEL: func.func @inverted_residual(
// CHECK: %[[E:.*]] = kt.conv2d %arg0, %arg1, %arg2 :
// CHECK: %[[ET:.*]] = kt.permute %[[E]] {dims = [0, 2, 3, 1]}
// CHECK: %[[R:.*]] = kt.clamp %[[ET]] {{.*}} -> tensor<2x10x10x24xf32>
// CHECK: %[[RN:.*]] = kt.permute %[[R]] {dims = [0, 3, 1, 2]}
// CHECK: %[[D:.*]] = kt.conv2d %[[RN]], %arg3, %arg4 {groups = 24 : i64, padding = [1, 1]}
// CHECK: %[[DR:.*]] = kt.clamp %[[D]] {{.*}} -> tensor<2x24x10x10xf32>
// CHECK: %[[DT:.*]] = kt.permute %[[DR]] {dims = [0, 2, 3, 1]}
// CHECK: %[[PN:.*]] = kt.permute %[[DT]] {dims = [0, 3, 1, 2]}
// CHECK: %[[P:.*]] = kt.conv2d %[[PN]], %arg5, %arg6 :
// CHECK: %[[PT:.*]] = kt.permute %[[P]] {dims = [0, 2, 3, 1]}
// CHECK: kt.add %[[PT]], %{{.*}} : (tensor<2x10x10x8xf32>, tensor<2x10x10x8xf32>)
// PIPE-LABEL: func.func @inverted_residual(
// PIPE: %[[E:.*]] = call @kernel_conv2d_permute(%arg0, %arg1, %arg2)
// PIPE: %[[D:.*]] = call @kernel_clamp_conv2d_clamp_permute(%[[E]], %arg3, %arg4) : {{.*}} -> tensor<2x10x10x24xf32>
// PIPE: call @kernel_conv2d_permute_0(%[[D]], %arg5, %arg6)
// PIPE-LABEL: func.func private @kernel_clamp_conv2d_clamp_permute(
// PIPE: kt.clamp %arg0
// PIPE: kt.permute {{.*}} {dims = [0, 3, 1, 2]}
// PIPE: kt.conv2d
// PIPE: kt.clamp
// PIPE: kt.permute {{.*}} {dims = [0, 2, 3, 1]}
// CALLS-LABEL: func.func private @kernel_clamp_conv2d_clamp_permute(
// CALLS-NOT: linalg.
// n 2 g 24 c 1 10x10 (unpadded), f 1 k 3x3 -> 10x10; x and y channels-last
// (group stride 1, rows 240, columns 24); padding 1; both clamps (flags 3).
// CALLS: call @kiln_onednn_conv2d_post_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c24_i64, %c1_i64, %c10_i64, %c10_i64, %c1_i64, %c3_i64, %c3_i64, %c10_i64, %c10_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c2400_i64, %c1_i64, %c1_i64, %c240_i64, %c24_i64, %c9_i64, %c9_i64, %c9_i64, %c3_i64, %c1_i64, %c2400_i64, %c1_i64, %c1_i64, %c240_i64, %c24_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c0_i64, %c3_i64,
// CALLS-NOT: linalg.
// CALLS: return
func.func @inverted_residual(%x: tensor<2x8x10x10xf32>, %w1: tensor<24x8x1x1xf32>, %b1: tensor<24xf32>, %w2: tensor<24x1x3x3xf32>, %b2: tensor<24xf32>, %w3: tensor<8x24x1x1xf32>, %b3: tensor<8xf32>, %w4: tensor<8x8x1x1xf32>) -> tensor<2x8x10x10xf32> {
  %e = kt.conv2d %x, %w1, %b1 : (tensor<2x8x10x10xf32>, tensor<24x8x1x1xf32>, tensor<24xf32>) -> tensor<2x24x10x10xf32>
  %r = kt.clamp %e {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  %d = kt.conv2d %r, %w2, %b2 {padding = [1, 1], groups = 24 : i64} : (tensor<2x24x10x10xf32>, tensor<24x1x3x3xf32>, tensor<24xf32>) -> tensor<2x24x10x10xf32>
  %dr = kt.clamp %d {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  %p = kt.conv2d %dr, %w3, %b3 : (tensor<2x24x10x10xf32>, tensor<8x24x1x1xf32>, tensor<8xf32>) -> tensor<2x8x10x10xf32>
  %a = kt.add %p, %x : (tensor<2x8x10x10xf32>, tensor<2x8x10x10xf32>) -> tensor<2x8x10x10xf32>
  %o = kt.conv2d %a, %w4 : (tensor<2x8x10x10xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x10x10xf32>
  return %o : tensor<2x8x10x10xf32>
}

// -----

// A training forward graph (kiln-partition split batch_norm_train's
// normalization into pointwise ops that read the conv's output): the
// statistics read the conv's result in NCHW, so the conv gets no twin (its
// permute would be a copy next to the NCHW result), and the pointwise ops
// stay NCHW.
// CHECK-LABEL: func.func @training(
// CHECK-NOT: kt.permute
// CHECK: return
func.func @training(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %w2: tensor<8x8x3x3xf32>) -> (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c = kt.conv2d %x, %w {padding = [1, 1]} : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32>
  %y, %m, %r = kt.batch_norm_train %c : (tensor<2x8x6x6xf32>) -> (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>)
  %m4 = kt.reshape %m {shape = [8, 1, 1]} : (tensor<8xf32>) -> tensor<8x1x1xf32>
  %s = kt.sub %c, %m4 : (tensor<2x8x6x6xf32>, tensor<8x1x1xf32>) -> tensor<2x8x6x6xf32>
  %a = kt.relu %s : (tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %e = kt.conv2d %a, %w2 {padding = [1, 1]} : (tensor<2x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x6x6xf32>
  return %e, %m, %r : tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>
}
