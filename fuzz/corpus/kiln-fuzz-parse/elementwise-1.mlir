func.func @round_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.round %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}
