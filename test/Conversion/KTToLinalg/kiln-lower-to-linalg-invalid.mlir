// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg="allow-partial=true" | FileCheck %s --check-prefix=PARTIAL

// Tests that an op without a lowering (every value-semantics kt op has one,
// see all-ops.mlir; ref ops must be functionalized first) fails the pass,
// naming the op, and that allow-partial keeps it for kiln-verify-no-kt to
// report.
// PARTIAL-LABEL: func.func @no_lowering
// PARTIAL: math.exp
// PARTIAL: kt.alloc_ref
// PARTIAL: kt.relu_
func.func @no_lowering(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = kt.exp %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{failed to legalize operation 'kt.alloc_ref'}}
  %r = kt.alloc_ref %e : (tensor<4x3xf32>) -> !kt.ref<4x3xf32>
  kt.relu_ %r : (!kt.ref<4x3xf32>) -> ()
  %v = kt.load %r : (!kt.ref<4x3xf32>) -> tensor<4x3xf32>
  return %v : tensor<4x3xf32>
}
