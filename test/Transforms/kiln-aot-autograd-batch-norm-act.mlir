// RUN: kiln-opt %s -kiln-aot-autograd | FileCheck %s
// RUN: kiln-opt %s '-kiln-aot-autograd=fold-norm-activation=false' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -kiln-aot-autograd=partition=mincut | FileCheck %s --check-prefix=PART

// Tests that kiln-aot-autograd folds a ReLU6's gradient mask into the
// joint's kt.batch_norm_backward (fold-norm-activation, on by default as in
// kiln-autodiff; rd25): the backward takes the loss's gradient of the
// clamp's result and the bias, and no kt.where is left. With the option
// off the mask stays a kt.where; partitioned (mincut), neither graph has
// one.
// CHECK-LABEL: func.func private @step_g0_joint(
// CHECK: kt.batch_norm_train
// CHECK: kt.clamp
// CHECK-NOT: kt.where
// CHECK: kt.batch_norm_backward {{.*}} bias %{{[^ ]+}} {activation = #kt.activation<relu6>}
// CHECK-NOT: kt.where
// CHECK: return

// OFF-LABEL: func.func private @step_g0_joint(
// OFF: kt.where
// OFF: kt.batch_norm_backward
// OFF-NOT: activation
// OFF: return

// (With a constant seed mincut computes the whole gradient in @step_g0_fwd
// and saves the two [3] gradients.)
// PART-LABEL: func.func private @step_g0_fwd(
// PART-NOT: kt.where
// PART: kt.batch_norm_backward {{.*}} {activation = #kt.activation<relu6>}
// PART-NOT: kt.where
// PART: func.func private @step_g0_bwd(
kg.program @step(%x: tensor<2x3x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %l = kg.graph @step_g0(%x, %w, %b) : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<2x3x5xf32>, %c: tensor<3xf32>, %d: tensor<3xf32>):
    %y:3 = kt.batch_norm_train %a weight %c bias %d : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
    %r = kt.clamp %y#0 {min = 0.0, max = 6.0} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
    %s = kt.mul %r, %a : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
    %t = kt.sum %s {dim = [0, 1, 2]} : (tensor<2x3x5xf32>) -> tensor<f32>
    kg.yield %t : tensor<f32>
  }
  %g:2 = kg.grad %l wrt(%w, %b) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  kg.return %l, %g#0, %g#1 : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}
