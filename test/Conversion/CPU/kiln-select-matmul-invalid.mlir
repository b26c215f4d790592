// RUN: kiln-opt %s -kiln-select-matmul=impl=mkl -verify-diagnostics

// Tests that an unknown implementation is an error at the module.

// expected-error@+1 {{kiln-select-matmul: impl must be auto, openblas or generated, not 'mkl'}}
module {
  func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
    return %a : tensor<4x4xf32>
  }
}
