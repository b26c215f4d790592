// RUN: kiln-opt %s | FileCheck %s

// Tests that attributes with a dialect prefix are allowed on kg ops and kept
// (the source function of a graph, a pass's mark on the program), and that a
// program may be a private symbol (sym_visibility).
// CHECK-LABEL: kg.program @annotated
// CHECK-SAME: attributes {kiln.note = "kept", sym_visibility = "private"}
// CHECK: kg.graph @annotated_g0(%x) {kg.source_fn = "neg"}
kg.program @annotated(%x: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.note = "kept", sym_visibility = "private"} {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %y = kg.graph @annotated_g0(%x) {kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}
