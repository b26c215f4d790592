// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-autodiff

// Tests that an op without a vector-Jacobian rule is an error at its
// location when its result is needed for a gradient.
// Every kt op has a rule; a non-kt op (arith on tensors) has none.
func.func @no_rule(%x: tensor<4xf32>) -> tensor<4xf32> attributes {kg.differentiate} {
  // expected-error@below {{kiln-autodiff: no vector-Jacobian rule for 'arith.negf', whose result is needed for a gradient}}
  %0 = arith.negf %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that an op without a rule is fine when no gradient flows through it
// (its input does not require grad).
func.func @no_rule_unneeded(%x: tensor<4xf32> {kg.requires_grad = false}, %y: tensor<4xf32>) -> tensor<4xf32> attributes {kg.differentiate} {
  %0 = arith.negf %x : tensor<4xf32>
  %1 = kt.mul %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Tests that only float arguments can require grad.
// expected-error@below {{kiln-autodiff: argument #0 of type 'tensor<3xi64>' requires grad but only float tensors can}}
func.func @int_requires_grad(%i: tensor<3xi64> {kg.requires_grad = true}) -> tensor<3xi64> attributes {kg.differentiate} {
  return %i : tensor<3xi64>
}

// -----

// Tests that a convolution's gradient needs static channel and spatial dims
// (only the batch may be dynamic): an error at the convolution.
func.func @conv_dynamic_height(%x: tensor<2x3x?x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x?x3xf32> attributes {kg.differentiate} {
  // expected-error@below {{no gradient for 'kt.conv2d' with a dynamic channel or spatial dim (only the batch dim may be dynamic)}}
  %0 = kt.conv2d %x, %w : (tensor<2x3x?x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x?x3xf32>
  return %0 : tensor<2x4x?x3xf32>
}
