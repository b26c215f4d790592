kg.program @refs(%w: !kt.ref<3xf32>) -> tensor<3xf32> {
  kg.guard_tensor %w {dtype = f32, shape = [3], requires_grad = true} : !kt.ref<3xf32>
  %l = kg.graph @refs_g0(%w) : (!kt.ref<3xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<3xf32>):
    %a = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}
