// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-aot-autograd
// RUN: not kiln-opt %s -split-input-file -kiln-aot-autograd=partition=fastest 2>&1 | FileCheck %s --check-prefix=POLICY

// RUN: not kiln-opt %s -split-input-file -kiln-aot-autograd=memory-budget=2 2>&1 | FileCheck %s --check-prefix=BUDGET

// BUDGET: error: memory-budget must be in [0, 1], got 2
// POLICY: error: unknown partition policy 'fastest' (expected one of: none save-all recompute-all mincut)

// Tests that an op without a vector-Jacobian rule on the loss's path is an
// error at the op.
kg.program @no_rule(%w: tensor<3xf32>) -> tensor<3xf32> {
  %l = kg.graph @g(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>):
    // expected-error@below {{kiln-autodiff: no vector-Jacobian rule for 'arith.negf', whose result is needed for a gradient}}
    %0 = arith.negf %a : tensor<3xf32>
    %1 = kt.sum %0 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %1 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}

// -----

// Tests that two kg.grad of one graph are an error (one kg.grad takes every
// gradient of a loss).
kg.program @two_grads(%w: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %l = kg.graph @g(%w, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %0 = kt.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.sum %0 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %1 : tensor<f32>
  }
  // expected-note@below {{the first kg.grad}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  // expected-error@below {{'kg.grad' op differentiates a graph that another kg.grad already differentiates; compute both gradients in one kg.grad}}
  %h = kg.grad %l wrt(%v) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  kg.return %g, %h : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that a loss graph writing to a ref it differentiates through is an
// error (parameters are updated in another graph).
kg.program @ref_written(%w: !kt.ref<3xf32>) -> tensor<3xf32> {
  %l = kg.graph @g(%w) : (!kt.ref<3xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<3xf32>):
    %a = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    // expected-note@below {{this use}}
    kt.relu_ %r : (!kt.ref<3xf32>) -> ()
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op the loss's graph @g uses its ref input #0 other than by kt.load; a ref it differentiates through must only be read (mutate parameters in another graph)}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}
