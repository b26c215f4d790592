// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -kiln-cpu-verify-supported -verify-diagnostics
// RUN: kiln-opt %s -split-input-file -kiln-cpu -verify-diagnostics

// Tests that an arith op on tensors (no bufferization) is rejected before
// bufferization, at its location, naming the op and what is unsupported
// (it used to reach one-shot-bufferize: "op was not bufferized").
func.func @negf_on_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'arith.negf' op on tensors is not supported by kiln-cpu: it has no bufferization}}
  %1 = arith.negf %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Tests that every unsupported op is reported, not only the first.
func.func @two(%x: tensor<4xf32>, %y: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  // expected-error @+1 {{'math.exp' op on tensors is not supported by kiln-cpu}}
  %0 = math.exp %x : tensor<4xf32>
  // expected-error @+1 {{'arith.addi' op on tensors is not supported by kiln-cpu}}
  %1 = arith.addi %y, %y : tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// Tests that a captured program (kg) is rejected with what to do instead.
// expected-error @+1 {{'kg.program' op is not supported by kiln-cpu: captured programs (kg) are host code}}
kg.program @prog(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kg.graph @g(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %n = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %n : tensor<4xf32>
  }
  kg.return %r : tensor<4xf32>
}

// -----

// Tests that bufferizable ops on tensors (arith.constant, arith.select,
// tensor, linalg, scf) and scalar arith pass.
func.func @supported(%x: tensor<4xf32>, %c: i1, %s: f32) -> tensor<4xf32> {
  %cst = arith.constant dense<1.0> : tensor<4xf32>
  %0 = arith.select %c, %x, %cst : tensor<4xf32>
  %t = arith.addf %s, %s : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%t : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.add %0, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
