// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests the verifier of kt.fusion.
func.func @bad_arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kt.fusion' op block argument #0 has type 'tensor<4xf64>' but operand #0 has type 'tensor<4xf32>'}}
  %r = kt.fusion "k" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf64>):
    %0 = kt.exp %x : (tensor<4xf64>) -> tensor<4xf64>
    kt.yield %0 : tensor<4xf64>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @bad_arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kt.fusion' op has 1 operands but its block has 0 arguments}}
  %r = kt.fusion "k" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
    %0 = kt.full {dtype = f32, size = [4], value = 1.0 : f64} : () -> tensor<4xf32>
    kt.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @bad_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kt.fusion' op yields 1 values of types 'tensor<4xi1>' but has result types 'tensor<4xf32>'}}
  %r = kt.fusion "k" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %0 = kt.isnan %x : (tensor<4xf32>) -> tensor<4xi1>
    kt.yield %0 : tensor<4xi1>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @empty_name(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kt.fusion' op needs a non-empty kernel name}}
  %r = kt.fusion "" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kt.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @no_results(%a: tensor<4xf32>) {
  // expected-error@below {{'kt.fusion' op needs at least one result}}
  kt.fusion "k" (%a) : (tensor<4xf32>) -> () {
  ^bb0(%x: tensor<4xf32>):
    kt.yield
  }
  return
}

// -----

func.func @not_isolated(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note@below {{required by region isolation constraints}}
  %r = kt.fusion "k" () : () -> tensor<4xf32> {
    // expected-error@below {{'kt.exp' op using value defined outside the region}}
    %0 = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    kt.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.fusion "outer" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@below {{'kt.fusion' op is nested in another kt.fusion}}
    %0 = kt.fusion "inner" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%y: tensor<4xf32>):
      %1 = kt.exp %y : (tensor<4xf32>) -> tensor<4xf32>
      kt.yield %1 : tensor<4xf32>
    }
    kt.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kt.yield' op expects parent op 'kt.fusion'}}
  kt.yield %a : tensor<4xf32>
}
