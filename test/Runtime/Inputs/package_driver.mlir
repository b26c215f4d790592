// The package test/Runtime/packages-c-driver.test builds and drives from C.
func.func @f(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> (tensor<?x3xf32>, tensor<?xf32>) {
  %0 = kt.mul %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = kt.add %0, %a : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = kt.sum %1 {dim = [1]} : (tensor<?x3xf32>) -> tensor<?xf32>
  return %1, %2 : tensor<?x3xf32>, tensor<?xf32>
}
func.func @pick(%x: tensor<4xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  %0 = kt.index_select %x, %i {dim = 0} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32> loc("driver.py":3:9)
  return %0 : tensor<2xf32>
}
