// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s

// Tests that rand is one generic over the result: the seed is read once, the
// body builds the row-major linear index from linalg.index, runs ten Philox
// rounds (mului_extended) and scales (out0 >> 8) by 2^-24 in f64, rounded
// to f32.
// CHECK-LABEL: func.func @rand_f32
// CHECK: %[[SEED:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.trunci %[[SEED]] : i64 to i32
// CHECK-COUNT-20: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: arith.shrui %{{.+}}, %{{.+}} : i32
// CHECK: arith.uitofp {{.*}} : i32 to f64
// CHECK: arith.mulf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK-NOT: kt.
func.func @rand_f32(%seed: tensor<i64>) -> tensor<2x3xf32> {
  %r = kt.rand %seed {size = [2, 3], dtype = f32} : (tensor<i64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that randn with a dynamic size uses the size operand (a negative one
// is reported at run time and gives an empty tensor), computes Box-Muller in
// f64 (log, sqrt, cos) and rounds bf16 through f32.
// CHECK-LABEL: func.func @randn_bf16_dynamic
// CHECK-SAME: %{{.+}}: tensor<i64> {{.*}}, %[[D:.+]]: index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[D]], %c0 : index
// CHECK: scf.if %[[NEG]] {
// CHECK-NEXT: func.call @kiln_cpu_runtime_error
// CHECK: %[[S:.+]] = arith.maxsi %[[D]], %c0 : index
// CHECK: tensor.empty(%[[S]]) : tensor<?x4xbf16>
// CHECK: linalg.generic
// CHECK: math.log {{.*}} : f64
// CHECK: math.sqrt {{.*}} : f64
// CHECK: math.cos {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @randn_bf16_dynamic(%seed: tensor<i64>, %d: index) -> tensor<?x4xbf16> {
  %r = kt.randn %seed, %d {size = [-1, 4], dtype = bf16} : (tensor<i64>, index) -> tensor<?x4xbf16>
  return %r : tensor<?x4xbf16>
}

// -----

// Tests that f64 uniform values take 53 bits from out0 and out1.
// CHECK-LABEL: func.func @rand_f64
// CHECK: linalg.generic
// CHECK: arith.extui {{.*}} : i32 to i64
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: arith.uitofp {{.*}} : i64 to f64
// CHECK: arith.constant 1.1102230246251565E-16 : f64
func.func @rand_f64(%seed: tensor<i64>) -> tensor<5xf64> {
  %r = kt.rand %seed {size = [5], dtype = f64} : (tensor<i64>) -> tensor<5xf64>
  return %r : tensor<5xf64>
}

// -----

// Tests that dropout keeps an element when u >= p and multiplies by the
// rescale factor (or 0) in f64.
// CHECK-LABEL: func.func @dropout
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<4x?xf32>)
// CHECK: arith.cmpf oge, %{{.+}}, %{{.+}} : f64
// CHECK: arith.select
// CHECK: arith.extf {{.*}} : f32 to f64
// CHECK: arith.mulf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
func.func @dropout(%x: tensor<4x?xf32>, %seed: tensor<i64>) -> tensor<4x?xf32> {
  %r = kt.dropout %x, %seed {p = 0.25, train = true} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

// Tests that dropout in eval mode is the identity.
// CHECK-LABEL: func.func @dropout_eval
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>
// CHECK-NEXT: return %[[X]]
func.func @dropout_eval(%x: tensor<3xf32>, %seed: tensor<i64>) -> tensor<3xf32> {
  %r = kt.dropout %x, %seed {p = 0.25, train = false} : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
