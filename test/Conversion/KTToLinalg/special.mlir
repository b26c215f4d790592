// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// kt.special and kt.zeta lower to a linalg.generic whose body calls the
// compiled-code runtime's double-precision function (kiln/rt/
// SpecialFunctions.h), declared once per module: f32/f16/bf16 operands are
// extended to f64 and the result truncated to f32 (then to f16/bf16, as
// PyTorch rounds its float result); polygamma passes n first.

// CHECK-DAG: func.func private @kiln_cpu_special_lgamma(f64) -> f64
// CHECK-DAG: func.func private @kiln_cpu_special_polygamma(i64, f64) -> f64
// CHECK-LABEL: func.func @lgamma_f32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[E:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[R:.*]] = func.call @kiln_cpu_special_lgamma(%[[E]]) : (f64) -> f64
// CHECK: %[[T:.*]] = arith.truncf %[[R]] : f64 to f32
// CHECK: linalg.yield %[[T]] : f32
// CHECK-LABEL: func.func @lgamma_twice_f64
// CHECK-NOT: arith.extf
// CHECK: func.call @kiln_cpu_special_lgamma(%{{.*}}) : (f64) -> f64
// CHECK: func.call @kiln_cpu_special_lgamma(%{{.*}}) : (f64) -> f64
// CHECK-LABEL: func.func @polygamma_bf16
// CHECK: %[[N:.*]] = arith.constant 3 : i64
// CHECK: arith.extf %{{.*}} : bf16 to f64
// CHECK: func.call @kiln_cpu_special_polygamma(%[[N]], %{{.*}}) : (i64, f64) -> f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @lgamma_f32(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kt.special %a {fn = #kt.special_fn<lgamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}
func.func @lgamma_twice_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  %0 = kt.special %a {fn = #kt.special_fn<lgamma>} : (tensor<4xf64>) -> tensor<4xf64>
  %1 = kt.special %0 {fn = #kt.special_fn<lgamma>} : (tensor<4xf64>) -> tensor<4xf64>
  return %1 : tensor<4xf64>
}
func.func @polygamma_bf16(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = kt.special %a {fn = #kt.special_fn<polygamma>, n = 3} : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK: func.func private @kiln_cpu_special_zeta(f64, f64) -> f64
// CHECK-LABEL: func.func @zeta_f16
// CHECK: linalg.generic
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : f16 to f64
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : f16 to f64
// CHECK: func.call @kiln_cpu_special_zeta(%[[A]], %[[B]]) : (f64, f64) -> f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @zeta_f16(%a: tensor<2x3xf16>, %b: tensor<3xf16>) -> tensor<2x3xf16> {
  %0 = kt.zeta %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// The Bessel and Airy fns call their own symbols (the X-macro list of
// kiln/rt/SpecialFunctions.h), f32 extended to f64 and the result rounded.
// CHECK-DAG: func.func private @kiln_cpu_special_bessel_y1(f64) -> f64
// CHECK-DAG: func.func private @kiln_cpu_special_scaled_modified_bessel_k0(f64) -> f64
// CHECK-DAG: func.func private @kiln_cpu_special_airy_ai(f64) -> f64
// CHECK-LABEL: func.func @bessel_airy
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: func.call @kiln_cpu_special_bessel_y1(%{{.*}}) : (f64) -> f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: func.call @kiln_cpu_special_scaled_modified_bessel_k0(%{{.*}}) : (f64) -> f64
// CHECK-NOT: arith.extf
// CHECK: func.call @kiln_cpu_special_airy_ai(%{{.*}}) : (f64) -> f64
func.func @bessel_airy(%a: tensor<4xf32>, %b: tensor<2xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf64>) {
  %0 = kt.special %a {fn = #kt.special_fn<bessel_y1>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.special %a {fn = #kt.special_fn<scaled_modified_bessel_k0>} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = kt.special %b {fn = #kt.special_fn<airy_ai>} : (tensor<2xf64>) -> tensor<2xf64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<2xf64>
}
