// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=online-row-stats -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-cpu=threads=2 -verify-diagnostics

// Bad cross_entropy / log_softmax input under the online lowering (and the
// kiln-cpu pipeline that sets it) is reported at the op, never lowered.

func.func @ce_target_shape(%x: tensor<4x10xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cross_entropy' op target shape 5 does not match input shape 4x10 (expected 4)}}
  // expected-error @+1 {{'kt.cross_entropy' op failed to infer returned types}}
  %r = kt.cross_entropy %x, %t : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @ce_int_input(%x: tensor<4x10xi64>, %t: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+1 {{'kt.cross_entropy' op operand #0 must be ranked tensor of}}
  %r = kt.cross_entropy %x, %t : (tensor<4x10xi64>, tensor<4xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @log_softmax_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.log_softmax' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.log_softmax' op failed to infer returned types}}
  %0 = kt.log_softmax %x {dim = 2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
