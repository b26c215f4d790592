func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = kt.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = kt.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
