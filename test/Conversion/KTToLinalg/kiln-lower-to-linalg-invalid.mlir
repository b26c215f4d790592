// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg="allow-partial=true" | FileCheck %s --check-prefix=PARTIAL

// Tests that an op without a lowering fails the pass, naming the op, and
// that allow-partial keeps it for kiln-verify-no-kt to report.
// PARTIAL-LABEL: func.func @no_lowering
// PARTIAL: math.exp
// PARTIAL: kt.nll_loss
func.func @no_lowering(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %e = kt.exp %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{failed to legalize operation 'kt.nll_loss'}}
  %0 = kt.nll_loss %e, %t : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
