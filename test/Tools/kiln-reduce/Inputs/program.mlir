kg.program @p(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %l = kg.graph @p_g0(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %0 = kt.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = arith.negf %0 : tensor<4x8xf32>
    %2 = kt.softmax %1 {dim = -1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kg.yield %2 : tensor<4x8xf32>
  }
  kg.return %l : tensor<4x8xf32>
}
