// RUN: kiln-opt %s -kiln-fuse -mlir-print-debuginfo | FileCheck %s

// Tests that the group keeps the members' locations and gets their fused
// location.
// CHECK-LABEL: func.func @locations
// CHECK: kt.exp {{.*}} loc(#[[L1:.*]])
// CHECK: kt.neg {{.*}} loc(#[[L2:.*]])
// CHECK: } loc(#[[F:.*]])
// CHECK-DAG: #[[L1]] = loc("m.py":1:1)
// CHECK-DAG: #[[L2]] = loc("m.py":2:1)
// CHECK-DAG: #[[F]] = loc(fused[#[[L1]], #[[L2]]])
func.func @locations(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kt.exp %x : (tensor<8xf32>) -> tensor<8xf32> loc("m.py":1:1)
  %1 = kt.neg %0 : (tensor<8xf32>) -> tensor<8xf32> loc("m.py":2:1)
  return %1 : tensor<8xf32>
}
