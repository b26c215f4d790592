// kiln-reduce's types.test: a kt.reshape to a fixed shape: no smaller
// argument shape re-infers (those candidates fail and are never tested).
func.func @fixed(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = kt.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kt.reshape %0 {shape = [32]} : (tensor<4x8xf32>) -> tensor<32xf32>
  %2 = kt.tanh %1 : (tensor<32xf32>) -> tensor<32xf32>
  return %2 : tensor<32xf32>
}
