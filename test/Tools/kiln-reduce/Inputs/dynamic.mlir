// kiln-reduce's types.test: f64 arguments with a dynamic batch dim; the
// planted crash of kiln-opt -kiln-test-crash-on{op=kt.tanh} hits its kt.tanh.
func.func @dyn(%x: tensor<?x16xf64>, %y: tensor<?x16xf64>) -> tensor<?x16xf64> {
  %0 = kt.mul %x, %y : (tensor<?x16xf64>, tensor<?x16xf64>) -> tensor<?x16xf64>
  %1 = kt.tanh %0 : (tensor<?x16xf64>) -> tensor<?x16xf64>
  %2 = kt.add %1, %x : (tensor<?x16xf64>, tensor<?x16xf64>) -> tensor<?x16xf64>
  return %2 : tensor<?x16xf64>
}
