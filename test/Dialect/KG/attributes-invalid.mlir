// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that kg ops reject attributes they do not define, naming the
// attribute and listing the op's own: a guard (a misspelled requires_grad).
kg.program @guard_typo(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kg.guard_tensor' op has no attribute 'requires_gradient' (attributes: device, dtype, requires_grad, shape, strides; an annotation needs a dialect prefix, as in 'kiln.note')}}
  kg.guard_tensor %x {dtype = f32, shape = [4], requires_gradient = true} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests a graph (an unknown attribute next to the region form).
kg.program @graph_unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kg.graph' op has no attribute 'fullgraph' (attributes: callee;}}
  %y = kg.graph @g(%x) {fullgraph} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kg.yield %a : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests the program itself (its `attributes {...}` dictionary).
// expected-error @+1 {{'kg.program' op has no attribute 'dynamic' (attributes: arg_attrs, function_type, res_attrs, sym_name;}}
kg.program @program_unknown(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynamic = true} {
  kg.return %x : tensor<4xf32>
}

// -----

// Tests kg.grad (a misspelled allow_unused).
kg.program @grad_typo(%w: tensor<4xf32>) -> tensor<4xf32> {
  %l = kg.graph @loss(%w) : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.sum %a : (tensor<4xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  // expected-error @+1 {{'kg.grad' op has no attribute 'allow_unsued' (attributes: allow_unused;}}
  %g = kg.grad %l wrt(%w) {allow_unsued} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  kg.return %g : tensor<4xf32>
}

// -----

// Tests a break and a host call.
kg.program @break_unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kg.break' op has no attribute 'line' (attributes: reason;}}
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<4xf32>) -> ()
  } {line = 3}
  kg.return %x : tensor<4xf32>
}

// -----

kg.program @host_call_unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  kg.break "call_function print" {
    // expected-error @+1 {{'kg.host_call' op has no attribute 'flush' (attributes: callee;}}
    kg.host_call @print(%x) {flush} : (tensor<4xf32>) -> ()
  }
  kg.return %x : tensor<4xf32>
}
