// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Tests that kt.exp round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @exp_f32
// CHECK: kt.exp %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @exp_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.exp %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.exp round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @exp_bf16
// CHECK: kt.exp %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @exp_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.exp %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.log round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @log_f32
// CHECK: kt.log %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @log_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.log %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.log round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @log_bf16
// CHECK: kt.log %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @log_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.log %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.log1p round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @log1p_f32
// CHECK: kt.log1p %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @log1p_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.log1p %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.log1p round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @log1p_bf16
// CHECK: kt.log1p %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @log1p_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.log1p %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.expm1 round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @expm1_f32
// CHECK: kt.expm1 %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @expm1_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.expm1 %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.expm1 round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @expm1_bf16
// CHECK: kt.expm1 %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @expm1_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.expm1 %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.sqrt round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @sqrt_f32
// CHECK: kt.sqrt %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @sqrt_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.sqrt %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.sqrt round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @sqrt_bf16
// CHECK: kt.sqrt %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @sqrt_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.sqrt %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.rsqrt round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @rsqrt_f32
// CHECK: kt.rsqrt %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @rsqrt_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.rsqrt %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.rsqrt round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @rsqrt_bf16
// CHECK: kt.rsqrt %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @rsqrt_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.rsqrt %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.sin round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @sin_f32
// CHECK: kt.sin %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @sin_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.sin %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.sin round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @sin_bf16
// CHECK: kt.sin %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @sin_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.sin %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.cos round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @cos_f32
// CHECK: kt.cos %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @cos_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.cos %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.cos round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @cos_bf16
// CHECK: kt.cos %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @cos_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.cos %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.tanh round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @tanh_f32
// CHECK: kt.tanh %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @tanh_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.tanh %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.tanh round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @tanh_bf16
// CHECK: kt.tanh %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @tanh_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.tanh %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.sigmoid round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @sigmoid_f32
// CHECK: kt.sigmoid %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @sigmoid_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.sigmoid %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.sigmoid round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @sigmoid_bf16
// CHECK: kt.sigmoid %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @sigmoid_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.sigmoid %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.silu round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @silu_f32
// CHECK: kt.silu %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @silu_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.silu %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.silu round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @silu_bf16
// CHECK: kt.silu %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @silu_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.silu %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.erf round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @erf_f32
// CHECK: kt.erf %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @erf_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.erf %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.erf round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @erf_bf16
// CHECK: kt.erf %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @erf_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.erf %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.reciprocal round-trips on f32 (result type = operand type).
// CHECK-LABEL: func.func @reciprocal_f32
// CHECK: kt.reciprocal %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @reciprocal_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.reciprocal %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Tests that kt.reciprocal round-trips on bf16 (result type = operand type).
// CHECK-LABEL: func.func @reciprocal_bf16
// CHECK: kt.reciprocal %{{.*}} : (tensor<bf16>) -> tensor<bf16>
func.func @reciprocal_bf16(%a: tensor<bf16>) -> tensor<bf16> {
  %0 = kt.reciprocal %a : (tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that kt.neg round-trips on i32.
// CHECK-LABEL: func.func @neg_i32
// CHECK: kt.neg %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @neg_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.neg %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.neg round-trips on f16.
// CHECK-LABEL: func.func @neg_f16
// CHECK: kt.neg %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @neg_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.neg %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.abs round-trips on i32.
// CHECK-LABEL: func.func @abs_i32
// CHECK: kt.abs %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @abs_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.abs %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.abs round-trips on f16.
// CHECK-LABEL: func.func @abs_f16
// CHECK: kt.abs %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @abs_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.abs %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.relu round-trips on i32.
// CHECK-LABEL: func.func @relu_i32
// CHECK: kt.relu %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @relu_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.relu %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.relu round-trips on f16.
// CHECK-LABEL: func.func @relu_f16
// CHECK: kt.relu %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @relu_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.relu %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.floor round-trips on i32.
// CHECK-LABEL: func.func @floor_i32
// CHECK: kt.floor %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @floor_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.floor %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.floor round-trips on f16.
// CHECK-LABEL: func.func @floor_f16
// CHECK: kt.floor %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @floor_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.floor %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.ceil round-trips on i32.
// CHECK-LABEL: func.func @ceil_i32
// CHECK: kt.ceil %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @ceil_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.ceil %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.ceil round-trips on f16.
// CHECK-LABEL: func.func @ceil_f16
// CHECK: kt.ceil %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @ceil_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.ceil %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.round round-trips on i32.
// CHECK-LABEL: func.func @round_i32
// CHECK: kt.round %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @round_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.round %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.round round-trips on f16.
// CHECK-LABEL: func.func @round_f16
// CHECK: kt.round %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @round_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.round %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.sign round-trips on i32.
// CHECK-LABEL: func.func @sign_i32
// CHECK: kt.sign %{{.*}} : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @sign_i32(%a: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = kt.sign %a : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}

// -----

// Tests that kt.sign round-trips on f16.
// CHECK-LABEL: func.func @sign_f16
// CHECK: kt.sign %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
func.func @sign_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kt.sign %a : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that kt.logical_not returns i1 for f32.
// CHECK-LABEL: func.func @logical_not_f32
// CHECK: kt.logical_not %{{.*}} : (tensor<?x2xf32>) -> tensor<?x2xi1>
func.func @logical_not_f32(%a: tensor<?x2xf32>) -> tensor<?x2xi1> {
  %0 = kt.logical_not %a : (tensor<?x2xf32>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}

// -----

// Tests that kt.logical_not returns i1 for i1.
// CHECK-LABEL: func.func @logical_not_i1
// CHECK: kt.logical_not %{{.*}} : (tensor<?x2xi1>) -> tensor<?x2xi1>
func.func @logical_not_i1(%a: tensor<?x2xi1>) -> tensor<?x2xi1> {
  %0 = kt.logical_not %a : (tensor<?x2xi1>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}

// -----

// Tests that kt.logical_not returns i1 for i64.
// CHECK-LABEL: func.func @logical_not_i64
// CHECK: kt.logical_not %{{.*}} : (tensor<?x2xi64>) -> tensor<?x2xi1>
func.func @logical_not_i64(%a: tensor<?x2xi64>) -> tensor<?x2xi1> {
  %0 = kt.logical_not %a : (tensor<?x2xi64>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}

// -----

// Tests that kt.isnan returns i1 for f32.
// CHECK-LABEL: func.func @isnan_f32
// CHECK: kt.isnan %{{.*}} : (tensor<?x2xf32>) -> tensor<?x2xi1>
func.func @isnan_f32(%a: tensor<?x2xf32>) -> tensor<?x2xi1> {
  %0 = kt.isnan %a : (tensor<?x2xf32>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}

// -----

// Tests that kt.isnan returns i1 for i1.
// CHECK-LABEL: func.func @isnan_i1
// CHECK: kt.isnan %{{.*}} : (tensor<?x2xi1>) -> tensor<?x2xi1>
func.func @isnan_i1(%a: tensor<?x2xi1>) -> tensor<?x2xi1> {
  %0 = kt.isnan %a : (tensor<?x2xi1>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}

// -----

// Tests that kt.isnan returns i1 for i64.
// CHECK-LABEL: func.func @isnan_i64
// CHECK: kt.isnan %{{.*}} : (tensor<?x2xi64>) -> tensor<?x2xi1>
func.func @isnan_i64(%a: tensor<?x2xi64>) -> tensor<?x2xi1> {
  %0 = kt.isnan %a : (tensor<?x2xi64>) -> tensor<?x2xi1>
  return %0 : tensor<?x2xi1>
}

// -----

// Tests that kt.gelu's default approximate (none) is elided when printed.
// CHECK-LABEL: func.func @gelu_default
// CHECK: kt.gelu %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.gelu %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @gelu_default(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.gelu %a : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.gelu %0 {approximate = #kt.approximate<none>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %1 : tensor<2x?xf32>
}

// -----

// Tests that kt.gelu's approximate = tanh round-trips.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: kt.gelu %{{.*}} {approximate = #kt.approximate<tanh>} : (tensor<3xf64>) -> tensor<3xf64>
func.func @gelu_tanh(%a: tensor<3xf64>) -> tensor<3xf64> {
  %0 = kt.gelu %a {approximate = #kt.approximate<tanh>} : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Tests that kt.clamp round-trips with min and max, max only, min only.
// CHECK-LABEL: func.func @clamp
// CHECK: kt.clamp %{{.*}} {max = 6.000000e+00 : f64, min = -1.000000e+00 : f64} : (tensor<?xf32>) -> tensor<?xf32>
// CHECK: kt.clamp %{{.*}} {max = 6.500000e+00 : f64} : (tensor<?xf32>) -> tensor<?xf32>
// CHECK: kt.clamp %{{.*}} {min = 0.000000e+00 : f64} : (tensor<4xi64>) -> tensor<4xi64>
func.func @clamp(%a: tensor<?xf32>, %b: tensor<4xi64>) -> (tensor<?xf32>, tensor<?xf32>, tensor<4xi64>) {
  %0 = kt.clamp %a {min = -1.0 : f64, max = 6.0 : f64} : (tensor<?xf32>) -> tensor<?xf32>
  %1 = kt.clamp %a {max = 6.5 : f64} : (tensor<?xf32>) -> tensor<?xf32>
  %2 = kt.clamp %b {min = 0.0 : f64} : (tensor<4xi64>) -> tensor<4xi64>
  return %0, %1, %2 : tensor<?xf32>, tensor<?xf32>, tensor<4xi64>
}

// -----

// Tests that kt.cast infers its element type from dtype.
// CHECK-LABEL: func.func @cast
// CHECK: kt.cast %{{.*}} {dtype = i32} : (tensor<2x?xf32>) -> tensor<2x?xi32>
// CHECK: kt.cast %{{.*}} {dtype = f16} : (tensor<2x?xi64>) -> tensor<2x?xf16>
// CHECK: kt.cast %{{.*}} {dtype = i1} : (tensor<2x?xf32>) -> tensor<2x?xi1>
// CHECK: kt.cast %{{.*}} {dtype = bf16} : (tensor<2x?xi1>) -> tensor<2x?xbf16>
// CHECK: kt.cast %{{.*}} {dtype = f64} : (tensor<2x?xbf16>) -> tensor<2x?xf64>
// CHECK: kt.cast %{{.*}} {dtype = f32} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @cast(%a0: tensor<2x?xf32>, %a1: tensor<2x?xi64>, %a2: tensor<2x?xf32>, %a3: tensor<2x?xi1>, %a4: tensor<2x?xbf16>, %a5: tensor<2x?xf32>) -> (tensor<2x?xi32>, tensor<2x?xf16>, tensor<2x?xi1>, tensor<2x?xbf16>, tensor<2x?xf64>, tensor<2x?xf32>) {
  %0 = kt.cast %a0 {dtype = i32} : (tensor<2x?xf32>) -> tensor<2x?xi32>
  %1 = kt.cast %a1 {dtype = f16} : (tensor<2x?xi64>) -> tensor<2x?xf16>
  %2 = kt.cast %a2 {dtype = i1} : (tensor<2x?xf32>) -> tensor<2x?xi1>
  %3 = kt.cast %a3 {dtype = bf16} : (tensor<2x?xi1>) -> tensor<2x?xbf16>
  %4 = kt.cast %a4 {dtype = f64} : (tensor<2x?xbf16>) -> tensor<2x?xf64>
  %5 = kt.cast %a5 {dtype = f32} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x?xi32>, tensor<2x?xf16>, tensor<2x?xi1>, tensor<2x?xbf16>, tensor<2x?xf64>, tensor<2x?xf32>
}

// -----

// Tests that kt.add broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @add_f32
// CHECK: kt.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @add_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.add broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @add_i64
// CHECK: kt.add %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @add_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.add %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.add broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @add_bf16
// CHECK: kt.add %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @add_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.add %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.sub broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @sub_f32
// CHECK: kt.sub %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @sub_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.sub broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @sub_i64
// CHECK: kt.sub %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @sub_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.sub %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.sub broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @sub_bf16
// CHECK: kt.sub %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @sub_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.sub %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.mul broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @mul_f32
// CHECK: kt.mul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @mul_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.mul broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @mul_i64
// CHECK: kt.mul %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @mul_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.mul %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.mul broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @mul_bf16
// CHECK: kt.mul %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @mul_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.mul %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.pow broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @pow_f32
// CHECK: kt.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @pow_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.pow broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @pow_i64
// CHECK: kt.pow %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @pow_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.pow %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.pow broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @pow_bf16
// CHECK: kt.pow %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @pow_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.pow %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.maximum broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @maximum_f32
// CHECK: kt.maximum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @maximum_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.maximum broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @maximum_i64
// CHECK: kt.maximum %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @maximum_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.maximum %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.maximum broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @maximum_bf16
// CHECK: kt.maximum %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @maximum_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.maximum %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.minimum broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @minimum_f32
// CHECK: kt.minimum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @minimum_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.minimum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.minimum broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @minimum_i64
// CHECK: kt.minimum %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @minimum_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.minimum %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.minimum broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @minimum_bf16
// CHECK: kt.minimum %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @minimum_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.minimum %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.remainder broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @remainder_f32
// CHECK: kt.remainder %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @remainder_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.remainder %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.remainder broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @remainder_i64
// CHECK: kt.remainder %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
func.func @remainder_i64(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi64> {
  %0 = kt.remainder %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// Tests that kt.remainder broadcasts (tensor<bf16>, tensor<5x?xbf16>).
// CHECK-LABEL: func.func @remainder_bf16
// CHECK: kt.remainder %{{.*}}, %{{.*}} : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
func.func @remainder_bf16(%a: tensor<bf16>, %b: tensor<5x?xbf16>) -> tensor<5x?xbf16> {
  %0 = kt.remainder %a, %b : (tensor<bf16>, tensor<5x?xbf16>) -> tensor<5x?xbf16>
  return %0 : tensor<5x?xbf16>
}

// -----

// Tests that kt.eq returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @eq_f32
// CHECK: kt.eq %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @eq_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.eq %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.eq returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @eq_i32
// CHECK: kt.eq %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @eq_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.eq %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.eq returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @eq_i1
// CHECK: kt.eq %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @eq_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.eq %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.ne returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @ne_f32
// CHECK: kt.ne %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @ne_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.ne %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.ne returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @ne_i32
// CHECK: kt.ne %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @ne_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.ne %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.ne returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @ne_i1
// CHECK: kt.ne %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @ne_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.ne %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.lt returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @lt_f32
// CHECK: kt.lt %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @lt_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.lt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.lt returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @lt_i32
// CHECK: kt.lt %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @lt_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.lt %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.lt returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @lt_i1
// CHECK: kt.lt %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @lt_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.lt %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.le returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @le_f32
// CHECK: kt.le %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @le_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.le %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.le returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @le_i32
// CHECK: kt.le %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @le_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.le %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.le returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @le_i1
// CHECK: kt.le %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @le_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.le %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.gt returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @gt_f32
// CHECK: kt.gt %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @gt_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.gt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.gt returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @gt_i32
// CHECK: kt.gt %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @gt_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.gt %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.gt returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @gt_i1
// CHECK: kt.gt %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @gt_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.gt %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.ge returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @ge_f32
// CHECK: kt.ge %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @ge_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.ge %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.ge returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @ge_i32
// CHECK: kt.ge %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @ge_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.ge %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.ge returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @ge_i1
// CHECK: kt.ge %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @ge_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.ge %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.logical_and returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @logical_and_f32
// CHECK: kt.logical_and %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @logical_and_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.logical_and %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.logical_and returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @logical_and_i32
// CHECK: kt.logical_and %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @logical_and_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.logical_and %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.logical_and returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @logical_and_i1
// CHECK: kt.logical_and %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @logical_and_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.logical_and %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.logical_or returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @logical_or_f32
// CHECK: kt.logical_or %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @logical_or_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.logical_or %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.logical_or returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @logical_or_i32
// CHECK: kt.logical_or %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
func.func @logical_or_i32(%a: tensor<?x1xi32>, %b: tensor<4xi32>) -> tensor<?x4xi1> {
  %0 = kt.logical_or %a, %b : (tensor<?x1xi32>, tensor<4xi32>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.logical_or returns i1 with the broadcast shape.
// CHECK-LABEL: func.func @logical_or_i1
// CHECK: kt.logical_or %{{.*}}, %{{.*}} : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
func.func @logical_or_i1(%a: tensor<i1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kt.logical_or %a, %b : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that kt.div round-trips without and with each rounding_mode.
// CHECK-LABEL: func.func @div
// CHECK: kt.div %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: kt.div %{{.*}}, %{{.*}} {rounding_mode = #kt.rounding_mode<floor>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: kt.div %{{.*}}, %{{.*}} {rounding_mode = #kt.rounding_mode<trunc>} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
// CHECK: kt.div %{{.*}}, %{{.*}} {rounding_mode = #kt.rounding_mode<floor>} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
func.func @div(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<?xi64>, %d: tensor<1xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?xi64>, tensor<?xi64>) {
  %0 = kt.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = kt.div %c, %d {rounding_mode = #kt.rounding_mode<trunc>} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %3 = kt.div %c, %d {rounding_mode = #kt.rounding_mode<floor>} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?xi64>, tensor<?xi64>
}

// -----

// Tests that a ? against a static dim infers the static dim.
// CHECK-LABEL: func.func @refine
// CHECK: kt.add %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
func.func @refine(%a: tensor<?x3xf32>, %b: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %0 = kt.add %a, %b : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that kt.where broadcasts three operands, with dynamic dims.
// CHECK-LABEL: func.func @where
// CHECK: kt.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: kt.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x1x1xi1>, tensor<2x1xi1>, tensor<1x?xi1>) -> tensor<?x2x?xi1>
func.func @where(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<f32>, %d: tensor<?x1x1xi1>, %e: tensor<1x?xi1>) -> (tensor<2x3xf32>, tensor<?x2x?xi1>) {
  %0 = kt.where %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = kt.where %d, %c, %e : (tensor<?x1x1xi1>, tensor<2x1xi1>, tensor<1x?xi1>) -> tensor<?x2x?xi1>
  return %0, %1 : tensor<2x3xf32>, tensor<?x2x?xi1>
}

// -----

// Tests that kt.atan2 broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @atan2_f32
// CHECK: kt.atan2 %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @atan2_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.atan2 %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that kt.atan2 broadcasts (tensor<?x1xbf16>, tensor<1x4xbf16>).
// CHECK-LABEL: func.func @atan2_bf16_dynamic
// CHECK: kt.atan2 %{{.*}}, %{{.*}} : (tensor<?x1xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
func.func @atan2_bf16_dynamic(%a: tensor<?x1xbf16>, %b: tensor<1x4xbf16>) -> tensor<?x4xbf16> {
  %0 = kt.atan2 %a, %b : (tensor<?x1xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// -----

// Tests that kt.fmod broadcasts (tensor<f64>, tensor<5x?xf64>).
// CHECK-LABEL: func.func @fmod_f64
// CHECK: kt.fmod %{{.*}}, %{{.*}} : (tensor<f64>, tensor<5x?xf64>) -> tensor<5x?xf64>
func.func @fmod_f64(%a: tensor<f64>, %b: tensor<5x?xf64>) -> tensor<5x?xf64> {
  %0 = kt.fmod %a, %b : (tensor<f64>, tensor<5x?xf64>) -> tensor<5x?xf64>
  return %0 : tensor<5x?xf64>
}

// -----

// Tests that kt.fmod broadcasts (tensor<?x1xi32>, tensor<1x4xi32>).
// CHECK-LABEL: func.func @fmod_i32
// CHECK: kt.fmod %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
func.func @fmod_i32(%a: tensor<?x1xi32>, %b: tensor<1x4xi32>) -> tensor<?x4xi32> {
  %0 = kt.fmod %a, %b : (tensor<?x1xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}

// -----

// Tests that kt.bitwise_and broadcasts (tensor<2x3xi64>, tensor<3xi64>).
// CHECK-LABEL: func.func @bitwise_and_i64
// CHECK: kt.bitwise_and %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
func.func @bitwise_and_i64(%a: tensor<2x3xi64>, %b: tensor<3xi64>) -> tensor<2x3xi64> {
  %0 = kt.bitwise_and %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// Tests that kt.bitwise_or broadcasts (tensor<?x1xi32>, tensor<1x4xi32>).
// CHECK-LABEL: func.func @bitwise_or_i32_dynamic
// CHECK: kt.bitwise_or %{{.*}}, %{{.*}} : (tensor<?x1xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
func.func @bitwise_or_i32_dynamic(%a: tensor<?x1xi32>, %b: tensor<1x4xi32>) -> tensor<?x4xi32> {
  %0 = kt.bitwise_or %a, %b : (tensor<?x1xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}

// -----

// Tests that kt.bitwise_xor broadcasts (tensor<i1>, tensor<5x?xi1>).
// CHECK-LABEL: func.func @bitwise_xor_i1
// CHECK: kt.bitwise_xor %{{.*}}, %{{.*}} : (tensor<i1>, tensor<5x?xi1>) -> tensor<5x?xi1>
func.func @bitwise_xor_i1(%a: tensor<i1>, %b: tensor<5x?xi1>) -> tensor<5x?xi1> {
  %0 = kt.bitwise_xor %a, %b : (tensor<i1>, tensor<5x?xi1>) -> tensor<5x?xi1>
  return %0 : tensor<5x?xi1>
}

// -----

// Tests that kt.logical_xor broadcasts (tensor<2x3xf32>, tensor<3xf32>).
// CHECK-LABEL: func.func @logical_xor_f32
// CHECK: kt.logical_xor %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @logical_xor_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %0 = kt.logical_xor %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that kt.logical_xor broadcasts (tensor<?x1xi64>, tensor<1x4xi64>).
// CHECK-LABEL: func.func @logical_xor_i64_dynamic
// CHECK: kt.logical_xor %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi1>
func.func @logical_xor_i64_dynamic(%a: tensor<?x1xi64>, %b: tensor<1x4xi64>) -> tensor<?x4xi1> {
  %0 = kt.logical_xor %a, %b : (tensor<?x1xi64>, tensor<1x4xi64>) -> tensor<?x4xi1>
  return %0 : tensor<?x4xi1>
}

// -----

// Tests that kt.bitwise_not round-trips (result type = operand type).
// CHECK-LABEL: func.func @bitwise_not_i32
// CHECK: kt.bitwise_not %{{.*}} : (tensor<2x?xi32>) -> tensor<2x?xi32>
func.func @bitwise_not_i32(%a: tensor<2x?xi32>) -> tensor<2x?xi32> {
  %0 = kt.bitwise_not %a : (tensor<2x?xi32>) -> tensor<2x?xi32>
  return %0 : tensor<2x?xi32>
}

// -----

// Tests that kt.bitwise_not round-trips (result type = operand type).
// CHECK-LABEL: func.func @bitwise_not_i1
// CHECK: kt.bitwise_not %{{.*}} : (tensor<4xi1>) -> tensor<4xi1>
func.func @bitwise_not_i1(%a: tensor<4xi1>) -> tensor<4xi1> {
  %0 = kt.bitwise_not %a : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that kt.bitwise_not round-trips (result type = operand type).
// CHECK-LABEL: func.func @bitwise_not_i64
// CHECK: kt.bitwise_not %{{.*}} : (tensor<i64>) -> tensor<i64>
func.func @bitwise_not_i64(%a: tensor<i64>) -> tensor<i64> {
  %0 = kt.bitwise_not %a : (tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that kt.special round-trips for each fn (dynamic dims, every float
// type) and that polygamma carries its order n.
// CHECK-LABEL: func.func @special_fns
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<lgamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<digamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<polygamma>, n = 3 : i64} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<erfc>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<erfinv>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<erfcx>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<ndtr>} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<ndtri>} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<log_ndtr>} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<i0>} : (tensor<bf16>) -> tensor<bf16>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<i0e>} : (tensor<bf16>) -> tensor<bf16>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<i1>} : (tensor<bf16>) -> tensor<bf16>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<i1e>} : (tensor<bf16>) -> tensor<bf16>
func.func @special_fns(%a: tensor<2x?xf32>, %b: tensor<3xf64>, %c: tensor<4xf16>, %d: tensor<bf16>) {
  %0 = kt.special %a {fn = #kt.special_fn<lgamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.special %a {fn = #kt.special_fn<digamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %2 = kt.special %a {fn = #kt.special_fn<polygamma>, n = 3} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %3 = kt.special %b {fn = #kt.special_fn<erfc>} : (tensor<3xf64>) -> tensor<3xf64>
  %4 = kt.special %b {fn = #kt.special_fn<erfinv>} : (tensor<3xf64>) -> tensor<3xf64>
  %5 = kt.special %b {fn = #kt.special_fn<erfcx>} : (tensor<3xf64>) -> tensor<3xf64>
  %6 = kt.special %c {fn = #kt.special_fn<ndtr>} : (tensor<4xf16>) -> tensor<4xf16>
  %7 = kt.special %c {fn = #kt.special_fn<ndtri>} : (tensor<4xf16>) -> tensor<4xf16>
  %8 = kt.special %c {fn = #kt.special_fn<log_ndtr>} : (tensor<4xf16>) -> tensor<4xf16>
  %9 = kt.special %d {fn = #kt.special_fn<i0>} : (tensor<bf16>) -> tensor<bf16>
  %10 = kt.special %d {fn = #kt.special_fn<i0e>} : (tensor<bf16>) -> tensor<bf16>
  %11 = kt.special %d {fn = #kt.special_fn<i1>} : (tensor<bf16>) -> tensor<bf16>
  %12 = kt.special %d {fn = #kt.special_fn<i1e>} : (tensor<bf16>) -> tensor<bf16>
  return
}

// -----

// Tests that the Bessel and Airy fns of kt.special round-trip (f32 with a
// dynamic dim, f64).
// CHECK-LABEL: func.func @special_bessel_fns
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<bessel_j0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<bessel_j1>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<bessel_y0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<bessel_y1>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<modified_bessel_k0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<modified_bessel_k1>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<scaled_modified_bessel_k0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<scaled_modified_bessel_k1>} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<spherical_bessel_j0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.special %{{.*}} {fn = #kt.special_fn<airy_ai>} : (tensor<3xf64>) -> tensor<3xf64>
func.func @special_bessel_fns(%a: tensor<2x?xf32>, %b: tensor<3xf64>) {
  %0 = kt.special %a {fn = #kt.special_fn<bessel_j0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.special %b {fn = #kt.special_fn<bessel_j1>} : (tensor<3xf64>) -> tensor<3xf64>
  %2 = kt.special %a {fn = #kt.special_fn<bessel_y0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %3 = kt.special %b {fn = #kt.special_fn<bessel_y1>} : (tensor<3xf64>) -> tensor<3xf64>
  %4 = kt.special %a {fn = #kt.special_fn<modified_bessel_k0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %5 = kt.special %b {fn = #kt.special_fn<modified_bessel_k1>} : (tensor<3xf64>) -> tensor<3xf64>
  %6 = kt.special %a {fn = #kt.special_fn<scaled_modified_bessel_k0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %7 = kt.special %b {fn = #kt.special_fn<scaled_modified_bessel_k1>} : (tensor<3xf64>) -> tensor<3xf64>
  %8 = kt.special %a {fn = #kt.special_fn<spherical_bessel_j0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %9 = kt.special %b {fn = #kt.special_fn<airy_ai>} : (tensor<3xf64>) -> tensor<3xf64>
  return
}

// -----

// Tests that kt.zeta broadcasts (tensor<?x1xf64>, tensor<3xf64>).
// CHECK-LABEL: func.func @zeta_f64
// CHECK: kt.zeta %{{.*}}, %{{.*}} : (tensor<?x1xf64>, tensor<3xf64>) -> tensor<?x3xf64>
func.func @zeta_f64(%a: tensor<?x1xf64>, %b: tensor<3xf64>) -> tensor<?x3xf64> {
  %0 = kt.zeta %a, %b : (tensor<?x1xf64>, tensor<3xf64>) -> tensor<?x3xf64>
  return %0 : tensor<?x3xf64>
}
