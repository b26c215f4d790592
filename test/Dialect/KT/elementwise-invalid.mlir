// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that binary operands must share an element type.
func.func @add_elem_mismatch(%a: tensor<3xf32>, %b: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.add' op operand #1 has element type f64 but operand #0 has f32; operands must share an element type (insert kt.cast)}}
  // expected-error @+1 {{'kt.add' op failed to infer returned types}}
  %0 = kt.add %a, %b : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that shapes must broadcast.
func.func @mul_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.mul' op operands #0 and #1 are not broadcast-compatible}}
  // expected-error @+1 {{'kt.mul' op failed to infer returned types}}
  %0 = kt.mul %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that transcendental ops reject integer operands.
func.func @exp_int(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'kt.exp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values}}
  %0 = kt.exp %a : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that gelu rejects integer operands.
func.func @gelu_int(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.gelu' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = kt.gelu %a : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that arithmetic ops reject i1.
func.func @neg_bool(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'kt.neg' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer values}}
  %0 = kt.neg %a : (tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that add rejects i1.
func.func @add_bool(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'kt.add' op operand #0 must be ranked tensor of}}
  %0 = kt.add %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that a wrong declared result shape is rejected.
func.func @add_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{'kt.add' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{'kt.add' op failed to infer returned types}}
  %0 = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that a comparison must be declared to return i1.
func.func @lt_wrong_result(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.lt' op inferred type(s) 'tensor<3xi1>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kt.lt' op failed to infer returned types}}
  %0 = kt.lt %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that isnan must be declared to return i1.
func.func @isnan_wrong_result(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.isnan' op inferred type(s) 'tensor<3xi1>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kt.isnan' op failed to infer returned types}}
  %0 = kt.isnan %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a unary op keeps its element type.
func.func @abs_wrong_result(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error @+2 {{'kt.abs' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<3xf16>'}}
  // expected-error @+1 {{'kt.abs' op failed to infer returned types}}
  %0 = kt.abs %a : (tensor<3xf32>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// Tests that true division of integers is rejected.
func.func @div_int_no_rounding(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.div' op true division needs float operands, got 'i64': insert kt.cast or set rounding_mode}}
  %0 = kt.div %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that clamp needs a bound.
func.func @clamp_no_bounds(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.clamp' op needs at least one of min and max}}
  %0 = kt.clamp %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that integer clamp bounds are integral.
func.func @clamp_int_fractional(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'kt.clamp' op max = 2.500000e+00 is not an integer but self has element type 'i32'}}
  %0 = kt.clamp %a {max = 2.5 : f64} : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that cast's dtype is a kt element type.
func.func @cast_bad_dtype(%a: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error @+2 {{'kt.cast' op dtype 'ui16' is not a kt element type}}
  // expected-error @+1 {{'kt.cast' op failed to infer returned types}}
  %0 = kt.cast %a {dtype = ui16} : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that cast's result element type is dtype.
func.func @cast_wrong_result(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error @+2 {{'kt.cast' op inferred type(s) 'tensor<3xi32>' are incompatible with return type(s) of operation 'tensor<3xf16>'}}
  // expected-error @+1 {{'kt.cast' op failed to infer returned types}}
  %0 = kt.cast %a {dtype = i32} : (tensor<3xf32>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// Tests that where's condition is i1.
func.func @where_cond_not_bool(%c: tensor<3xf32>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.where' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = kt.where %c, %a, %b : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that where's self and other share an element type.
func.func @where_elem_mismatch(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.where' op operand #1 has element type i32 but operand #0 has f32; operands must share an element type (insert kt.cast)}}
  // expected-error @+1 {{'kt.where' op failed to infer returned types}}
  %0 = kt.where %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that where's three shapes broadcast.
func.func @where_not_broadcastable(%c: tensor<2xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.where' op operands #0 and #1 are not broadcast-compatible}}
  // expected-error @+1 {{'kt.where' op failed to infer returned types}}
  %0 = kt.where %c, %a, %b : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that gelu's approximate is none or tanh.
func.func @gelu_bad_approximate(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{expected ::kiln::kt::GeluApproximate to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse KT_GeluApproximateAttr parameter 'value'}}
  %0 = kt.gelu %a {approximate = #kt.approximate<erf>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that atan2 rejects integer operands (PyTorch promotes them to float).
func.func @atan2_int(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.atan2' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values}}
  %0 = kt.atan2 %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that fmod rejects i1.
func.func @fmod_bool(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'kt.fmod' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer values}}
  %0 = kt.fmod %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that fmod operands share an element type.
func.func @fmod_elem_mismatch(%a: tensor<3xi32>, %b: tensor<3xi64>) -> tensor<3xi32> {
  // expected-error @+2 {{'kt.fmod' op operand #1 has element type i64 but operand #0 has i32; operands must share an element type (insert kt.cast)}}
  // expected-error @+1 {{'kt.fmod' op failed to infer returned types}}
  %0 = kt.fmod %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that the bitwise ops reject floats (as PyTorch).
func.func @bitwise_and_float(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.bitwise_and' op operand #0 must be ranked tensor of 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer or 1-bit signless integer values}}
  %0 = kt.bitwise_and %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that bitwise_not rejects floats (as PyTorch).
func.func @bitwise_not_float(%a: tensor<3xbf16>) -> tensor<3xbf16> {
  // expected-error @+1 {{'kt.bitwise_not' op operand #0 must be ranked tensor of 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer or 1-bit signless integer values}}
  %0 = kt.bitwise_not %a : (tensor<3xbf16>) -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// Tests that bitwise_xor shapes must broadcast.
func.func @bitwise_xor_not_broadcastable(%a: tensor<2x3xi32>, %b: tensor<4xi32>) -> tensor<2x3xi32> {
  // expected-error @+2 {{'kt.bitwise_xor' op operands #0 and #1 are not broadcast-compatible}}
  // expected-error @+1 {{'kt.bitwise_xor' op failed to infer returned types}}
  %0 = kt.bitwise_xor %a, %b : (tensor<2x3xi32>, tensor<4xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Tests that logical_xor's result is i1.
func.func @logical_xor_wrong_result(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.logical_xor' op inferred type(s) 'tensor<3xi1>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kt.logical_xor' op failed to infer returned types}}
  %0 = kt.logical_xor %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that complex element types are refused (docs/adding-ops.md,
// "Complex dtypes"): kt has none.
func.func @add_complex(%a: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  // expected-error @+1 {{'kt.add' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer values, but got 'tensor<3xcomplex<f32>>'}}
  %0 = kt.add %a, %a : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}

// -----

func.func @exp_complex(%a: tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>> {
  // expected-error @+1 {{'kt.exp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<3xcomplex<f64>>'}}
  %0 = kt.exp %a : (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
  return %0 : tensor<3xcomplex<f64>>
}

// -----

// Tests that kt.special rejects integer operands (PyTorch promotes them to float).
func.func @special_int(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.special' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values}}
  %0 = kt.special %a {fn = #kt.special_fn<lgamma>} : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that the order n is refused on the Bessel fns.
func.func @special_n_on_bessel_j0(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.special' op n is an attribute of fn = polygamma only, not of fn = bessel_j0}}
  %0 = kt.special %a {fn = #kt.special_fn<bessel_j0>, n = 0} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that airy_ai keeps its operand's element type.
func.func @special_airy_result_type(%a: tensor<3xf32>) -> tensor<3xf64> {
  // expected-error @+2 {{'kt.special' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<3xf64>'}}
  // expected-error @+1 {{'kt.special' op failed to infer returned types}}
  %0 = kt.special %a {fn = #kt.special_fn<airy_ai>} : (tensor<3xf32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Tests that fn = polygamma needs its order n.
func.func @special_polygamma_no_n(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.special' op fn = polygamma needs the order n}}
  %0 = kt.special %a {fn = #kt.special_fn<polygamma>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that the order n is refused on other fns.
func.func @special_n_on_lgamma(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.special' op n is an attribute of fn = polygamma only, not of fn = lgamma}}
  %0 = kt.special %a {fn = #kt.special_fn<lgamma>, n = 1} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that polygamma's order is not negative.
func.func @special_negative_n(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.special' op n = -1 must be >= 0}}
  %0 = kt.special %a {fn = #kt.special_fn<polygamma>, n = -1} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that an unknown fn is a parse error naming the enum.
func.func @special_unknown_fn(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{expected ::kiln::kt::SpecialFn to be one of: lgamma, digamma, polygamma, erfc, erfinv, erfcx, ndtr, ndtri, log_ndtr, i0, i0e, i1, i1e}}
  // expected-error @+1 {{failed to parse}}
  %0 = kt.special %a {fn = #kt.special_fn<gamma>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that kt.zeta rejects integer operands.
func.func @zeta_int(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'kt.zeta' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values}}
  %0 = kt.zeta %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that kt.zeta's operands share an element type.
func.func @zeta_mixed(%a: tensor<3xf32>, %b: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.zeta' op operand #1 has element type f64 but operand #0 has f32}}
  // expected-error @+1 {{'kt.zeta' op failed to infer returned types}}
  %0 = kt.zeta %a, %b : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
