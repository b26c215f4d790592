// softmax over the last dim of 8192x8192 f32 (bench/gpu_bench.py).
func.func @softmax(%x: tensor<8192x8192xf32>) -> tensor<8192x8192xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
  return %0 : tensor<8192x8192xf32>
}
