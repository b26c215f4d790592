// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg="allow-partial=true" | FileCheck %s --check-prefix=PARTIAL

// Tests that an op without a lowering fails the pass, naming the op, and
// that allow-partial keeps it for kiln-verify-no-kt to report.
// PARTIAL-LABEL: func.func @no_lowering
// PARTIAL: math.exp
// PARTIAL: kt.conv2d
func.func @no_lowering(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %e = kt.exp %x : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{failed to legalize operation 'kt.conv2d'}}
  %0 = kt.conv2d %e, %w : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
