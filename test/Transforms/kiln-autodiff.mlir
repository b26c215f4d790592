// RUN: kiln-opt %s -split-input-file -kiln-autodiff | FileCheck %s

// Tests that a unary op gets a joint function taking the output cotangent
// and returning the output and the input gradient (d sin = cos), and that
// the original function loses the kg.differentiate attribute, and that the
// joint describes itself (kg.joint: primal and output counts, source).
// CHECK-LABEL: func.func @sine(
// CHECK-NOT: kg.differentiate
// CHECK-LABEL: func.func @sine_joint(
// CHECK-SAME: %[[X:.+]]: tensor<3xf64>, %[[CT:.+]]: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
// CHECK-SAME: attributes {kg.joint = {num_outputs = 1 : i64, num_primals = 1 : i64, source = @sine}}
// CHECK-NEXT: %[[Y:.+]] = kt.sin %[[X]]
// CHECK-NEXT: %[[C:.+]] = kt.cos %[[X]]
// CHECK-NEXT: %[[G:.+]] = kt.mul %[[CT]], %[[C]]
// CHECK-NEXT: return %[[Y]], %[[G]] : tensor<3xf64>, tensor<3xf64>
func.func @sine(%x: tensor<3xf64>) -> tensor<3xf64> attributes {kg.differentiate} {
  %0 = kt.sin %x : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Tests that a value used twice gets its gradients summed with kt.add, and
// that a broadcast operand's gradient is summed back to its shape.
// CHECK-LABEL: func.func @used_twice_joint(
// CHECK-SAME: %[[X:.+]]: tensor<2x3xf64>, %[[B:.+]]: tensor<3xf64>, %[[CT:.+]]: tensor<2x3xf64>)
// CHECK: %[[M:.+]] = kt.mul %[[X]], %[[X]]
// CHECK: %[[Y:.+]] = kt.add %[[M]], %[[B]]
// CHECK: %[[GB:.+]] = kt.sum %[[CT]] {{.*}}: (tensor<2x3xf64>) -> tensor<3xf64>
// CHECK: %[[G1:.+]] = kt.mul %[[CT]], %[[X]]
// CHECK: %[[G2:.+]] = kt.mul %[[CT]], %[[X]]
// CHECK: %[[GX:.+]] = kt.add %[[G1]], %[[G2]]
// CHECK: return %[[Y]], %[[GX]], %[[GB]]
func.func @used_twice(%x: tensor<2x3xf64>, %b: tensor<3xf64>) -> tensor<2x3xf64> attributes {kg.differentiate} {
  %0 = kt.mul %x, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = kt.add %0, %b : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  return %1 : tensor<2x3xf64>
}

// -----

// Tests that kg.requires_grad = false drops an argument's gradient, that an
// integer argument (the target) requires no grad by default, and that an
// integer result gets no cotangent argument.
// CHECK-LABEL: func.func @loss_joint(
// CHECK-SAME: %{{.+}}: tensor<4x5xf64>, %{{.+}}: tensor<5xf64> {kg.requires_grad = false}, %{{.+}}: tensor<4xi64>, %[[CT:.+]]: tensor<f64>)
// CHECK-SAME: -> (tensor<f64>, tensor<4xi64>, tensor<4x5xf64>)
// CHECK-SAME: kg.joint = {num_outputs = 2 : i64, num_primals = 3 : i64, source = @loss}
// CHECK: kt.cross_entropy
// CHECK: kt.argmax
// CHECK: kt.log_softmax
// CHECK: return
func.func @loss(%x: tensor<4x5xf64>, %w: tensor<5xf64> {kg.requires_grad = false}, %t: tensor<4xi64>) -> (tensor<f64>, tensor<4xi64>) attributes {kg.differentiate} {
  %0 = kt.cross_entropy %x, %t, %w : (tensor<4x5xf64>, tensor<4xi64>, tensor<5xf64>) -> tensor<f64>
  %1 = kt.argmax %x {dim = 1 : i64} : (tensor<4x5xf64>) -> tensor<4xi64>
  return %0, %1 : tensor<f64>, tensor<4xi64>
}

// -----

// Tests that an argument with no path to an output gets a zero gradient, an
// argument returned as is gets the cotangent, and
// that ops off the gradient path (comparisons, floor) need no backward ops.
// CHECK-LABEL: func.func @unused_joint(
// CHECK-SAME: %[[X:.+]]: tensor<2xf32>, %[[Y:.+]]: tensor<2xf32>, %[[CT:.+]]: tensor<2xf32>)
// CHECK: %[[F:.+]] = kt.floor %[[Y]]
// CHECK: %[[Z:.+]] = kt.full {{.*}}value = 0.000000e+00 : f64{{.*}} -> tensor<2xf32>
// CHECK: return %[[X]], %[[CT]], %[[Z]]
func.func @unused(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> attributes {kg.differentiate} {
  %0 = kt.floor %y : (tensor<2xf32>) -> tensor<2xf32>
  %1 = kt.gt %0, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %x : tensor<2xf32>
}

// -----

// Tests that a reshape (a flatten) of an input with a dynamic batch dim
// differentiates: the cotangent is reshaped back with the dynamic dim as
// the one inferred size (-1).
// CHECK-LABEL: func.func @flatten_dynamic_batch_joint(
// CHECK: kt.reshape %{{.+}} {shape = [-1, 144]} : (tensor<?x4x6x6xf32>) -> tensor<?x144xf32>
// CHECK: kt.reshape %{{.+}} {shape = [-1, 4, 6, 6]} : (tensor<?x144xf32>) -> tensor<?x4x6x6xf32>
func.func @flatten_dynamic_batch(%x: tensor<?x4x6x6xf32>) -> tensor<?x144xf32> attributes {kg.differentiate} {
  %0 = kt.reshape %x {shape = [-1, 144]} : (tensor<?x4x6x6xf32>) -> tensor<?x144xf32>
  return %0 : tensor<?x144xf32>
}
