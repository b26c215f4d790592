func.func @linear_gelu_residual(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>, %res: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %1 = kt.gelu %0 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = kt.add %1, %res : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}
