func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = kt.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %1 = kt.sin %0 : (tensor<16xf32>) -> tensor<16xf32>
  %2 = kt.cos %0 : (tensor<16xf32>) -> tensor<16xf32>
  %3 = kt.mul %1, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %3 : tensor<16xf32>
}
