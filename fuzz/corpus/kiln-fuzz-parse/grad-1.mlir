kg.program @inline(%w: tensor<3xf32>, %b: tensor<f32>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %l = kg.graph @inline_g0(%w, %b, %x) : (tensor<3xf32>, tensor<f32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %c: tensor<f32>, %d: tensor<3xf32>):
    %0 = kt.mul %a, %d : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.add %0, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %2 = kt.sum %1 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %2 : tensor<f32>
  }
  %g:2 = kg.grad %l wrt(%w, %b) : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<f32>)
  kg.return %g#0, %g#1 : tensor<3xf32>, tensor<f32>
}
