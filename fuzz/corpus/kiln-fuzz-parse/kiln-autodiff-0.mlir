func.func @sine(%x: tensor<3xf64>) -> tensor<3xf64> attributes {kg.differentiate} {
  %0 = kt.sin %x : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
