// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=row-moments -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-cpu=threads=2 -verify-diagnostics

// Bad layer_norm input under the one-read statistics (and the kiln-cpu
// pipeline that sets them) is reported at the op, never lowered.

func.func @ln_shape(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+2 {{'kt.layer_norm' op normalized_shape 9 does not match the trailing dims of input shape 4x10}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %r = kt.layer_norm %x {normalized_shape = [9]} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}

// -----

func.func @ln_weight(%x: tensor<4x10xf32>, %w: tensor<9xf32>) -> tensor<4x10xf32> {
  // expected-error @+2 {{'kt.layer_norm' op weight shape 9 must equal normalized_shape 10}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %r = kt.layer_norm %x weight %w {normalized_shape = [10]} : (tensor<4x10xf32>, tensor<9xf32>) -> tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}

// -----

func.func @ln_int(%x: tensor<4x10xi64>) -> tensor<4x10xi64> {
  // expected-error @+1 {{'kt.layer_norm' op operand #0 must be ranked tensor of}}
  %r = kt.layer_norm %x {normalized_shape = [10]} : (tensor<4x10xi64>) -> tensor<4x10xi64>
  return %r : tensor<4x10xi64>
}
