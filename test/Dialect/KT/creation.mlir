// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @constants
// CHECK: kt.constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK: kt.constant {value = dense<7> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
// CHECK: kt.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
// CHECK: kt.constant {value = dense<1.500000e+00> : tensor<f16>} : () -> tensor<f16>
// CHECK: kt.constant {value = dense<[-2.000000e+00, 3.000000e+00]> : tensor<2xbf16>} : () -> tensor<2xbf16>
// CHECK: kt.constant {value = dense<[1, -2]> : tensor<2xi32>} : () -> tensor<2xi32>
func.func @constants() -> (tensor<2xf32>, tensor<2x3xi64>, tensor<2xi1>, tensor<f16>, tensor<2xbf16>, tensor<2xi32>) {
  %0 = kt.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = kt.constant {value = dense<7> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  %2 = kt.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %3 = kt.constant {value = dense<1.5> : tensor<f16>} : () -> tensor<f16>
  %4 = kt.constant {value = dense<[-2.0, 3.0]> : tensor<2xbf16>} : () -> tensor<2xbf16>
  %5 = kt.constant {value = dense<[1, -2]> : tensor<2xi32>} : () -> tensor<2xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<2x3xi64>, tensor<2xi1>, tensor<f16>, tensor<2xbf16>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @full
// CHECK: kt.full %{{.*}} {dtype = f32, size = [-1, 3], value = 1.500000e+00 : f64} : (index) -> tensor<?x3xf32>
// CHECK: kt.full {dtype = i64, size = [2], value = -4.000000e+00 : f64} : () -> tensor<2xi64>
// CHECK: kt.full {dtype = i1, size = [], value = 1.000000e+00 : f64} : () -> tensor<i1>
// CHECK: kt.full %{{.*}}, %{{.*}} {dtype = bf16, size = [-1, 0, -1], value = 0.000000e+00 : f64} : (index, index) -> tensor<?x0x?xbf16>
// CHECK: kt.full %{{.*}} {dtype = f16, size = [-1], value = 2.000000e+00 : f64} : (index) -> tensor<5xf16>
func.func @full(%d: index) -> (tensor<?x3xf32>, tensor<2xi64>, tensor<i1>, tensor<?x0x?xbf16>, tensor<5xf16>) {
  %0 = kt.full %d {size = [-1, 3], value = 1.5, dtype = f32} : (index) -> tensor<?x3xf32>
  %1 = kt.full {size = [2], value = -4.0, dtype = i64} : () -> tensor<2xi64>
  %2 = kt.full {size = [], value = 1.0, dtype = i1} : () -> tensor<i1>
  %3 = kt.full %d, %d {size = [-1, 0, -1], value = 0.0, dtype = bf16} : (index, index) -> tensor<?x0x?xbf16>
  %4 = kt.full %d {size = [-1], value = 2.0, dtype = f16} : (index) -> tensor<5xf16>
  return %0, %1, %2, %3, %4 : tensor<?x3xf32>, tensor<2xi64>, tensor<i1>, tensor<?x0x?xbf16>, tensor<5xf16>
}

// -----

// CHECK-LABEL: func.func @arange
// CHECK: kt.arange {dtype = i64, end = 5.000000e+00 : f64, step = 2.000000e+00 : f64} : () -> tensor<3xi64>
// CHECK: kt.arange {dtype = f32, end = 1.000000e+00 : f64} : () -> tensor<1xf32>
// CHECK: kt.arange {dtype = f64, end = 0.000000e+00 : f64, start = 1.000000e+00 : f64, step = -1.000000e-01 : f64} : () -> tensor<10xf64>
// CHECK: kt.arange {dtype = i32, end = 3.000000e+00 : f64, start = 3.000000e+00 : f64} : () -> tensor<0xi32>
func.func @arange() -> (tensor<3xi64>, tensor<1xf32>, tensor<10xf64>, tensor<0xi32>) {
  %0 = kt.arange {start = 0.0, end = 5.0, step = 2.0, dtype = i64} : () -> tensor<3xi64>
  %1 = kt.arange {end = 1.0, dtype = f32} : () -> tensor<1xf32>
  %2 = kt.arange {start = 1.0, end = 0.0, step = -0.1, dtype = f64} : () -> tensor<10xf64>
  %3 = kt.arange {start = 3.0, end = 3.0, dtype = i32} : () -> tensor<0xi32>
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<1xf32>, tensor<10xf64>, tensor<0xi32>
}

// -----

// CHECK-LABEL: func.func @random
// CHECK: kt.rand %{{.*}}, %{{.*}} {dtype = f32, size = [-1, 4]} : (tensor<i64>, index) -> tensor<?x4xf32>
// CHECK: kt.randn %{{.*}} {dtype = f64, size = [2, 3]} : (tensor<i64>) -> tensor<2x3xf64>
// CHECK: kt.rand %{{.*}} {dtype = bf16, size = []} : (tensor<i64>) -> tensor<bf16>
// CHECK: kt.randn %{{.*}}, %{{.*}} {dtype = f16, size = [-1]} : (tensor<i64>, index) -> tensor<?xf16>
func.func @random(%seed: tensor<i64>, %d: index) -> (tensor<?x4xf32>, tensor<2x3xf64>, tensor<bf16>, tensor<?xf16>) {
  %0 = kt.rand %seed, %d {size = [-1, 4], dtype = f32} : (tensor<i64>, index) -> tensor<?x4xf32>
  %1 = kt.randn %seed {size = [2, 3], dtype = f64} : (tensor<i64>) -> tensor<2x3xf64>
  %2 = kt.rand %seed {size = [], dtype = bf16} : (tensor<i64>) -> tensor<bf16>
  %3 = kt.randn %seed, %d {size = [-1], dtype = f16} : (tensor<i64>, index) -> tensor<?xf16>
  return %0, %1, %2, %3 : tensor<?x4xf32>, tensor<2x3xf64>, tensor<bf16>, tensor<?xf16>
}

// -----

// CHECK-LABEL: func.func @dropout
// CHECK: kt.dropout %{{.*}}, %{{.*}} {p = 2.500000e-01 : f64} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
// CHECK: kt.dropout %{{.*}}, %{{.*}} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
// CHECK: kt.dropout %{{.*}}, %{{.*}} {p = 1.000000e+00 : f64, train = false} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
// CHECK: kt.dropout %{{.*}}, %{{.*}} {p = 0.000000e+00 : f64} : (tensor<f64>, tensor<i64>) -> tensor<f64>
func.func @dropout(%x: tensor<4x?xf32>, %s: tensor<i64>, %y: tensor<f64>) -> (tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>, tensor<f64>) {
  %0 = kt.dropout %x, %s {p = 0.25, train = true} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  %1 = kt.dropout %x, %s : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  %2 = kt.dropout %x, %s {p = 1.0, train = false} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  %3 = kt.dropout %y, %s {p = 0.0} : (tensor<f64>, tensor<i64>) -> tensor<f64>
  return %0, %1, %2, %3 : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>, tensor<f64>
}
