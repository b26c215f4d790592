// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg="allow-partial=true" -kiln-verify-no-kt -verify-diagnostics

// Tests that kiln-verify-no-kt reports every kt op left after a partial
// lowering.
func.func @left_over(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> (tensor<f32>, tensor<f32>) {
  // expected-error @+1 {{'kt.nll_loss' op was not lowered to linalg}}
  %0 = kt.nll_loss %x, %t : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %n = kt.neg %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{'kt.cross_entropy' op was not lowered to linalg}}
  %1 = kt.cross_entropy %n, %t : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// -----

// Tests that a fully lowered module passes.
func.func @clean(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
