// layer_norm of 32768x1024 f32 with weight and bias (bench/gpu_bench.py).
func.func @layer_norm(%x: tensor<32768x1024xf32>, %w: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<32768x1024xf32> {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [1024]} : (tensor<32768x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<32768x1024xf32>
  return %0 : tensor<32768x1024xf32>
}
