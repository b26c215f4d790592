// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-inline-allowed

// Tests that an allow_in_graph function with several blocks cannot be
// traced through.
func.func private @branchy(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  cf.br ^bb1
^bb1:
  return %a : tensor<4xf32>
}
kg.program @multi_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @multi_block_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error@below {{cannot trace through @branchy: its body has 2 blocks; only single-block functions are inlined}}
    %0 = func.call @branchy(%a) : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that an allow_in_graph declaration cannot be traced through.
func.func private @external(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph}
kg.program @declaration(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @declaration_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error@below {{cannot trace through @external: it is a declaration without a body}}
    %0 = func.call @external(%a) : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a recursive allow_in_graph function is an error, not a hang.
func.func private @recurse(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  // expected-error@below {{allow_in_graph calls through @recurse nest deeper than 32 (a recursive function cannot be traced into a graph)}}
  %0 = call @recurse(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
kg.program @recursive(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @recursive_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = func.call @recurse(%a) : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that an allow_in_graph function holding a host op cannot be traced
// into a graph.
func.func private @prints(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  // expected-note@below {{host op here}}
  kg.host_call @print(%a) : (tensor<4xf32>) -> ()
  return %a : tensor<4xf32>
}
kg.program @host_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @host_op_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error@below {{allow_in_graph function @prints holds the host op 'kg.host_call', which cannot be traced into a graph}}
    %0 = func.call @prints(%a) : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}
