// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// Tests that x + 0 folds to x for integers (either operand order).
// CHECK-LABEL: func.func @add_zero_int
// CHECK-NOT: kt.add
// CHECK: return %arg0, %arg0
func.func @add_zero_int(%x: tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>) {
  %z = kt.constant {value = dense<0> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = kt.add %x, %z : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %1 = kt.add %z, %x : (tensor<3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// Tests that float x + (-0.0) folds, but x + 0.0 does not (-0.0 + 0.0 is
// +0.0, so x + 0.0 is not the identity).
// CHECK-LABEL: func.func @add_zero_float
// CHECK: %[[R:.*]] = kt.add %arg0, %{{.*}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: return %arg0, %[[R]]
func.func @add_zero_float(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %nz = kt.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %pz = kt.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.add %x, %nz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kt.add %x, %pz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that x + 0 that broadcasts x to a larger shape does not fold.
// CHECK-LABEL: func.func @add_zero_broadcasts
// CHECK: kt.add %arg0, %{{.*}} : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
func.func @add_zero_broadcasts(%x: tensor<3xi32>) -> tensor<2x3xi32> {
  %z = kt.constant {value = dense<0> : tensor<2x3xi32>} : () -> tensor<2x3xi32>
  %0 = kt.add %x, %z : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Tests that x + 0 does not fold when a ? dim of x could be 1 and broadcast.
// CHECK-LABEL: func.func @add_zero_dynamic
// CHECK: kt.add %arg0, %{{.*}} : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
func.func @add_zero_dynamic(%x: tensor<?xi64>) -> tensor<?xi64> {
  %z = kt.constant {value = dense<0> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = kt.add %x, %z : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// Tests that x + 0 folds with a dynamic x when the constant has size-1 dims.
// CHECK-LABEL: func.func @add_zero_dynamic_ok
// CHECK-NOT: kt.add
// CHECK: return %arg0
func.func @add_zero_dynamic_ok(%x: tensor<?x3xi64>) -> tensor<?x3xi64> {
  %z = kt.constant {value = dense<0> : tensor<1x1xi64>} : () -> tensor<1x1xi64>
  %0 = kt.add %x, %z : (tensor<?x3xi64>, tensor<1x1xi64>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// Tests that x + 1 and x + (non-splat zero-ish) constants do not fold.
// CHECK-LABEL: func.func @add_nonzero
// CHECK: kt.add
// CHECK: kt.add
func.func @add_nonzero(%x: tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>) {
  %one = kt.constant {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %mix = kt.constant {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = kt.add %x, %one : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = kt.add %x, %mix : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// Tests that x * 1 folds (float and int, both orders) and x * 2 does not.
// CHECK-LABEL: func.func @mul_one
// CHECK: %[[R:.*]] = kt.mul %arg1, %{{.*}} : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
// CHECK: return %arg0, %arg0, %[[R]]
func.func @mul_one(%x: tensor<2x3xf16>, %y: tensor<3xi32>) -> (tensor<2x3xf16>, tensor<2x3xf16>, tensor<3xi32>) {
  %one = kt.constant {value = dense<1.0> : tensor<1x3xf16>} : () -> tensor<1x3xf16>
  %two = kt.constant {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %0 = kt.mul %x, %one : (tensor<2x3xf16>, tensor<1x3xf16>) -> tensor<2x3xf16>
  %1 = kt.mul %one, %x : (tensor<1x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %2 = kt.mul %y, %two : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  return %0, %1, %2 : tensor<2x3xf16>, tensor<2x3xf16>, tensor<3xi32>
}

// -----

// Tests that x * 1 that broadcasts does not fold.
// CHECK-LABEL: func.func @mul_one_broadcasts
// CHECK: kt.mul
func.func @mul_one_broadcasts(%x: tensor<3xf32>) -> tensor<4x3xf32> {
  %one = kt.constant {value = dense<1.0> : tensor<4x1xf32>} : () -> tensor<4x1xf32>
  %0 = kt.mul %x, %one : (tensor<3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that x - 0 folds (int, and float +0.0) but 0 - x and x - (-0.0) do not.
// CHECK-LABEL: func.func @sub_zero
// CHECK: %[[A:.*]] = kt.sub %{{.*}}, %arg0 : (tensor<i64>, tensor<5xi64>) -> tensor<5xi64>
// CHECK: %[[B:.*]] = kt.sub %arg1, %{{.*}} : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
// CHECK: return %arg0, %[[A]], %arg1, %[[B]]
func.func @sub_zero(%x: tensor<5xi64>, %f: tensor<5xf64>) -> (tensor<5xi64>, tensor<5xi64>, tensor<5xf64>, tensor<5xf64>) {
  %z = kt.constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %pz = kt.constant {value = dense<0.0> : tensor<f64>} : () -> tensor<f64>
  %nz = kt.constant {value = dense<-0.0> : tensor<f64>} : () -> tensor<f64>
  %0 = kt.sub %x, %z : (tensor<5xi64>, tensor<i64>) -> tensor<5xi64>
  %1 = kt.sub %z, %x : (tensor<i64>, tensor<5xi64>) -> tensor<5xi64>
  %2 = kt.sub %f, %pz : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
  %3 = kt.sub %f, %nz : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
  return %0, %1, %2, %3 : tensor<5xi64>, tensor<5xi64>, tensor<5xf64>, tensor<5xf64>
}

// -----

// Tests that neg(neg x) folds to x and a single neg stays.
// CHECK-LABEL: func.func @neg_neg
// CHECK: %[[N:.*]] = kt.neg %arg0
// CHECK-NOT: kt.neg
// CHECK: return %arg0, %[[N]]
func.func @neg_neg(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %0 = kt.neg %x : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %1 = kt.neg %0 : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %1, %0 : tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// Tests that a cast to the same type folds and a real cast stays.
// CHECK-LABEL: func.func @cast_same
// CHECK: %[[C:.*]] = kt.cast %arg0 {dtype = i32}
// CHECK: return %arg0, %[[C]]
func.func @cast_same(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = kt.cast %x {dtype = f32} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = kt.cast %x {dtype = i32} : (tensor<3xf32>) -> tensor<3xi32>
  return %0, %1 : tensor<3xf32>, tensor<3xi32>
}

// -----

// Tests constant folding of add/sub/mul/neg on splats (float rounding to the
// type, integer wrap-around, broadcast result shape).
// CHECK-LABEL: func.func @fold_constants
// CHECK-DAG: kt.constant {value = dense<5.500000e+00> : tensor<2x3xf32>}
// CHECK-DAG: kt.constant {value = dense<-9223372036854775808> : tensor<4xi64>}
// CHECK-DAG: kt.constant {value = dense<-6> : tensor<i32>}
// CHECK-DAG: kt.constant {value = dense<-2.000000e+00> : tensor<2xf16>}
// CHECK-DAG: kt.constant {value = dense<1.000000e+00> : tensor<f16>}
// CHECK-NOT: kt.add
// CHECK-NOT: kt.sub
// CHECK-NOT: kt.mul
// CHECK-NOT: kt.neg
func.func @fold_constants() -> (tensor<2x3xf32>, tensor<4xi64>, tensor<i32>, tensor<2xf16>, tensor<f16>) {
  %a = kt.constant {value = dense<2.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %b = kt.constant {value = dense<3.0> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %0 = kt.add %a, %b : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %m = kt.constant {value = dense<9223372036854775807> : tensor<4xi64>} : () -> tensor<4xi64>
  %one = kt.constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %1 = kt.add %m, %one : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %c2 = kt.constant {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %c3 = kt.constant {value = dense<-3> : tensor<i32>} : () -> tensor<i32>
  %2 = kt.mul %c2, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %h = kt.constant {value = dense<2.0> : tensor<2xf16>} : () -> tensor<2xf16>
  %3 = kt.neg %h : (tensor<2xf16>) -> tensor<2xf16>
  %p = kt.constant {value = dense<1.0> : tensor<f16>} : () -> tensor<f16>
  %q = kt.constant {value = dense<1.0e-4> : tensor<f16>} : () -> tensor<f16>
  %4 = kt.sub %p, %q : (tensor<f16>, tensor<f16>) -> tensor<f16>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<4xi64>, tensor<i32>, tensor<2xf16>, tensor<f16>
}

// -----

// Tests that constant operands with a dynamic result type are not folded.
// CHECK-LABEL: func.func @fold_dynamic_result
// CHECK: kt.add
func.func @fold_dynamic_result() -> tensor<?xf32> {
  %a = kt.constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = kt.add %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
