// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @sum
// CHECK: kt.sum %{{.*}} {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK: kt.sum %{{.*}} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK: kt.sum %{{.*}} {dim = [-1, 0]} : (tensor<2x?x4xi32>) -> tensor<?xi64>
// CHECK: kt.sum %{{.*}} {dim = [0]} : (tensor<3xi1>) -> tensor<i64>
// CHECK: kt.sum %{{.*}} {dim = []} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK: kt.sum %{{.*}} {dim = [0], keepdim = true} : (tensor<bf16>) -> tensor<bf16>
// CHECK: kt.sum %{{.*}} {dim = [1]} : (tensor<2x?x4xi32>) -> tensor<2x4xi64>
func.func @sum(%a: tensor<2x3xf32>, %b: tensor<2x?x4xi32>, %c: tensor<3xi1>, %d: tensor<bf16>)
    -> (tensor<2x1xf32>, tensor<f32>, tensor<?xi64>, tensor<i64>, tensor<f32>, tensor<bf16>, tensor<2x4xi64>) {
  %0 = kt.sum %a {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = kt.sum %a : (tensor<2x3xf32>) -> tensor<f32>
  %2 = kt.sum %b {dim = [-1, 0]} : (tensor<2x?x4xi32>) -> tensor<?xi64>
  %3 = kt.sum %c {dim = [0], keepdim = false} : (tensor<3xi1>) -> tensor<i64>
  %4 = kt.sum %a {dim = []} : (tensor<2x3xf32>) -> tensor<f32>
  %5 = kt.sum %d {dim = [0], keepdim = true} : (tensor<bf16>) -> tensor<bf16>
  %6 = kt.sum %b {dim = [1]} : (tensor<2x?x4xi32>) -> tensor<2x4xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x1xf32>, tensor<f32>, tensor<?xi64>, tensor<i64>, tensor<f32>, tensor<bf16>, tensor<2x4xi64>
}

// -----

// CHECK-LABEL: func.func @others
// CHECK: kt.mean %{{.*}} {dim = [-1]} : (tensor<2x?xf32>) -> tensor<2xf32>
// CHECK: kt.amax %{{.*}} {dim = [0, 1]} : (tensor<2x3x4xi32>) -> tensor<4xi32>
// CHECK: kt.amin %{{.*}} : (tensor<2x?xf16>) -> tensor<f16>
// CHECK: kt.prod %{{.*}} {dim = [0]} : (tensor<2x3x4xi32>) -> tensor<3x4xi64>
// CHECK: kt.prod %{{.*}} {keepdim = true} : (tensor<2x?xf16>) -> tensor<1x1xf16>
// CHECK: kt.var %{{.*}} {correction = 0.000000e+00 : f64, dim = [1]} : (tensor<2x?xf32>) -> tensor<2xf32>
// CHECK: kt.var %{{.*}} : (tensor<2x?xf32>) -> tensor<f32>
// CHECK: kt.logsumexp %{{.*}} {dim = [1], keepdim = true} : (tensor<2x?xf32>) -> tensor<2x1xf32>
// CHECK: kt.any %{{.*}} {dim = [0]} : (tensor<2x3x4xi32>) -> tensor<3x4xi1>
// CHECK: kt.all %{{.*}} : (tensor<2x?xf16>) -> tensor<i1>
// CHECK: kt.all %{{.*}} {dim = [-1], keepdim = true} : (tensor<2x?xf16>) -> tensor<2x1xi1>
func.func @others(%a: tensor<2x?xf32>, %b: tensor<2x3x4xi32>, %h: tensor<2x?xf16>)
    -> (tensor<2xf32>, tensor<4xi32>, tensor<f16>, tensor<3x4xi64>, tensor<1x1xf16>, tensor<2xf32>, tensor<f32>, tensor<2x1xf32>, tensor<3x4xi1>, tensor<i1>, tensor<2x1xi1>) {
  %0 = kt.mean %a {dim = [-1]} : (tensor<2x?xf32>) -> tensor<2xf32>
  %1 = kt.amax %b {dim = [0, 1]} : (tensor<2x3x4xi32>) -> tensor<4xi32>
  %2 = kt.amin %h : (tensor<2x?xf16>) -> tensor<f16>
  %3 = kt.prod %b {dim = [0]} : (tensor<2x3x4xi32>) -> tensor<3x4xi64>
  %4 = kt.prod %h {keepdim = true} : (tensor<2x?xf16>) -> tensor<1x1xf16>
  %5 = kt.var %a {dim = [1], correction = 0.0} : (tensor<2x?xf32>) -> tensor<2xf32>
  %6 = kt.var %a {correction = 1.0} : (tensor<2x?xf32>) -> tensor<f32>
  %7 = kt.logsumexp %a {dim = [1], keepdim = true} : (tensor<2x?xf32>) -> tensor<2x1xf32>
  %8 = kt.any %b {dim = [0]} : (tensor<2x3x4xi32>) -> tensor<3x4xi1>
  %9 = kt.all %h : (tensor<2x?xf16>) -> tensor<i1>
  %10 = kt.all %h {dim = [-1], keepdim = true} : (tensor<2x?xf16>) -> tensor<2x1xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2xf32>, tensor<4xi32>, tensor<f16>, tensor<3x4xi64>, tensor<1x1xf16>, tensor<2xf32>, tensor<f32>, tensor<2x1xf32>, tensor<3x4xi1>, tensor<i1>, tensor<2x1xi1>
}

// -----

// CHECK-LABEL: func.func @arg
// CHECK: kt.argmax %{{.*}} {dim = 1 : i64, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xi64>
// CHECK: kt.argmin %{{.*}} : (tensor<2x3xi64>) -> tensor<i64>
// CHECK: kt.argmax %{{.*}} {keepdim = true} : (tensor<2x3xf32>) -> tensor<1x1xi64>
// CHECK: kt.argmin %{{.*}} {dim = -2 : i64} : (tensor<?x3xbf16>) -> tensor<3xi64>
// CHECK: kt.argmax %{{.*}} {dim = 0 : i64} : (tensor<f64>) -> tensor<i64>
func.func @arg(%a: tensor<2x3xf32>, %b: tensor<2x3xi64>, %c: tensor<?x3xbf16>, %d: tensor<f64>)
    -> (tensor<2x1xi64>, tensor<i64>, tensor<1x1xi64>, tensor<3xi64>, tensor<i64>) {
  %0 = kt.argmax %a {dim = 1, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  %1 = kt.argmin %b : (tensor<2x3xi64>) -> tensor<i64>
  %2 = kt.argmax %a {keepdim = true} : (tensor<2x3xf32>) -> tensor<1x1xi64>
  %3 = kt.argmin %c {dim = -2} : (tensor<?x3xbf16>) -> tensor<3xi64>
  %4 = kt.argmax %d {dim = 0} : (tensor<f64>) -> tensor<i64>
  return %0, %1, %2, %3, %4 : tensor<2x1xi64>, tensor<i64>, tensor<1x1xi64>, tensor<3xi64>, tensor<i64>
}

// -----

// The examples of the op descriptions.
// CHECK-LABEL: func.func @doc_examples
// CHECK: kt.amin %{{.*}} : (tensor<2x3xf16>) -> tensor<f16>
// CHECK: kt.prod %{{.*}} {dim = [0]} : (tensor<3x2xi32>) -> tensor<2xi64>
// CHECK: kt.var %{{.*}} {correction = 0.000000e+00 : f64, dim = [1]} : (tensor<2x3xf64>) -> tensor<2xf64>
// CHECK: kt.logsumexp %{{.*}} {dim = [1], keepdim = true} : (tensor<?x8xbf16>) -> tensor<?x1xbf16>
// CHECK: kt.any %{{.*}} {dim = [0]} : (tensor<3x2xf32>) -> tensor<2xi1>
// CHECK: kt.all %{{.*}} : (tensor<3x2xi1>) -> tensor<i1>
func.func @doc_examples(%a: tensor<2x3xf16>, %b: tensor<3x2xi32>, %c: tensor<2x3xf64>, %d: tensor<?x8xbf16>, %e: tensor<3x2xf32>, %f: tensor<3x2xi1>)
    -> (tensor<f16>, tensor<2xi64>, tensor<2xf64>, tensor<?x1xbf16>, tensor<2xi1>, tensor<i1>) {
  %0 = kt.amin %a : (tensor<2x3xf16>) -> tensor<f16>
  %1 = kt.prod %b {dim = [0]} : (tensor<3x2xi32>) -> tensor<2xi64>
  %2 = kt.var %c {dim = [1], correction = 0.0} : (tensor<2x3xf64>) -> tensor<2xf64>
  %3 = kt.logsumexp %d {dim = [1], keepdim = true} : (tensor<?x8xbf16>) -> tensor<?x1xbf16>
  %4 = kt.any %e {dim = [0]} : (tensor<3x2xf32>) -> tensor<2xi1>
  %5 = kt.all %f : (tensor<3x2xi1>) -> tensor<i1>
  return %0, %1, %2, %3, %4, %5 : tensor<f16>, tensor<2xi64>, tensor<2xf64>, tensor<?x1xbf16>, tensor<2xi1>, tensor<i1>
}

// -----

// Tests that the cumulative scans round-trip (result type = operand type),
// with negative dims, ? dims and rank 0.
// CHECK-LABEL: func.func @cumulative
// CHECK: kt.cumsum %{{.*}} {dim = 1 : i64} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK: kt.cumsum %{{.*}} {dim = -1 : i64} : (tensor<3xi32>) -> tensor<3xi32>
// CHECK: kt.cumprod %{{.*}} {dim = -1 : i64} : (tensor<3x4xi64>) -> tensor<3x4xi64>
// CHECK: kt.cumprod %{{.*}} {dim = 0 : i64} : (tensor<bf16>) -> tensor<bf16>
// CHECK: kt.logcumsumexp %{{.*}} {dim = 0 : i64} : (tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK: kt.logcumsumexp %{{.*}} {dim = -2 : i64} : (tensor<?x0xf64>) -> tensor<?x0xf64>
func.func @cumulative(%a: tensor<2x?xf32>, %b: tensor<3xi32>, %c: tensor<3x4xi64>, %d: tensor<bf16>, %e: tensor<5x3xf32>, %f: tensor<?x0xf64>)
    -> (tensor<2x?xf32>, tensor<3xi32>, tensor<3x4xi64>, tensor<bf16>, tensor<5x3xf32>, tensor<?x0xf64>) {
  %0 = kt.cumsum %a {dim = 1} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.cumsum %b {dim = -1} : (tensor<3xi32>) -> tensor<3xi32>
  %2 = kt.cumprod %c {dim = -1} : (tensor<3x4xi64>) -> tensor<3x4xi64>
  %3 = kt.cumprod %d {dim = 0} : (tensor<bf16>) -> tensor<bf16>
  %4 = kt.logcumsumexp %e {dim = 0} : (tensor<5x3xf32>) -> tensor<5x3xf32>
  %5 = kt.logcumsumexp %f {dim = -2} : (tensor<?x0xf64>) -> tensor<?x0xf64>
  return %0, %1, %2, %3, %4, %5 : tensor<2x?xf32>, tensor<3xi32>, tensor<3x4xi64>, tensor<bf16>, tensor<5x3xf32>, tensor<?x0xf64>
}

// -----

// Tests that argsort round-trips (an i64 result of the operand's shape), with
// descending, negative dims, ? dims, i1, rank 0 and an empty dim.
// CHECK-LABEL: func.func @argsort
// CHECK: kt.argsort %{{.*}} {descending = true, dim = -1 : i64} : (tensor<4x?xf32>) -> tensor<4x?xi64>
// CHECK: kt.argsort %{{.*}} {dim = 0 : i64} : (tensor<3xi1>) -> tensor<3xi64>
// CHECK: kt.argsort %{{.*}} {dim = -1 : i64} : (tensor<bf16>) -> tensor<i64>
// CHECK: kt.argsort %{{.*}} {dim = 1 : i64} : (tensor<2x0xi32>) -> tensor<2x0xi64>
func.func @argsort(%a: tensor<4x?xf32>, %b: tensor<3xi1>, %c: tensor<bf16>, %d: tensor<2x0xi32>)
    -> (tensor<4x?xi64>, tensor<3xi64>, tensor<i64>, tensor<2x0xi64>) {
  %0 = kt.argsort %a {dim = -1, descending = true} : (tensor<4x?xf32>) -> tensor<4x?xi64>
  %1 = kt.argsort %b {dim = 0, descending = false} : (tensor<3xi1>) -> tensor<3xi64>
  %2 = kt.argsort %c {dim = -1} : (tensor<bf16>) -> tensor<i64>
  %3 = kt.argsort %d {dim = 1} : (tensor<2x0xi32>) -> tensor<2x0xi64>
  return %0, %1, %2, %3 : tensor<4x?xi64>, tensor<3xi64>, tensor<i64>, tensor<2x0xi64>
}

// -----

// Tests that searchsorted round-trips (i64 of the values' shape): a 1-D
// sequence with values of any rank (0 included), an N-D sequence with
// matching leading dims, ? dims, right, integers.
// CHECK-LABEL: func.func @searchsorted
// CHECK: kt.searchsorted %{{.*}}, %{{.*}} {right = true} : (tensor<5xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
// CHECK: kt.searchsorted %{{.*}}, %{{.*}} : (tensor<?xi32>, tensor<i32>) -> tensor<i64>
// CHECK: kt.searchsorted %{{.*}}, %{{.*}} : (tensor<2x?x4xbf16>, tensor<2x3x0xbf16>) -> tensor<2x3x0xi64>
// CHECK: kt.searchsorted %{{.*}}, %{{.*}} : (tensor<0xi64>, tensor<7xi64>) -> tensor<7xi64>
func.func @searchsorted(%s: tensor<5xf32>, %v: tensor<2x3xf32>, %t: tensor<?xi32>, %w: tensor<i32>,
                        %n: tensor<2x?x4xbf16>, %m: tensor<2x3x0xbf16>, %e: tensor<0xi64>, %x: tensor<7xi64>)
    -> (tensor<2x3xi64>, tensor<i64>, tensor<2x3x0xi64>, tensor<7xi64>) {
  %0 = kt.searchsorted %s, %v {right = true} : (tensor<5xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
  %1 = kt.searchsorted %t, %w {right = false} : (tensor<?xi32>, tensor<i32>) -> tensor<i64>
  %2 = kt.searchsorted %n, %m : (tensor<2x?x4xbf16>, tensor<2x3x0xbf16>) -> tensor<2x3x0xi64>
  %3 = kt.searchsorted %e, %x : (tensor<0xi64>, tensor<7xi64>) -> tensor<7xi64>
  return %0, %1, %2, %3 : tensor<2x3xi64>, tensor<i64>, tensor<2x3x0xi64>, tensor<7xi64>
}

// -----

// Tests that nonzero round-trips: `?xR` of i64 (the count is data-dependent),
// rank 0 (`?x0`), `?` operand dims, i1 and a written static count.
// CHECK-LABEL: func.func @nonzero
// CHECK: kt.nonzero %{{.*}} : (tensor<3x?xf32>) -> tensor<?x2xi64>
// CHECK: kt.nonzero %{{.*}} : (tensor<i1>) -> tensor<?x0xi64>
// CHECK: kt.nonzero %{{.*}} : (tensor<2x0x4xi32>) -> tensor<?x3xi64>
// CHECK: kt.nonzero %{{.*}} : (tensor<5xbf16>) -> tensor<2x1xi64>
func.func @nonzero(%a: tensor<3x?xf32>, %b: tensor<i1>, %c: tensor<2x0x4xi32>, %d: tensor<5xbf16>)
    -> (tensor<?x2xi64>, tensor<?x0xi64>, tensor<?x3xi64>, tensor<2x1xi64>) {
  %0 = kt.nonzero %a : (tensor<3x?xf32>) -> tensor<?x2xi64>
  %1 = kt.nonzero %b : (tensor<i1>) -> tensor<?x0xi64>
  %2 = kt.nonzero %c : (tensor<2x0x4xi32>) -> tensor<?x3xi64>
  %3 = kt.nonzero %d : (tensor<5xbf16>) -> tensor<2x1xi64>
  return %0, %1, %2, %3 : tensor<?x2xi64>, tensor<?x0xi64>, tensor<?x3xi64>, tensor<2x1xi64>
}

// -----

// Tests that bincount round-trips: `?` of i64 without weights, of the
// weights' type with them, minlength, static operands and a written static
// length.
// CHECK-LABEL: func.func @bincount
// CHECK: kt.bincount %{{.*}} : (tensor<?xi64>) -> tensor<?xi64>
// CHECK: kt.bincount %{{.*}}, %{{.*}} {minlength = 4 : i64} : (tensor<5xui8>, tensor<5xf32>) -> tensor<?xf32>
// CHECK: kt.bincount %{{.*}}, %{{.*}} : (tensor<?xi32>, tensor<5xf64>) -> tensor<?xf64>
// CHECK: kt.bincount %{{.*}} {minlength = 2 : i64} : (tensor<5xui8>) -> tensor<7xi64>
func.func @bincount(%a: tensor<?xi64>, %b: tensor<5xui8>, %w: tensor<5xf32>, %c: tensor<?xi32>, %v: tensor<5xf64>)
    -> (tensor<?xi64>, tensor<?xf32>, tensor<?xf64>, tensor<7xi64>) {
  %0 = kt.bincount %a : (tensor<?xi64>) -> tensor<?xi64>
  %1 = kt.bincount %b, %w {minlength = 4} : (tensor<5xui8>, tensor<5xf32>) -> tensor<?xf32>
  %2 = kt.bincount %c, %v : (tensor<?xi32>, tensor<5xf64>) -> tensor<?xf64>
  %3 = kt.bincount %b {minlength = 2} : (tensor<5xui8>) -> tensor<7xi64>
  return %0, %1, %2, %3 : tensor<?xi64>, tensor<?xf32>, tensor<?xf64>, tensor<7xi64>
}
