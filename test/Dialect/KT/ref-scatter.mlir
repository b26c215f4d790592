// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Tests that kt.slice_scatter and kt.select_scatter (the value forms of
// writes through kt.view_slice / kt.view_select) round-trip, with default
// attributes and dynamic dims.
// CHECK-LABEL: func.func @scatter
// CHECK: kt.slice_scatter %{{.*}}, %{{.*}} {dim = 1 : i64, end = 3 : i64, start = 1 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
// CHECK: kt.slice_scatter %{{.*}}, %{{.*}} {step = 2 : i64} : (tensor<5xi64>, tensor<3xi64>) -> tensor<5xi64>
// CHECK: kt.slice_scatter %{{.*}}, %{{.*}} {start = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: kt.select_scatter %{{.*}}, %{{.*}} {dim = 0 : i64, index = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: kt.select_scatter %{{.*}}, %{{.*}} {dim = 1 : i64, index = 0 : i64} : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
func.func @scatter(%x: tensor<2x4xf32>, %v: tensor<2x2xf32>, %i: tensor<5xi64>, %j: tensor<3xi64>,
                   %d: tensor<?x3xf32>, %r: tensor<4xf32>, %c: tensor<?xf32>) {
  %0 = kt.slice_scatter %x, %v {dim = 1, start = 1, end = 3} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %1 = kt.slice_scatter %i, %j {step = 2} : (tensor<5xi64>, tensor<3xi64>) -> tensor<5xi64>
  %2 = kt.slice_scatter %d, %d {start = 1} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %3 = kt.select_scatter %x, %r {dim = 0, index = -1} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %4 = kt.select_scatter %d, %c {dim = 1, index = 0} : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
  return
}
