func.func @isnan_i64(%a: tensor<?x2xi64>) -> tensor<?x2xi1> {
  %0 = kt.isnan %a : (tensor<?x2xi64>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}
