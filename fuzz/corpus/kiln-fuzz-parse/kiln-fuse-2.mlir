func.func @diamond_cycle(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kt.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kt.transpose %0 {dim0 = 0, dim1 = 1} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kt.add %0, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
