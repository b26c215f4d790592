// RUN: timeout 120 kiln-opt %s -kiln-fuse -kiln-lower-to-linalg -kiln-form-kernels | FileCheck %s

// A chain where every value is used twice (x = max(y, b); y' = x + x, the
// shape of an unrolled adaptive max pool and its backward masks): elementwise
// fusion merges the repeated operand before fusing its producer, so the
// kernel is one generic with one maximumf and one addf per step. Before, each
// step doubled the fused generic's operands (compile time 2^steps: 10 steps
// took 53 s, a 20-step pool's backward never finished); this 30-step chain
// compiles in well under a second.
// CHECK-LABEL: func.func @chain30
// CHECK: scf.forall
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{[^,]*}}, %{{[^,]*}} : tensor<?xf32>, tensor<?xf32>)
// CHECK-COUNT-30: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: kiln.kernel = "fused_maximum_add_0"
// CHECK-NOT: scf.forall
func.func @chain30(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %x0 = kt.maximum %a, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y0 = kt.add %x0, %x0 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x1 = kt.maximum %y0, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y1 = kt.add %x1, %x1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x2 = kt.maximum %y1, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y2 = kt.add %x2, %x2 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x3 = kt.maximum %y2, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y3 = kt.add %x3, %x3 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x4 = kt.maximum %y3, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y4 = kt.add %x4, %x4 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x5 = kt.maximum %y4, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y5 = kt.add %x5, %x5 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x6 = kt.maximum %y5, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y6 = kt.add %x6, %x6 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x7 = kt.maximum %y6, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y7 = kt.add %x7, %x7 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x8 = kt.maximum %y7, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y8 = kt.add %x8, %x8 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x9 = kt.maximum %y8, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y9 = kt.add %x9, %x9 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x10 = kt.maximum %y9, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y10 = kt.add %x10, %x10 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x11 = kt.maximum %y10, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y11 = kt.add %x11, %x11 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x12 = kt.maximum %y11, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y12 = kt.add %x12, %x12 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x13 = kt.maximum %y12, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y13 = kt.add %x13, %x13 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x14 = kt.maximum %y13, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y14 = kt.add %x14, %x14 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x15 = kt.maximum %y14, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y15 = kt.add %x15, %x15 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x16 = kt.maximum %y15, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y16 = kt.add %x16, %x16 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x17 = kt.maximum %y16, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y17 = kt.add %x17, %x17 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x18 = kt.maximum %y17, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y18 = kt.add %x18, %x18 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x19 = kt.maximum %y18, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y19 = kt.add %x19, %x19 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x20 = kt.maximum %y19, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y20 = kt.add %x20, %x20 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x21 = kt.maximum %y20, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y21 = kt.add %x21, %x21 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x22 = kt.maximum %y21, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y22 = kt.add %x22, %x22 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x23 = kt.maximum %y22, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y23 = kt.add %x23, %x23 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x24 = kt.maximum %y23, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y24 = kt.add %x24, %x24 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x25 = kt.maximum %y24, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y25 = kt.add %x25, %x25 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x26 = kt.maximum %y25, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y26 = kt.add %x26, %x26 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x27 = kt.maximum %y26, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y27 = kt.add %x27, %x27 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x28 = kt.maximum %y27, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y28 = kt.add %x28, %x28 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %x29 = kt.maximum %y28, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y29 = kt.add %x29, %x29 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %y29 : tensor<64xf32>
}
