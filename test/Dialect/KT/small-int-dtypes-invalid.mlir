// RUN: kiln-opt %s -split-input-file -verify-diagnostics
// Tests the errors for int8/uint8/int16 where kt rejects them: float-only
// math, values out of the dtype's range, signed types other than the kt
// ones.

func.func @exp_ui8(%a: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{'kt.exp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xui8>'}}
  %0 = kt.exp %a : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @full_ui8_range() -> tensor<2xui8> {
  // expected-error @+1 {{'kt.full' op value 2.560000e+02 is out of range for dtype 'ui8'}}
  %0 = kt.full {dtype = ui8, size = [2], value = 256.0 : f64} : () -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

func.func @full_ui8_negative() -> tensor<2xui8> {
  // expected-error @+1 {{'kt.full' op value -1.000000e+00 is out of range for dtype 'ui8'}}
  %0 = kt.full {dtype = ui8, size = [2], value = -1.0 : f64} : () -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

func.func @full_i8_range() -> tensor<2xi8> {
  // expected-error @+1 {{'kt.full' op value 1.280000e+02 is out of range for dtype 'i8'}}
  %0 = kt.full {dtype = i8, size = [2], value = 128.0 : f64} : () -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

func.func @cast_si8(%a: tensor<4xi8>) -> tensor<4xsi8> {
  // expected-error @+1 {{'kt.cast' op result #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer or 1-bit signless integer values, but got 'tensor<4xsi8>'}}
  %0 = kt.cast %a {dtype = si8} : (tensor<4xi8>) -> tensor<4xsi8>
  return %0 : tensor<4xsi8>
}

// -----

func.func @add_ui16(%a: tensor<4xui16>) -> tensor<4xui16> {
  // expected-error @+1 {{'kt.add' op operand #0 must be ranked tensor of}}
  %0 = kt.add %a, %a : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  return %0 : tensor<4xui16>
}

// -----

func.func @mixed(%a: tensor<4xui8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{'kt.add' op}}
  %0 = kt.add %a, %b : (tensor<4xui8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// expected-error @+1 {{!kt.ref element type 'ui16' is not a kt element type (f32, f64, f16, bf16, i64, i32, i16, i8, ui8, i1)}}
func.func @ref_ui16(%r: !kt.ref<4xui16>) -> () {
  return
}
