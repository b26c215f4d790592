// A 10-op pointwise chain on 64M f32 elements (bench/gpu_bench.py).
func.func @chain(%x: tensor<67108864xf32>, %y: tensor<67108864xf32>) -> tensor<67108864xf32> {
  %0 = kt.add %x, %y : (tensor<67108864xf32>, tensor<67108864xf32>) -> tensor<67108864xf32>
  %1 = kt.mul %0, %x : (tensor<67108864xf32>, tensor<67108864xf32>) -> tensor<67108864xf32>
  %2 = kt.sigmoid %1 : (tensor<67108864xf32>) -> tensor<67108864xf32>
  %3 = kt.sub %2, %y : (tensor<67108864xf32>, tensor<67108864xf32>) -> tensor<67108864xf32>
  %4 = kt.tanh %3 : (tensor<67108864xf32>) -> tensor<67108864xf32>
  %5 = kt.mul %4, %4 : (tensor<67108864xf32>, tensor<67108864xf32>) -> tensor<67108864xf32>
  %6 = kt.add %5, %x : (tensor<67108864xf32>, tensor<67108864xf32>) -> tensor<67108864xf32>
  %7 = kt.relu %6 : (tensor<67108864xf32>) -> tensor<67108864xf32>
  %8 = kt.exp %7 : (tensor<67108864xf32>) -> tensor<67108864xf32>
  %9 = kt.neg %8 : (tensor<67108864xf32>) -> tensor<67108864xf32>
  return %9 : tensor<67108864xf32>
}
