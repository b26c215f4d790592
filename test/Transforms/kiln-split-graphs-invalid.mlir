// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-split-graphs="disallow=kt.abs"

// Tests that a disallowed op in a graph function (an outlined graph) is an
// error: only inline graphs are split.
func.func private @outlined_g0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  // expected-error@below {{disallowed op 'kt.abs' is in the graph function @outlined_g0; kiln-split-graphs splits inline graphs only: run it before kiln-outline-graphs (or after kiln-inline-graphs)}}
  %0 = kt.abs %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
kg.program @outlined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @outlined_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a disallowed op nested in a region of another graph op is an
// error: graphs are split at top-level ops only.
kg.program @nested(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %y = kg.graph @nested_g0(%x, %c) : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %p: tensor<i1>):
    %e = tensor.extract %p[] : tensor<i1>
    %r = scf.if %e -> (tensor<4xf32>) {
      // expected-error@below {{disallowed op 'kt.abs' is nested in a region of 'scf.if'; kiln-split-graphs splits graphs at top-level ops only}}
      %0 = kt.abs %a : (tensor<4xf32>) -> tensor<4xf32>
      scf.yield %0 : tensor<4xf32>
    } else {
      scf.yield %a : tensor<4xf32>
    }
    kg.yield %r : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}
