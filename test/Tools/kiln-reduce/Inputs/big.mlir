// A 64x64 block for kiln-reduce's types.test: the planted miscompile of
// kiln-opt -kiln-test-miscompile{op=kt.tanh with=kt.sigmoid} hits its kt.tanh.
func.func @block(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %0 = kt.linear %x, %w, %b : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  %1 = kt.gelu %0 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = kt.matmul %1, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = kt.softmax %2 {dim = -1} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %4 = kt.tanh %3 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %5 = kt.add %4, %0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %6 = kt.relu %5 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %7 = kt.sum %6 {dim = [1]} : (tensor<64x64xf32>) -> tensor<64xf32>
  %8 = kt.exp %7 : (tensor<64xf32>) -> tensor<64xf32>
  return %6, %8 : tensor<64x64xf32>, tensor<64xf32>
}
