func.func @add_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.add %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}
