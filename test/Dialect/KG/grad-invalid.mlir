// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests the errors of kg.grad: a loss that is not a scalar float, a loss not
// computed by a graph, wrt values that are not inputs of the loss's graph or
// do not reach the loss, bad types, and kg.grad inside a graph.

kg.program @loss_not_scalar(%w: tensor<3xf32>) -> tensor<3xf32> {
  %l = kg.graph @g(%w) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    kg.yield %a : tensor<3xf32>
  }
  // expected-error@below {{'kg.grad' op loss must be a rank-0 float tensor (a scalar loss), got 'tensor<3xf32>'}}
  %g = kg.grad %l wrt(%w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}

// -----

kg.program @loss_int(%w: tensor<3xi64>) -> tensor<3xi64> {
  %l = kg.graph @g(%w) : (tensor<3xi64>) -> tensor<i64> {
  ^bb0(%a: tensor<3xi64>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xi64>) -> tensor<i64>
    kg.yield %0 : tensor<i64>
  }
  // expected-error@below {{'kg.grad' op loss must be a rank-0 float tensor (a scalar loss), got 'tensor<i64>'}}
  %g = kg.grad %l wrt(%w) : (tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
  kg.return %g : tensor<3xi64>
}

// -----

kg.program @loss_is_argument(%w: tensor<3xf32>, %l: tensor<f32>) -> tensor<3xf32> {
  // expected-error@below {{'kg.grad' op loss is not computed by a kg.graph (kg.grad differentiates through the graph that computes the loss)}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}

// -----

kg.program @no_wrt(%w: tensor<3xf32>) {
  %l = kg.graph @g(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op needs at least one value to differentiate with respect to}}
  kg.grad %l wrt() : (tensor<f32>) -> ()
  kg.return
}

// -----

kg.program @wrt_not_input(%w: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-note@below {{the loss's graph @g}}
  %l = kg.graph @g(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op wrt operand #1 is not an input of the graph computing the loss; kg.grad differentiates through that one graph}}
  %g:2 = kg.grad %l wrt(%w, %v) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  kg.return %g#1 : tensor<3xf32>
}

// -----

kg.program @wrt_through_two_graphs(%w: tensor<3xf32>) -> tensor<3xf32> {
  %y = kg.graph @g0(%w) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = kt.exp %a : (tensor<3xf32>) -> tensor<3xf32>
    kg.yield %0 : tensor<3xf32>
  }
  // expected-note@below {{the loss's graph @g1}}
  %l = kg.graph @g1(%y) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op wrt operand #0 is not an input of the graph computing the loss; kg.grad differentiates through that one graph}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}

// -----

kg.program @wrt_unused(%w: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-note@below {{the loss's graph}}
  %l = kg.graph @g(%w, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op wrt operand #1 does not reach the loss in graph @g (set allow_unused to get zeros for it)}}
  %g:2 = kg.grad %l wrt(%w, %v) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  kg.return %g#1 : tensor<3xf32>
}

// -----

func.func private @g(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) attributes {kg.graph_function} {
  %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
  return %0, %b : tensor<f32>, tensor<3xf32>
}
kg.program @wrt_unused_outlined(%w: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-note@below {{the loss's graph}}
  %l, %y = kg.graph @g(%w, %v) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  // expected-error@below {{'kg.grad' op wrt operand #1 does not reach the loss in graph @g (set allow_unused to get zeros for it)}}
  %g:2 = kg.grad %l wrt(%w, %v) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  kg.return %g#1 : tensor<3xf32>
}

// -----

kg.program @wrt_int(%w: tensor<3xf32>, %i: tensor<3xi64>) -> tensor<3xi64> {
  %l = kg.graph @g(%w, %i) : (tensor<3xf32>, tensor<3xi64>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xi64>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op wrt operand #0 must be a float tensor or !kt.ref, got 'tensor<3xi64>'}}
  %g = kg.grad %l wrt(%i) : (tensor<f32>, tensor<3xi64>) -> tensor<3xi64>
  kg.return %g : tensor<3xi64>
}

// -----

kg.program @bad_result_type(%w: tensor<3xf32>) -> tensor<4xf32> {
  %l = kg.graph @g(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op result #0 has type 'tensor<4xf32>' but the gradient of wrt operand #0 has type 'tensor<3xf32>'}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<4xf32>
  kg.return %g : tensor<4xf32>
}

// -----

kg.program @other_block(%w: tensor<3xf32>, %c: i1) -> tensor<3xf32> {
  // expected-note@below {{the loss's graph}}
  %l = kg.graph @g(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  %r = scf.if %c -> tensor<3xf32> {
    // expected-error@below {{'kg.grad' op must be in the same block as the kg.graph computing its loss}}
    %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
    scf.yield %g : tensor<3xf32>
  } else {
    scf.yield %w : tensor<3xf32>
  }
  kg.return %r : tensor<3xf32>
}

// -----

func.func @not_in_program(%w: tensor<3xf32>, %l: tensor<f32>) -> tensor<3xf32> {
  // expected-error@below {{'kg.grad' op must be inside a kg.program}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

kg.program @ref_grad_type(%w: !kt.ref<3xf32>) -> !kt.ref<3xf32> {
  %l = kg.graph @g(%w) : (!kt.ref<3xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<3xf32>):
    %a = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error@below {{'kg.grad' op result #0 must be variadic of ranked tensor of any type values, but got '!kt.ref<3xf32>'}}
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> !kt.ref<3xf32>
  kg.return %g : !kt.ref<3xf32>
}

// -----

kg.program @guard_scalar(%n: i64) {
  // expected-error@below {{'kg.guard_tensor' op guards a value of type 'i64'; expected a ranked tensor or a !kt.ref}}
  kg.guard_tensor %n {dtype = i64, shape = []} : i64
  kg.return
}
