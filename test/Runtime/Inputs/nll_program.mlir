// A program whose graph fails at run time (a target out of range): the
// reproducer test's input (repro.test).
kg.program @p(%x: tensor<3x4xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  %l = kg.graph @g(%x, %t) : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32> {
  ^bb0(%a: tensor<3x4xf32>, %b: tensor<3xi64>):
    %r = kt.nll_loss %a, %b : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
    kg.yield %r : tensor<f32>
  }
  kg.return %l : tensor<f32>
}
