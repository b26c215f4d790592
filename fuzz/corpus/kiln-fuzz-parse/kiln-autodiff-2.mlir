func.func @used_twice(%x: tensor<2x3xf64>, %b: tensor<3xf64>) -> tensor<2x3xf64> attributes {kg.differentiate} {
  %0 = kt.mul %x, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = kt.add %0, %b : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  return %1 : tensor<2x3xf64>
}
