// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg="allow-partial=true" -kiln-verify-no-kt -verify-diagnostics

// Tests that kiln-verify-no-kt reports every kt op left after a partial
// lowering.
func.func @left_over(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'kt.conv2d' op was not lowered to linalg}}
  %0 = kt.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  %t = kt.neg %x : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{'kt.max_pool2d' op was not lowered to linalg}}
  %1 = kt.max_pool2d %t {kernel_size = [2, 2]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// Tests that a fully lowered module passes.
func.func @clean(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
