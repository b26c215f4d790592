// RUN: kiln-opt %s -kiln-cpu-conv-im2col=impl=winograd -verify-diagnostics

// Tests that an unknown implementation is an error at the module.

// expected-error@+1 {{kiln-cpu-conv-im2col: impl must be auto, im2col, direct or onednn, not 'winograd'}}
module {
  func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
    return %a : tensor<4x4xf32>
  }
}
