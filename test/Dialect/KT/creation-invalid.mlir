// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @constant_type_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{'kt.constant' op value type 'tensor<2xf32>' does not match result type 'tensor<3xf32>'}}
  %0 = kt.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @full_bad_size() -> tensor<2xf32> {
  // expected-error @+2 {{'kt.full' op size entry -2 must be >= 0 or -1 (dynamic)}}
  // expected-error @+1 {{'kt.full' op failed to infer returned types}}
  %0 = kt.full {size = [-2], value = 1.0, dtype = f32} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @full_dynamic_count(%d: index) -> tensor<?x?xf32> {
  // expected-error @+2 {{'kt.full' op size has 2 dynamic (-1) entries but 1 dynamic_sizes operands were given}}
  // expected-error @+1 {{'kt.full' op failed to infer returned types}}
  %0 = kt.full %d {size = [-1, -1], value = 1.0, dtype = f32} : (index) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @full_bad_dtype() -> tensor<2xf32> {
  // expected-error @+2 {{'kt.full' op dtype ui16 is not a kt element type}}
  // expected-error @+1 {{'kt.full' op failed to infer returned types}}
  %0 = kt.full {size = [2], value = 1.0, dtype = ui16} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @full_non_integral() -> tensor<2xi64> {
  // expected-error @+1 {{'kt.full' op value 1.500000e+00 must be integral for dtype 'i64'}}
  %0 = kt.full {size = [2], value = 1.5, dtype = i64} : () -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @full_bool_value() -> tensor<2xi1> {
  // expected-error @+1 {{'kt.full' op value 2.000000e+00 must be 0 or 1 for dtype i1}}
  %0 = kt.full {size = [2], value = 2.0, dtype = i1} : () -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @full_int_range() -> tensor<2xi32> {
  // expected-error @+1 {{'kt.full' op value 3.000000e+09 is out of range for dtype 'i32'}}
  %0 = kt.full {size = [2], value = 3.0e9, dtype = i32} : () -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @full_float_overflow() -> tensor<2xf16> {
  // expected-error @+1 {{'kt.full' op value 1.000000e+05 overflows dtype 'f16'}}
  %0 = kt.full {size = [2], value = 1.0e5, dtype = f16} : () -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

func.func @full_wrong_result() -> tensor<2x4xf32> {
  // expected-error @+2 {{'kt.full' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{'kt.full' op failed to infer returned types}}
  %0 = kt.full {size = [2, 3], value = 1.0, dtype = f32} : () -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @arange_zero_step() -> tensor<2xf32> {
  // expected-error @+2 {{'kt.arange' op step must be nonzero}}
  // expected-error @+1 {{'kt.arange' op failed to infer returned types}}
  %0 = kt.arange {end = 2.0, step = 0.0, dtype = f32} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @arange_sign() -> tensor<2xf32> {
  // expected-error @+2 {{'kt.arange' op end - start (-2.000000e+00) and step (1.000000e+00) have different signs}}
  // expected-error @+1 {{'kt.arange' op failed to infer returned types}}
  %0 = kt.arange {start = 2.0, end = 0.0, dtype = f32} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @arange_inf() -> tensor<2xf32> {
  // expected-error @+2 {{'kt.arange' op start, end and step must be finite}}
  // expected-error @+1 {{'kt.arange' op failed to infer returned types}}
  %0 = kt.arange {end = 0x7FF0000000000000 : f64, dtype = f32} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @arange_bool() -> tensor<2xi1> {
  // expected-error @+2 {{'kt.arange' op dtype i1 must be a numeric kt element type (not i1)}}
  // expected-error @+1 {{'kt.arange' op failed to infer returned types}}
  %0 = kt.arange {end = 2.0, dtype = i1} : () -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @arange_int_fraction() -> tensor<5xi64> {
  // expected-error @+2 {{'kt.arange' op start, end and step must be integral for dtype i64}}
  // expected-error @+1 {{'kt.arange' op failed to infer returned types}}
  %0 = kt.arange {end = 2.5, step = 0.5, dtype = i64} : () -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @arange_wrong_length() -> tensor<4xf32> {
  // expected-error @+2 {{'kt.arange' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'kt.arange' op failed to infer returned types}}
  %0 = kt.arange {end = 3.0, dtype = f32} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @rand_int_dtype(%s: tensor<i64>) -> tensor<2xi64> {
  // expected-error @+2 {{'kt.rand' op dtype i64 must be f32, f64, f16 or bf16}}
  // expected-error @+1 {{'kt.rand' op failed to infer returned types}}
  %0 = kt.rand %s {size = [2], dtype = i64} : (tensor<i64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @randn_int_dtype(%s: tensor<i64>) -> tensor<2xi1> {
  // expected-error @+2 {{'kt.randn' op dtype i1 must be f32, f64, f16 or bf16}}
  // expected-error @+1 {{'kt.randn' op failed to infer returned types}}
  %0 = kt.randn %s {size = [2], dtype = i1} : (tensor<i64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @rand_bad_size(%s: tensor<i64>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.rand' op size entry -3 must be >= 0 or -1 (dynamic)}}
  // expected-error @+1 {{'kt.rand' op failed to infer returned types}}
  %0 = kt.rand %s {size = [-3], dtype = f32} : (tensor<i64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @randn_dynamic_count(%s: tensor<i64>, %d: index) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.randn' op size has 0 dynamic (-1) entries but 1 dynamic_sizes operands were given}}
  // expected-error @+1 {{'kt.randn' op failed to infer returned types}}
  %0 = kt.randn %s, %d {size = [2], dtype = f32} : (tensor<i64>, index) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @rand_bad_seed(%s: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'kt.rand' op operand #0 must be 0D tensor of 64-bit signless integer values, but got 'tensor<2xi64>'}}
  %0 = kt.rand %s {size = [2], dtype = f32} : (tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_p_high(%x: tensor<2xf32>, %s: tensor<i64>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.dropout' op p 1.500000e+00 must be in [0, 1]}}
  // expected-error @+1 {{'kt.dropout' op failed to infer returned types}}
  %0 = kt.dropout %x, %s {p = 1.5} : (tensor<2xf32>, tensor<i64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_p_negative(%x: tensor<2xf32>, %s: tensor<i64>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.dropout' op p -1.000000e-01 must be in [0, 1]}}
  // expected-error @+1 {{'kt.dropout' op failed to infer returned types}}
  %0 = kt.dropout %x, %s {p = -0.1} : (tensor<2xf32>, tensor<i64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_int(%x: tensor<2xi64>, %s: tensor<i64>) -> tensor<2xi64> {
  // expected-error @+1 {{'kt.dropout' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2xi64>'}}
  %0 = kt.dropout %x, %s : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
