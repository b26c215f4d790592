// Host overhead: a 3-op graph on 1K elements (bench/gpu_bench.py).
func.func @small(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = kt.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = kt.add %0, %x : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %2 = kt.relu %1 : (tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}
