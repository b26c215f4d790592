// RUN: kiln-opt %s -split-input-file -kiln-autodiff | FileCheck %s
// RUN: kiln-opt %s -split-input-file '-kiln-autodiff=fold-norm-activation=true' | FileCheck %s
// RUN: kiln-opt %s -split-input-file '-kiln-autodiff=fold-norm-activation=false' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=policy=mincut' | FileCheck %s --check-prefix=PART

// On by default (rd25); with fold-norm-activation=false the mask stays a
// kt.where.
// OFF-LABEL: func.func @relu6_joint(
// OFF: kt.where
// OFF: kt.batch_norm_backward
// OFF-NOT: activation
// OFF: return

// Under mincut the backward recomputes nothing for the mask and reads the
// bias (an argument of the forward, saved as such).
// PART-LABEL: func.func @relu6_bwd(
// PART-NOT: kt.where
// PART-NOT: kt.clamp
// PART: kt.batch_norm_backward %{{.*}} bias %{{[^ ]+}} {activation = #kt.activation<relu6>}
// PART: return

// Tests that kiln-autodiff's fold-norm-activation folds the mask of a
// kt.relu / kt.clamp 0..6 into kt.batch_norm_backward (the activation's
// gradient and the bias as operands, the attribute), and that the mask ops
// are erased: the backward reads neither the forward's result nor the
// activation's.
// CHECK-LABEL: func.func @relu6_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x5xf32>, %[[W:[^:]+]]: tensor<3xf32>, %[[B:[^:]+]]: tensor<3xf32>, %[[CT:[^:]+]]: tensor<2x3x5xf32>)
// CHECK: %{{[^,]+}}, %[[M:[^,]+]], %[[R:[^ ]+]] = kt.batch_norm_train %[[X]] weight %[[W]] bias %[[B]]
// CHECK-NEXT: kt.clamp
// CHECK-NEXT: kt.batch_norm_backward %[[CT]], %[[X]], %[[M]], %[[R]] weight %[[W]] bias %[[B]] {activation = #kt.activation<relu6>}
// CHECK-NOT: kt.where
// CHECK-NOT: kt.ge
// CHECK-NOT: kt.le
// CHECK: return
func.func @relu6(%x: tensor<2x3x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x5xf32> attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x weight %w bias %b : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = kt.clamp %y#0 {min = 0.0, max = 6.0} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}

// -----

// kt.relu, no weight, a `?` batch.
// CHECK-LABEL: func.func @relu_joint(
// CHECK: kt.relu
// CHECK-NEXT: kt.batch_norm_backward %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} bias %{{[^ ]+}} {activation = #kt.activation<relu>} : (tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NOT: kt.where
// CHECK-NOT: kt.gt
// CHECK: return
func.func @relu(%x: tensor<?x3x5xf32>, %b: tensor<3xf32>) -> tensor<?x3x5xf32> attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x bias %b : (tensor<?x3x5xf32>, tensor<3xf32>) -> (tensor<?x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = kt.relu %y#0 : (tensor<?x3x5xf32>) -> tensor<?x3x5xf32>
  return %r : tensor<?x3x5xf32>
}

// -----

// Not folded: a clamp other than 0..6 (its mask stays a kt.where), a result
// with a second use (its cotangent is a sum), a batch norm without an
// activation.
// CHECK-LABEL: func.func @clamp01_joint(
// CHECK: kt.where
// CHECK: kt.batch_norm_backward %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} weight %{{[^ ]+}} :
// CHECK-NOT: activation
// CHECK: return
func.func @clamp01(%x: tensor<2x3x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x5xf32> attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x weight %w bias %b : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = kt.clamp %y#0 {min = 0.0, max = 1.0} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @two_uses_joint(
// CHECK: kt.where
// CHECK: kt.add
// CHECK: kt.batch_norm_backward %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} weight %{{[^ ]+}} :
// CHECK-NOT: activation
// CHECK: return
func.func @two_uses(%x: tensor<2x3x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x weight %w bias %b : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = kt.relu %y#0 : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r, %y#0 : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @tanh_joint(
// CHECK: kt.batch_norm_backward %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} weight %{{[^ ]+}} :
// CHECK-NOT: activation
// CHECK: return
func.func @tanh(%x: tensor<2x3x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x5xf32> attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x weight %w bias %b : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = kt.tanh %y#0 : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}
