// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=softmax-stores-exp -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-cpu=threads=2 -verify-diagnostics

// Bad softmax input under the stored-exp lowering (and the kiln-cpu
// pipeline that sets it) is reported at the op, never lowered.

func.func @softmax_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.softmax' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.softmax' op failed to infer returned types}}
  %0 = kt.softmax %x {dim = 2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @softmax_int(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  // expected-error @+1 {{'kt.softmax' op operand #0 must be ranked tensor of}}
  %0 = kt.softmax %x {dim = 1} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @softmax_result(%x: tensor<?x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{'kt.softmax' op inferred type(s) 'tensor<?x3xf32>' are incompatible with return type(s) of operation 'tensor<3x2xf32>'}}
  // expected-error @+1 {{'kt.softmax' op failed to infer returned types}}
  %0 = kt.softmax %x {dim = 1} : (tensor<?x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
