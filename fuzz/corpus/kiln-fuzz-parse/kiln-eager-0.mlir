func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  %0 = kt.sin %a : (tensor<4xf32>) -> tensor<4xf32> loc("helper.py":1:4)
  return %0 : tensor<4xf32>
}
kg.program @eager(%x: tensor<4xf32>) -> (tensor<4xf32>, i1, i1) {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %y:2 = kg.graph @eager_g0(%x) : (tensor<4xf32>) -> (tensor<4xf32>, i1) {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a {kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":3:8)
    %1 = kt.abs %0 : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":4:8)
    %2 = func.call @helper(%1) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":5:8)
    %c = kg.is_compiling
    kg.yield %2, %c : tensor<4xf32>, i1
  }
  %h = kg.is_compiling
  kg.return %y#0, %y#1, %h : tensor<4xf32>, i1, i1
}
