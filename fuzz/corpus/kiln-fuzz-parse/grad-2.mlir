func.func private @outlined_g0(%a: tensor<2xf64>, %u: tensor<2xf64>) -> (tensor<2xf64>, tensor<f64>) attributes {kg.graph_function} {
  %0 = kt.sum %a {dim = [0]} : (tensor<2xf64>) -> tensor<f64>
  return %u, %0 : tensor<2xf64>, tensor<f64>
}
kg.program @outlined(%w: tensor<2xf64>, %u: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %y, %l = kg.graph @outlined_g0(%w, %u) : (tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<f64>)
  %g:2 = kg.grad %l wrt(%w, %u) {allow_unused} : (tensor<f64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  kg.return %g#0, %g#1 : tensor<2xf64>, tensor<2xf64>
}
