// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Tests that int8 (i8), uint8 (ui8) and int16 (i16) are kt element types:
// pointwise, comparison, reduction (sum promotes to i64), cast, shape and
// indexing ops on them, constants of them, and refs of them round-trip.

// CHECK-LABEL: func.func @ops
// CHECK: kt.add %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK: kt.div %{{.*}}, %{{.*}} {rounding_mode = #kt.rounding_mode<floor>} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
// CHECK: kt.lt %{{.*}}, %{{.*}} : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi1>
// CHECK: kt.sum %{{.*}} : (tensor<4xui8>) -> tensor<i64>
// CHECK: kt.cast %{{.*}} {dtype = f32} : (tensor<4xui8>) -> tensor<4xf32>
// CHECK: kt.cast %{{.*}} {dtype = ui8} : (tensor<4xi16>) -> tensor<4xui8>
// CHECK: kt.bitwise_not %{{.*}} : (tensor<4xi8>) -> tensor<4xi8>
// CHECK: kt.index_select %{{.*}}, %{{.*}} {dim = 0 : i64} : (tensor<4xi16>, tensor<2xi64>) -> tensor<2xi16>
// CHECK: kt.constant {value = dense<[255, 0]> : tensor<2xui8>} : () -> tensor<2xui8>
// CHECK: kt.full {dtype = i8, size = [2], value = -1.280000e+02 : f64} : () -> tensor<2xi8>
func.func @ops(%a: tensor<4xui8>, %b: tensor<4xi8>, %c: tensor<4xi16>,
               %i: tensor<2xi64>) -> (tensor<4xui8>, tensor<4xi8>, tensor<4xi1>,
               tensor<i64>, tensor<4xf32>, tensor<4xui8>, tensor<4xi8>,
               tensor<2xi16>, tensor<2xui8>, tensor<2xi8>) {
  %0 = kt.add %a, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kt.div %b, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %2 = kt.lt %c, %c : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi1>
  %3 = kt.sum %a : (tensor<4xui8>) -> tensor<i64>
  %4 = kt.cast %a {dtype = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %5 = kt.cast %c {dtype = ui8} : (tensor<4xi16>) -> tensor<4xui8>
  %6 = kt.bitwise_not %b : (tensor<4xi8>) -> tensor<4xi8>
  %7 = kt.index_select %c, %i {dim = 0} : (tensor<4xi16>, tensor<2xi64>) -> tensor<2xi16>
  %8 = kt.constant {value = dense<[255, 0]> : tensor<2xui8>} : () -> tensor<2xui8>
  %9 = kt.full {dtype = i8, size = [2], value = -128.0 : f64} : () -> tensor<2xi8>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xui8>, tensor<4xi8>, tensor<4xi1>, tensor<i64>, tensor<4xf32>, tensor<4xui8>, tensor<4xi8>, tensor<2xi16>, tensor<2xui8>, tensor<2xi8>
}

// CHECK-LABEL: func.func @refs
// CHECK-SAME: !kt.ref<4xui8>
func.func @refs(%r: !kt.ref<4xui8>) -> !kt.ref<4xui8> {
  return %r : !kt.ref<4xui8>
}
