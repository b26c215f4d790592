func.func @gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.gelu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @gelu_tanh(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.gelu %x {approximate = #kt.approximate<tanh>} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.silu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @var(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = kt.var %x {dim = [1]} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

func.func @var_dynamic(%x: tensor<?x4xf32>) -> tensor<f32> {
  %0 = kt.var %x {correction = 0.0} : (tensor<?x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

func.func @logsumexp(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = kt.logsumexp %x {dim = [-1]} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

func.func @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x5x4xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}
