// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s
// Tests the lowering of uint8 (ui8): unsigned arith ops where the semantics
// differ from int8 (comparison, division, remainder, max/min, the amax
// identity, casts to float and int64), then every ui8 made i8 (arguments,
// results, constants), since arith/linalg take signless integers only.

// CHECK-LABEL: func.func @ops
// CHECK-SAME: (%{{.*}}: tensor<4xi8> {{.*}}, %{{.*}}: tensor<4xi8> {{.*}}) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xf32>, tensor<i64>, tensor<i8>, tensor<4xi8>)
// CHECK-NOT: ui8
// CHECK: arith.cmpi ugt, %{{.*}}, %{{.*}} : i8
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.maxui
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: arith.extui %{{.*}} : i8 to i64
// CHECK: arith.constant 0 : i8
// CHECK: arith.maxui
// CHECK: arith.constant dense<[-56, 1]> : tensor<2xi8>
// CHECK-NOT: ui8
func.func @ops(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xi1>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xf32>, tensor<i64>, tensor<ui8>, tensor<4xui8>) {
  %0 = kt.gt %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %1 = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = kt.remainder %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %3 = kt.maximum %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %4 = kt.cast %a {dtype = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %5 = kt.sum %a : (tensor<4xui8>) -> tensor<i64>
  %6 = kt.amax %a : (tensor<4xui8>) -> tensor<ui8>
  %c = kt.constant {value = dense<[200, 1]> : tensor<2xui8>} : () -> tensor<2xui8>
  %7 = kt.concat %c, %c {dim = 0} : (tensor<2xui8>, tensor<2xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi1>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xf32>, tensor<i64>, tensor<ui8>, tensor<4xui8>
}

// -----

// int8 keeps the signed forms.
// CHECK-LABEL: func.func @signed
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i8
// CHECK: arith.sitofp %{{.*}} : i8 to f32
func.func @signed(%a: tensor<4xi8>, %b: tensor<4xi8>) -> (tensor<4xi1>, tensor<4xf32>) {
  %0 = kt.gt %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
  %1 = kt.cast %a {dtype = f32} : (tensor<4xi8>) -> tensor<4xf32>
  return %0, %1 : tensor<4xi1>, tensor<4xf32>
}
