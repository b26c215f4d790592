// Errors of kiln-decompose.
//
// Every kt op of kind composite has a decomposition.
// RUN: kiln-opt %s -split-input-file -kiln-decompose=check-complete -verify-diagnostics -o /dev/null
//
// Diagnostics of decompositions, at the op's location.
// RUN: kiln-opt %s -split-input-file -kiln-decompose -verify-diagnostics -o /dev/null

func.func @causal_dynamic(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{decomposition of is_causal needs static query and key lengths (got ? x ?)}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Kept: no decomposition is attempted, so no error.
// RUN: kiln-opt %s -split-input-file -kiln-decompose=keep=kt.scaled_dot_product_attention -o /dev/null
func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.softmax %x {dim = 0} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
