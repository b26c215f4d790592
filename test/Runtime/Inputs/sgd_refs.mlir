// A training step on a linear model: the parameter %w is a ref; the step
// computes the loss sum((x * w)^2) / 2, its gradient, and updates %w in place.
kg.program @step(%w: !kt.ref<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  kg.guard_tensor %w {dtype = f32, shape = [4], requires_grad = true} : !kt.ref<4xf32>
  %l = kg.graph @step_g0(%w, %x) : (!kt.ref<4xf32>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<4xf32>, %a: tensor<4xf32>):
    %v = kt.load %r : (!kt.ref<4xf32>) -> tensor<4xf32>
    %0 = kt.mul %v, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = kt.mul %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = kt.sum %1 {dim = [0]} : (tensor<4xf32>) -> tensor<f32>
    %h = kt.full {size = [], value = 0.5, dtype = f32} : () -> tensor<f32>
    %3 = kt.mul %2, %h : (tensor<f32>, tensor<f32>) -> tensor<f32>
    kg.yield %3 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<4xf32>) -> tensor<4xf32>
  kg.graph @step_sgd(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%p: !kt.ref<4xf32>, %d: tensor<4xf32>):
    %lr = kt.full {size = [], value = 0.5, dtype = f32} : () -> tensor<f32>
    %0 = kt.mul %d, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kt.sub_ %p, %0 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return %l : tensor<f32>
}
