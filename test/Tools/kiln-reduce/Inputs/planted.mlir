// A small MLP-like block for kiln-reduce's built-in tests: one kt.tanh and one
// kt.sigmoid among a dozen ops (the planted bugs of kiln-opt's
// -kiln-test-miscompile / -kiln-test-crash-on hit those).
func.func @block(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %w2: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %0 = kt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = kt.gelu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = kt.tanh %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = kt.add %2, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = kt.matmul %3, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %5 = kt.sigmoid %4 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = kt.mul %5, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = kt.softmax %6 {dim = -1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = kt.exp %7 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = kt.sum %8 {dim = [1]} : (tensor<4x8xf32>) -> tensor<4xf32>
  %10 = kt.relu %6 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %11 = kt.sub %10, %7 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %11, %9 : tensor<4x8xf32>, tensor<4xf32>
}
