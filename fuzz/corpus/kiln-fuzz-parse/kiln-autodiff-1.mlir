func.func @loss(%x: tensor<4x5xf64>, %w: tensor<5xf64> {kg.requires_grad = false}, %t: tensor<4xi64>) -> (tensor<f64>, tensor<4xi64>) attributes {kg.differentiate} {
  %0 = kt.cross_entropy %x, %t, %w : (tensor<4x5xf64>, tensor<4xi64>, tensor<5xf64>) -> tensor<f64>
  %1 = kt.argmax %x {dim = 1 : i64} : (tensor<4x5xf64>) -> tensor<4xi64>
  return %0, %1 : tensor<f64>, tensor<4xi64>
}
