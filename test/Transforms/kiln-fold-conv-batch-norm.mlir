// kiln-fold-conv-batch-norm: inference batch_norm folded into the conv2d it
// normalizes (scaled weight, new bias), and the cases it must leave alone.
// RUN: kiln-opt %s -kiln-fold-conv-batch-norm | FileCheck %s
// The pipeline option: kiln-aot-eager{fold-conv-bn} folds, kiln-aot-eager
// does not (the batch_norm is decomposed over the activations).
// RUN: kiln-opt %s -pass-pipeline='builtin.module(kiln-aot-eager{fold-conv-bn=true})' | FileCheck %s --check-prefix=AOT
// RUN: kiln-opt %s -pass-pipeline='builtin.module(kiln-aot-eager)' | FileCheck %s --check-prefix=NOFOLD
// The folded functions compute what the unfolded ones do (the interpreter on
// both, random inputs; a negative running_var gives NaN channels in both).
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-fold-conv-batch-norm)' \
// RUN:   --entry=affine_no_conv_bias --entry=conv_bias_no_affine_depthwise \
// RUN:   --entry=bn_result_read_twice --input-dims=2 --seeds=3 | FileCheck %s --check-prefix=SEM
// SEM: 9 passed, 0 failed

// CHECK-LABEL: func.func @affine_no_conv_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[M:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[EPS:.*]] = kt.full {{.*}}1.000000e-03
// CHECK: %[[VE:.*]] = kt.add %[[V]], %[[EPS]]
// CHECK: %[[R:.*]] = kt.rsqrt %[[VE]]
// CHECK: %[[S:.*]] = kt.mul %[[G]], %[[R]]
// CHECK: kt.unsqueeze %[[S]]
// CHECK: kt.unsqueeze
// CHECK: %[[S4:.*]] = kt.unsqueeze {{.*}} -> tensor<4x1x1x1xf32>
// CHECK: %[[W2:.*]] = kt.mul %[[W]], %[[S4]] : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
// CHECK: %[[NM:.*]] = kt.neg %[[M]]
// CHECK: %[[T:.*]] = kt.mul %[[NM]], %[[S]]
// CHECK: %[[B2:.*]] = kt.add %[[T]], %[[B]]
// CHECK: %[[Y:.*]] = kt.conv2d %[[X]], %[[W2]], %[[B2]] {kg.nn_module_stack = ["conv"], padding = [1, 1], stride = [2, 2]}
// CHECK-NOT: kt.batch_norm
// CHECK: return %[[Y]]
// AOT-LABEL: func.func @affine_no_conv_bias
// AOT: %[[W2:.*]] = kt.mul %arg1, {{.*}} -> tensor<4x3x3x3xf32>
// AOT: %[[Y:.*]] = kt.conv2d %arg0, %[[W2]], %{{.*}} {{.*}} -> tensor<2x4x4x4xf32>
// AOT-NEXT: return %[[Y]]
// NOFOLD-LABEL: func.func @affine_no_conv_bias
// NOFOLD: kt.conv2d
// NOFOLD: kt.sub {{.*}} : (tensor<2x4x4x4xf32>, tensor<4x1x1xf32>)
func.func @affine_no_conv_bias(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %y = kt.conv2d %x, %w {kg.nn_module_stack = ["conv"], padding = [1, 1], stride = [2, 2]} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  %r = kt.batch_norm %y, %m, %v weight %g bias %b {eps = 1.0e-03 : f64} : (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  return %r : tensor<2x4x4x4xf32>
}

// A conv bias, no affine parameters, f64, a depthwise conv (groups kept),
// `?` batch.
// CHECK-LABEL: func.func @conv_bias_no_affine_depthwise
// CHECK-SAME: (%[[X:.*]]: tensor<?x6x5x5xf64>, %[[W:.*]]: tensor<6x1x3x3xf64>, %[[CB:.*]]: tensor<6xf64>, %[[M:.*]]: tensor<6xf64>, %[[V:.*]]: tensor<6xf64>)
// CHECK: %[[EPS:.*]] = kt.full {{.*}}1.000000e-05
// CHECK: %[[S:.*]] = kt.rsqrt
// CHECK: %[[W2:.*]] = kt.mul %[[W]], {{.*}} : (tensor<6x1x3x3xf64>, tensor<6x1x1x1xf64>)
// CHECK: %[[C:.*]] = kt.sub %[[CB]], %[[M]]
// CHECK: %[[B2:.*]] = kt.mul %[[C]], %[[S]]
// CHECK-NOT: kt.add
// CHECK: %[[Y:.*]] = kt.conv2d %[[X]], %[[W2]], %[[B2]] {groups = 6 : i64, padding = [1, 1]} : (tensor<?x6x5x5xf64>, tensor<6x1x3x3xf64>, tensor<6xf64>) -> tensor<?x6x5x5xf64>
// CHECK: return %[[Y]]
func.func @conv_bias_no_affine_depthwise(%x: tensor<?x6x5x5xf64>, %w: tensor<6x1x3x3xf64>, %cb: tensor<6xf64>, %m: tensor<6xf64>, %v: tensor<6xf64>) -> tensor<?x6x5x5xf64> {
  %y = kt.conv2d %x, %w, %cb {groups = 6 : i64, padding = [1, 1]} : (tensor<?x6x5x5xf64>, tensor<6x1x3x3xf64>, tensor<6xf64>) -> tensor<?x6x5x5xf64>
  %r = kt.batch_norm %y, %m, %v : (tensor<?x6x5x5xf64>, tensor<6xf64>, tensor<6xf64>) -> tensor<?x6x5x5xf64>
  return %r : tensor<?x6x5x5xf64>
}

// The batch_norm's result read twice: both reads get the folded conv.
// CHECK-LABEL: func.func @bn_result_read_twice
// CHECK: %[[Y:.*]] = kt.conv2d
// CHECK-NOT: kt.batch_norm
// CHECK: %[[A:.*]] = kt.relu %[[Y]]
// CHECK: return %[[Y]], %[[A]]
func.func @bn_result_read_twice(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %y = kt.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = kt.batch_norm %y, %m, %v : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %a = kt.relu %r : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r, %a : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// Left alone: the conv's result is also returned (the unnormalized value is
// needed).
// CHECK-LABEL: func.func @conv_result_returned
// CHECK: %[[Y:.*]] = kt.conv2d %{{.*}}, %{{.*}} :
// CHECK: %[[R:.*]] = kt.batch_norm %[[Y]]
// CHECK: return %[[Y]], %[[R]]
func.func @conv_result_returned(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %y = kt.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = kt.batch_norm %y, %m, %v : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y, %r : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// Left alone: the conv's result is read by another op too.
// CHECK-LABEL: func.func @conv_result_read_elsewhere
// CHECK: %[[Y:.*]] = kt.conv2d %{{.*}}, %{{.*}} :
// CHECK: kt.batch_norm %[[Y]]
// CHECK: kt.relu %[[Y]]
func.func @conv_result_read_elsewhere(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %y = kt.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = kt.batch_norm %y, %m, %v : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %a = kt.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = kt.add %r, %a : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %s : tensor<1x2x4x4xf32>
}

// Left alone: more weights than outputs (16x8x3x3 = 1152 weights, 64
// outputs): folding would cost more per call than the normalization.
// CHECK-LABEL: func.func @weights_larger_than_output
// CHECK: %[[Y:.*]] = kt.conv2d %{{.*}}, %{{.*}} :
// CHECK: kt.batch_norm %[[Y]]
func.func @weights_larger_than_output(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x3x3xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<1x16x2x2xf32> {
  %y = kt.conv2d %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x2x2xf32>
  %r = kt.batch_norm %y, %m, %v : (tensor<1x16x2x2xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x2x2xf32>
  return %r : tensor<1x16x2x2xf32>
}

// Left alone: an unbatched conv ([O, OH, OW]: batch_norm's channel dim 1 is
// OH, not the conv's output channels), an f16 conv (batch_norm computes in
// f32), and batch_norm of something else.
// CHECK-LABEL: func.func @not_folded
// CHECK: %[[U:.*]] = kt.conv2d %{{.*}}, %{{.*}} : (tensor<2x4x4xf32>
// CHECK: kt.batch_norm %[[U]]
// CHECK: %[[H:.*]] = kt.conv2d %{{.*}}, %{{.*}} : (tensor<1x2x4x4xf16>
// CHECK: kt.batch_norm %[[H]]
// CHECK: %[[E:.*]] = kt.relu
// CHECK: kt.batch_norm %[[E]]
func.func @not_folded(%xu: tensor<2x4x4xf32>, %wu: tensor<4x2x1x1xf32>, %mu: tensor<4xf32>, %vu: tensor<4xf32>,
                      %xh: tensor<1x2x4x4xf16>, %wh: tensor<2x2x1x1xf16>, %mh: tensor<2xf16>, %vh: tensor<2xf16>,
                      %x: tensor<1x2x4x4xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>)
    -> (tensor<4x4x4xf32>, tensor<1x2x4x4xf16>, tensor<1x2x4x4xf32>) {
  %u = kt.conv2d %xu, %wu : (tensor<2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<4x4x4xf32>
  %ru = kt.batch_norm %u, %mu, %vu : (tensor<4x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x4x4xf32>
  %h = kt.conv2d %xh, %wh : (tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x4x4xf16>
  %rh = kt.batch_norm %h, %mh, %vh : (tensor<1x2x4x4xf16>, tensor<2xf16>, tensor<2xf16>) -> tensor<1x2x4x4xf16>
  %e = kt.relu %x : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = kt.batch_norm %e, %m, %v : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %ru, %rh, %r : tensor<4x4x4xf32>, tensor<1x2x4x4xf16>, tensor<1x2x4x4xf32>
}
