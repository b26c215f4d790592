// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg="allow-partial=true" -kiln-verify-no-kt -verify-diagnostics

// Tests that kiln-verify-no-kt reports every kt op left after a partial
// lowering (ref ops have no lowering: they must be functionalized first).
func.func @left_over(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %n = kt.neg %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{'kt.alloc_ref' op was not lowered to linalg}}
  %r = kt.alloc_ref %n : (tensor<4x3xf32>) -> !kt.ref<4x3xf32>
  // expected-error @+1 {{'kt.relu_' op was not lowered to linalg}}
  kt.relu_ %r : (!kt.ref<4x3xf32>) -> ()
  // expected-error @+1 {{'kt.load' op was not lowered to linalg}}
  %v = kt.load %r : (!kt.ref<4x3xf32>) -> tensor<4x3xf32>
  return %v : tensor<4x3xf32>
}

// -----

// Tests that a fully lowered module passes.
func.func @clean(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
