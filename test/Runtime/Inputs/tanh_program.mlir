// A program with a kt.tanh in its graph: check-accuracy.test plants a
// miscompile of it in the CPU backend (kiln-cpu{test-miscompile=...}).
kg.program @p(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kg.graph @g(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %t = kt.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %r = kt.add %t, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    kg.yield %r : tensor<2x3xf32>
  }
  kg.return %y : tensor<2x3xf32>
}
