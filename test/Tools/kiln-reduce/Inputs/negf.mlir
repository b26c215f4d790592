func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %0 = kt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = kt.gelu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = kt.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = arith.negf %2 : tensor<4x8xf32>
  %4 = kt.add %3, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = kt.softmax %4 {dim = -1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = kt.sum %5 {dim = [1]} : (tensor<4x8xf32>) -> tensor<4xf32>
  %7 = kt.mul %5, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %7, %6 : tensor<4x8xf32>, tensor<4xf32>
}
