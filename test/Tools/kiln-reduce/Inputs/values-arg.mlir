// kiln-reduce's values.test: cutting kt.exp would add an argument; replacing
// its result by %x (the argument of its type) does not.
func.func @one_input(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kt.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = kt.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
