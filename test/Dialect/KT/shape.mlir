// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Round-trips of the shape ops (custom and generic form), with static and
// dynamic dims and every attribute. Each function returns the op's result, so
// a wrong inferred type fails verification.

// CHECK-LABEL: func.func @reshape
// CHECK: kt.reshape %{{.*}} {shape = [3, -1]} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
// CHECK: kt.reshape %{{.*}} {shape = []} : (tensor<1x1xi64>) -> tensor<i64>
// CHECK: kt.reshape %{{.*}} {shape = [-1, 4]} : (tensor<?x2x2xf16>) -> tensor<?x4xf16>
// CHECK: kt.reshape %{{.*}} {shape = [2, 3]} : (tensor<?xbf16>) -> tensor<2x3xbf16>
// CHECK: kt.reshape %{{.*}} {shape = [0, 5]} : (tensor<3x0xi1>) -> tensor<0x5xi1>
func.func @reshape(%a: tensor<2x3x4xf32>, %b: tensor<1x1xi64>, %c: tensor<?x2x2xf16>, %d: tensor<?xbf16>, %e: tensor<3x0xi1>)
    -> (tensor<3x8xf32>, tensor<i64>, tensor<?x4xf16>, tensor<2x3xbf16>, tensor<0x5xi1>) {
  %0 = kt.reshape %a {shape = [3, -1]} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
  %1 = kt.reshape %b {shape = []} : (tensor<1x1xi64>) -> tensor<i64>
  %2 = kt.reshape %c {shape = [-1, 4]} : (tensor<?x2x2xf16>) -> tensor<?x4xf16>
  %3 = kt.reshape %d {shape = [2, 3]} : (tensor<?xbf16>) -> tensor<2x3xbf16>
  %4 = kt.reshape %e {shape = [0, 5]} : (tensor<3x0xi1>) -> tensor<0x5xi1>
  return %0, %1, %2, %3, %4 : tensor<3x8xf32>, tensor<i64>, tensor<?x4xf16>, tensor<2x3xbf16>, tensor<0x5xi1>
}

// -----

// Tests kt.reshape with size operands (-2 entries): several dynamic sizes
// in one target (a merge of two `?` dims, a split into two `?` dims and an
// inferred -1), a constant size operand (static in the result type), and
// kt.view_reshape with size operands.
// CHECK-LABEL: func.func @reshape_sizes
// CHECK: kt.reshape %{{.*}}, %{{.*}} {shape = [-2, 64]} : (tensor<?x?x64xf32>, index) -> tensor<?x64xf32>
// CHECK: kt.reshape %{{.*}}, %{{.*}}, %{{.*}} {shape = [-2, -2, 4, -1]} : (tensor<?x64xf32>, index, index) -> tensor<?x?x4x16xf32>
// CHECK: kt.reshape %{{.*}}, %{{.*}} {shape = [-2, -1]} : (tensor<6x4xf32>, index) -> tensor<3x?xf32>
// CHECK: kt.view_reshape %{{.*}}, %{{.*}} {shape = [-2, 64]} : (!kt.ref<?x?x64xf32>, index) -> !kt.ref<?x64xf32>
func.func @reshape_sizes(%x: tensor<?x?x64xf32>, %y: tensor<6x4xf32>, %r: !kt.ref<?x?x64xf32>)
    -> (tensor<?x?x4x16xf32>, tensor<3x?xf32>, !kt.ref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %bt = arith.muli %b, %t : index
  %0 = kt.reshape %x, %bt {shape = [-2, 64]} : (tensor<?x?x64xf32>, index) -> tensor<?x64xf32>
  %1 = kt.reshape %0, %b, %t {shape = [-2, -2, 4, -1]} : (tensor<?x64xf32>, index, index) -> tensor<?x?x4x16xf32>
  %2 = kt.reshape %y, %c3 {shape = [-2, -1]} : (tensor<6x4xf32>, index) -> tensor<3x?xf32>
  %3 = kt.view_reshape %r, %bt {shape = [-2, 64]} : (!kt.ref<?x?x64xf32>, index) -> !kt.ref<?x64xf32>
  return %1, %2, %3 : tensor<?x?x4x16xf32>, tensor<3x?xf32>, !kt.ref<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_permute
// CHECK: kt.transpose %{{.*}} {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK: kt.transpose %{{.*}} {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<?x3xi32>) -> tensor<3x?xi32>
// CHECK: kt.permute %{{.*}} {dims = [2, 0, 1]} : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
// CHECK: kt.permute %{{.*}} {dims = [-1, 0]} : (tensor<?x5xi1>) -> tensor<5x?xi1>
// CHECK: kt.permute %{{.*}} {dims = []} : (tensor<f32>) -> tensor<f32>
func.func @transpose_permute(%a: tensor<2x3x4xf32>, %b: tensor<?x3xi32>, %c: tensor<2x3x4xf64>, %d: tensor<?x5xi1>, %e: tensor<f32>)
    -> (tensor<4x3x2xf32>, tensor<3x?xi32>, tensor<4x2x3xf64>, tensor<5x?xi1>, tensor<f32>) {
  %0 = kt.transpose %a {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = kt.transpose %b {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<?x3xi32>) -> tensor<3x?xi32>
  %2 = kt.permute %c {dims = [2, 0, 1]} : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
  %3 = kt.permute %d {dims = [-1, 0]} : (tensor<?x5xi1>) -> tensor<5x?xi1>
  %4 = kt.permute %e {dims = []} : (tensor<f32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<4x3x2xf32>, tensor<3x?xi32>, tensor<4x2x3xf64>, tensor<5x?xi1>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @expand
// CHECK: kt.expand %{{.*}} {size = [2, -1, 4]} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK: kt.expand %{{.*}} {size = [5, 7]} : (tensor<?x7xi64>) -> tensor<5x7xi64>
// CHECK: kt.expand %{{.*}} {size = [3, -1]} : (tensor<?xf16>) -> tensor<3x?xf16>
// CHECK: kt.expand %{{.*}} {size = [2, 0]} : (tensor<f32>) -> tensor<2x0xf32>
func.func @expand(%a: tensor<3x1xf32>, %b: tensor<?x7xi64>, %c: tensor<?xf16>, %d: tensor<f32>)
    -> (tensor<2x3x4xf32>, tensor<5x7xi64>, tensor<3x?xf16>, tensor<2x0xf32>) {
  %0 = kt.expand %a {size = [2, -1, 4]} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = kt.expand %b {size = [5, 7]} : (tensor<?x7xi64>) -> tensor<5x7xi64>
  %2 = kt.expand %c {size = [3, -1]} : (tensor<?xf16>) -> tensor<3x?xf16>
  %3 = kt.expand %d {size = [2, 0]} : (tensor<f32>) -> tensor<2x0xf32>
  return %0, %1, %2, %3 : tensor<2x3x4xf32>, tensor<5x7xi64>, tensor<3x?xf16>, tensor<2x0xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK: kt.squeeze %{{.*}} : (tensor<1x3x1xf32>) -> tensor<3xf32>
// CHECK: kt.squeeze %{{.*}} {dim = [0]} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
// CHECK: kt.squeeze %{{.*}} {dim = [1, -1]} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
// CHECK: kt.squeeze %{{.*}} : (tensor<?x1xi1>) -> tensor<?xi1>
// CHECK: kt.unsqueeze %{{.*}} {dim = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK: kt.unsqueeze %{{.*}} {dim = 0 : i64} : (tensor<f64>) -> tensor<1xf64>
// CHECK: kt.unsqueeze %{{.*}} {dim = 1 : i64} : (tensor<?x?xbf16>) -> tensor<?x1x?xbf16>
func.func @squeeze_unsqueeze(%a: tensor<1x3x1xf32>, %b: tensor<?x1xi1>, %c: tensor<2x3xf32>, %d: tensor<f64>, %e: tensor<?x?xbf16>)
    -> (tensor<3xf32>, tensor<3x1xf32>, tensor<1x3xf32>, tensor<?xi1>, tensor<2x3x1xf32>, tensor<1xf64>, tensor<?x1x?xbf16>) {
  %0 = kt.squeeze %a : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %1 = kt.squeeze %a {dim = [0]} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  %2 = kt.squeeze %a {dim = [1, -1]} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  %3 = kt.squeeze %b : (tensor<?x1xi1>) -> tensor<?xi1>
  %4 = kt.unsqueeze %c {dim = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  %5 = kt.unsqueeze %d {dim = 0 : i64} : (tensor<f64>) -> tensor<1xf64>
  %6 = kt.unsqueeze %e {dim = 1 : i64} : (tensor<?x?xbf16>) -> tensor<?x1x?xbf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3xf32>, tensor<3x1xf32>, tensor<1x3xf32>, tensor<?xi1>, tensor<2x3x1xf32>, tensor<1xf64>, tensor<?x1x?xbf16>
}

// -----

// CHECK-LABEL: func.func @slice_select
// CHECK: kt.slice %{{.*}} {dim = 1 : i64, end = -1 : i64, start = 1 : i64, step = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x3xf32>
// CHECK: kt.slice %{{.*}} : (tensor<5x2xi32>) -> tensor<5x2xi32>
// CHECK: kt.slice %{{.*}} {end = 100 : i64, start = -100 : i64} : (tensor<5xf32>) -> tensor<5xf32>
// CHECK: kt.slice %{{.*}} {end = 1 : i64, start = 3 : i64} : (tensor<5xf32>) -> tensor<0xf32>
// CHECK: kt.slice %{{.*}} {start = 2 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: kt.select %{{.*}} {dim = 0 : i64, index = -1 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: kt.select %{{.*}} {dim = 1 : i64, index = 7 : i64} : (tensor<3x?xi64>) -> tensor<3xi64>
func.func @slice_select(%a: tensor<2x8xf32>, %b: tensor<5x2xi32>, %c: tensor<5xf32>, %d: tensor<?x4xf32>, %e: tensor<2x3xf32>, %f: tensor<3x?xi64>)
    -> (tensor<2x3xf32>, tensor<5x2xi32>, tensor<5xf32>, tensor<0xf32>, tensor<?x4xf32>, tensor<3xf32>, tensor<3xi64>) {
  %0 = kt.slice %a {dim = 1 : i64, start = 1 : i64, end = -1 : i64, step = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x3xf32>
  %1 = kt.slice %b : (tensor<5x2xi32>) -> tensor<5x2xi32>
  %2 = kt.slice %c {start = -100 : i64, end = 100 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  %3 = kt.slice %c {start = 3 : i64, end = 1 : i64} : (tensor<5xf32>) -> tensor<0xf32>
  %4 = kt.slice %d {start = 2 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %5 = kt.select %e {dim = 0 : i64, index = -1 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  %6 = kt.select %f {dim = 1 : i64, index = 7 : i64} : (tensor<3x?xi64>) -> tensor<3xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<5x2xi32>, tensor<5xf32>, tensor<0xf32>, tensor<?x4xf32>, tensor<3xf32>, tensor<3xi64>
}

// -----

// Dynamic bounds: `index` operands for dynamic_start / dynamic_end (the start
// first). The result dim is `?` unless the operand and the dim are static
// (a constant: %3 is x[:, 2:-1], %4 is x[:, 5:100] of 6 columns).
// CHECK-LABEL: func.func @slice_dynamic_bounds
// CHECK: kt.slice %{{.*}}, %[[T:.*]] {dim = 1 : i64, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
// CHECK: kt.slice %{{.*}}, %[[TM1:.*]] {dim = -1 : i64, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
// CHECK: kt.slice %{{.*}}, %[[H:.*]], %[[T]] {dim = 1 : i64, dynamic_end, dynamic_start, step = 2 : i64} : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
// CHECK: kt.slice %{{.*}}, %{{.*}} {dim = 1 : i64, dynamic_end, start = 2 : i64} : (tensor<3x6xf32>, index) -> tensor<3x3xf32>
// CHECK: kt.slice %{{.*}}, %{{.*}} {dim = 1 : i64, dynamic_start, end = 100 : i64} : (tensor<3x6xf32>, index) -> tensor<3x1xf32>
func.func @slice_dynamic_bounds(%x: tensor<3x6xf32>, %y: tensor<?xf32>, %z: tensor<?x?xf32>)
    -> (tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x?xf32>, tensor<3x3xf32>, tensor<3x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cm1 = arith.constant -1 : index
  %c5 = arith.constant 5 : index
  %t = tensor.dim %y, %c0 : tensor<?xf32>
  %tm1 = arith.subi %t, %c1 : index
  %h = arith.floordivsi %t, %c2 : index
  %0 = kt.slice %x, %t {dim = 1 : i64, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
  %1 = kt.slice %x, %tm1 {dim = -1 : i64, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
  %2 = kt.slice %z, %h, %t {dim = 1 : i64, dynamic_start, dynamic_end, step = 2 : i64} : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %3 = kt.slice %x, %cm1 {dim = 1 : i64, start = 2 : i64, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x3xf32>
  %4 = kt.slice %x, %c5 {dim = 1 : i64, dynamic_start, end = 100 : i64} : (tensor<3x6xf32>, index) -> tensor<3x1xf32>
  return %0, %1, %2, %3, %4 : tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x?xf32>, tensor<3x3xf32>, tensor<3x1xf32>
}

// -----

// CHECK-LABEL: func.func @concat_stack
// CHECK: kt.concat %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: kt.concat %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: kt.concat %{{.*}}, %{{.*}} {dim = -1 : i64} : (tensor<?x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: kt.concat %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<0xf32>) -> tensor<2x3xf32>
// CHECK: kt.stack %{{.*}}, %{{.*}} {dim = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x2xf32>
// CHECK: kt.stack %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<3xi1>
// CHECK: kt.stack %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
func.func @concat_stack(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<?x3xf32>, %e: tensor<0xf32>, %s: tensor<i1>)
    -> (tensor<2x4xf32>, tensor<?x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3x2xf32>, tensor<3xi1>, tensor<2x2x3xf32>) {
  %0 = kt.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %1 = kt.concat %a, %c : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = kt.concat %c, %b {dim = -1 : i64} : (tensor<?x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %3 = kt.concat %a, %e : (tensor<2x3xf32>, tensor<0xf32>) -> tensor<2x3xf32>
  %4 = kt.stack %a, %a {dim = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x2xf32>
  %5 = kt.stack %s, %s, %s : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<3xi1>
  %6 = kt.stack %c, %a {dim = 1 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x4xf32>, tensor<?x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3x2xf32>, tensor<3xi1>, tensor<2x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @gather_index_select
// CHECK: kt.gather %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
// CHECK: kt.gather %{{.*}}, %{{.*}} {dim = -2 : i64} : (tensor<?x3xf16>, tensor<4x?xi32>) -> tensor<4x?xf16>
// CHECK: kt.index_select %{{.*}}, %{{.*}} {dim = 0 : i64} : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
// CHECK: kt.index_select %{{.*}}, %{{.*}} {dim = -1 : i64} : (tensor<4x3xf32>, tensor<i32>) -> tensor<4x1xf32>
// CHECK: kt.index_select %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<4x3xf32>, tensor<?xi64>) -> tensor<4x?xf32>
func.func @gather_index_select(%a: tensor<2x3xf32>, %i: tensor<2x5xi64>, %b: tensor<?x3xf16>, %j: tensor<4x?xi32>,
    %c: tensor<4x3xf32>, %k: tensor<5xi64>, %l: tensor<i32>, %m: tensor<?xi64>)
    -> (tensor<2x5xf32>, tensor<4x?xf16>, tensor<5x3xf32>, tensor<4x1xf32>, tensor<4x?xf32>) {
  %0 = kt.gather %a, %i {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  %1 = kt.gather %b, %j {dim = -2 : i64} : (tensor<?x3xf16>, tensor<4x?xi32>) -> tensor<4x?xf16>
  %2 = kt.index_select %c, %k {dim = 0 : i64} : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
  %3 = kt.index_select %c, %l {dim = -1 : i64} : (tensor<4x3xf32>, tensor<i32>) -> tensor<4x1xf32>
  %4 = kt.index_select %c, %m {dim = 1 : i64} : (tensor<4x3xf32>, tensor<?xi64>) -> tensor<4x?xf32>
  return %0, %1, %2, %3, %4 : tensor<2x5xf32>, tensor<4x?xf16>, tensor<5x3xf32>, tensor<4x1xf32>, tensor<4x?xf32>
}

// -----

// CHECK-LABEL: func.func @pad_flip
// CHECK: kt.pad %{{.*}} {pad = [1, 2, -1, 0], value = 5.000000e+00 : f64} : (tensor<3x4xf32>) -> tensor<2x7xf32>
// CHECK: kt.pad %{{.*}} {pad = [1, 1]} : (tensor<?x4xi64>) -> tensor<?x6xi64>
// CHECK: kt.pad %{{.*}} {pad = [0, 0, 2, -3]} : (tensor<?x4xi1>) -> tensor<?x4xi1>
// CHECK: kt.pad %{{.*}} {pad = [-2, -2]} : (tensor<4xf32>) -> tensor<0xf32>
// CHECK: kt.flip %{{.*}} {dims = [0, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: kt.flip %{{.*}} {dims = [1]} : (tensor<?x?xbf16>) -> tensor<?x?xbf16>
func.func @pad_flip(%a: tensor<3x4xf32>, %b: tensor<?x4xi64>, %c: tensor<?x4xi1>, %d: tensor<4xf32>, %e: tensor<2x3xf32>, %f: tensor<?x?xbf16>)
    -> (tensor<2x7xf32>, tensor<?x6xi64>, tensor<?x4xi1>, tensor<0xf32>, tensor<2x3xf32>, tensor<?x?xbf16>) {
  %0 = kt.pad %a {pad = [1, 2, -1, 0], value = 5.0 : f64} : (tensor<3x4xf32>) -> tensor<2x7xf32>
  %1 = kt.pad %b {pad = [1, 1]} : (tensor<?x4xi64>) -> tensor<?x6xi64>
  %2 = kt.pad %c {pad = [0, 0, 2, -3]} : (tensor<?x4xi1>) -> tensor<?x4xi1>
  %3 = kt.pad %d {pad = [-2, -2]} : (tensor<4xf32>) -> tensor<0xf32>
  %4 = kt.flip %e {dims = [0, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = kt.flip %f {dims = [1]} : (tensor<?x?xbf16>) -> tensor<?x?xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<2x7xf32>, tensor<?x6xi64>, tensor<?x4xi1>, tensor<0xf32>, tensor<2x3xf32>, tensor<?x?xbf16>
}

// -----

// Crops may take a whole dim (then pad it again), or an empty dim nothing.
// CHECK-LABEL: func.func @pad_crop_whole_dim
// CHECK: kt.pad %{{.*}} {pad = [3, -2]} : (tensor<2xf32>) -> tensor<3xf32>
// CHECK: kt.pad %{{.*}} {pad = [2, 1]} : (tensor<0xi16>) -> tensor<3xi16>
func.func @pad_crop_whole_dim(%a: tensor<2xf32>, %b: tensor<0xi16>) -> (tensor<3xf32>, tensor<3xi16>) {
  %0 = kt.pad %a {pad = [3, -2]} : (tensor<2xf32>) -> tensor<3xf32>
  %1 = kt.pad %b {pad = [2, 1]} : (tensor<0xi16>) -> tensor<3xi16>
  return %0, %1 : tensor<3xf32>, tensor<3xi16>
}

// -----

// A written result type may refine an inferred `?`.
// CHECK-LABEL: func.func @refine
// CHECK: kt.reshape %{{.*}} {shape = [-1, 4]} : (tensor<?x2x2xf32>) -> tensor<3x4xf32>
func.func @refine(%a: tensor<?x2x2xf32>) -> tensor<3x4xf32> {
  %0 = kt.reshape %a {shape = [-1, 4]} : (tensor<?x2x2xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @scatter
// CHECK: kt.scatter %{{.*}}, %{{.*}}, %{{.*}} {dim = 0 : i64} : (tensor<4x3xf32>, tensor<5x3xi64>, tensor<5x3xf32>) -> tensor<4x3xf32>
// CHECK: kt.scatter %{{.*}}, %{{.*}}, %{{.*}} {dim = -1 : i64, include_self = false, reduce = #kt.scatter_reduce<mean>} : (tensor<?x5xf16>, tensor<2x?xi32>, tensor<?x?xf16>) -> tensor<?x5xf16>
// CHECK: kt.scatter %{{.*}}, %{{.*}}, %{{.*}} {dim = 0 : i64, reduce = #kt.scatter_reduce<amax>} : (tensor<i1>, tensor<1xi64>, tensor<i1>) -> tensor<i1>
// CHECK: kt.scatter %{{.*}}, %{{.*}}, %{{.*}} {dim = 1 : i64, reduce = #kt.scatter_reduce<prod>} : (tensor<2x3xi64>, tensor<0x9xi64>, tensor<1x1xi64>) -> tensor<2x3xi64>
func.func @scatter(%a: tensor<4x3xf32>, %i: tensor<5x3xi64>, %s: tensor<5x3xf32>,
    %b: tensor<?x5xf16>, %j: tensor<2x?xi32>, %t: tensor<?x?xf16>,
    %c: tensor<i1>, %k: tensor<1xi64>, %u: tensor<i1>,
    %d: tensor<2x3xi64>, %l: tensor<0x9xi64>, %v: tensor<1x1xi64>)
    -> (tensor<4x3xf32>, tensor<?x5xf16>, tensor<i1>, tensor<2x3xi64>) {
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64} : (tensor<4x3xf32>, tensor<5x3xi64>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %1 = kt.scatter %b, %j, %t {dim = -1 : i64, reduce = #kt.scatter_reduce<mean>, include_self = false} : (tensor<?x5xf16>, tensor<2x?xi32>, tensor<?x?xf16>) -> tensor<?x5xf16>
  %2 = kt.scatter %c, %k, %u {dim = 0 : i64, reduce = #kt.scatter_reduce<amax>} : (tensor<i1>, tensor<1xi64>, tensor<i1>) -> tensor<i1>
  %3 = kt.scatter %d, %l, %v {dim = 1 : i64, reduce = #kt.scatter_reduce<prod>, include_self = true} : (tensor<2x3xi64>, tensor<0x9xi64>, tensor<1x1xi64>) -> tensor<2x3xi64>
  return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<?x5xf16>, tensor<i1>, tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @slice_scatter_dynamic_bounds
// CHECK: kt.slice_scatter %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {dim = 1 : i64, dynamic_end, dynamic_start} : (tensor<3x6xf32>, tensor<3x?xf32>, index, index) -> tensor<3x6xf32>
func.func @slice_scatter_dynamic_bounds(%x: tensor<3x6xf32>, %v: tensor<3x?xf32>, %s: index, %e: index) -> tensor<3x6xf32> {
  %0 = kt.slice_scatter %x, %v, %s, %e {dim = 1 : i64, dynamic_start, dynamic_end} : (tensor<3x6xf32>, tensor<3x?xf32>, index, index) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// CHECK-LABEL: func.func @check
// CHECK: kt.check %{{.*}}, %{{.*}} {message = "offsets[0] has to be 0"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
// CHECK: kt.check %{{.*}}, %{{.*}} {message = "x"} : (tensor<?x2xf32>, tensor<?xi1>) -> tensor<?x2xf32>
func.func @check(%o: tensor<3xi64>, %c: tensor<i1>, %x: tensor<?x2xf32>, %d: tensor<?xi1>) -> (tensor<3xi64>, tensor<?x2xf32>) {
  %0 = kt.check %o, %c {message = "offsets[0] has to be 0"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
  %1 = kt.check %x, %d {message = "x"} : (tensor<?x2xf32>, tensor<?xi1>) -> tensor<?x2xf32>
  return %0, %1 : tensor<3xi64>, tensor<?x2xf32>
}
