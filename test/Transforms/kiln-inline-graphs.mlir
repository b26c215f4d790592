// RUN: kiln-opt %s -split-input-file -kiln-inline-graphs | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-inline-graphs -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// Tests that an outlined graph gets a copy of its graph function's body
// (func.return becomes kg.yield), keeping locations and metadata, and that
// the private function, now unused, is erased.
// CHECK-NOT: func.func private @single_g0
// CHECK-LABEL: kg.program @single
// CHECK: %[[Y:.+]] = kg.graph @single_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[N:.+]] = kt.neg %[[A]] {kg.nn_module_stack = ["L__self__"], kg.source_fn = "neg"}
// CHECK-NEXT: kg.yield %[[N]] : tensor<4xf32>
// CHECK: kg.return %[[Y]]
// LOC-LABEL: kg.program @single
// LOC: kt.neg {{.*}} {kg.nn_module_stack = ["L__self__"], kg.source_fn = "neg"} {{.*}} loc(callsite("helper.py":1:2 at "model.py":3:8))
func.func private @single_g0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  %0 = kt.neg %a {kg.nn_module_stack = ["L__self__"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc(callsite("helper.py":1:2 at "model.py":3:8))
  return %0 : tensor<4xf32>
}
kg.program @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @single_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a graph function called by two graphs is copied into both and
// then erased, and that a public graph function is kept.
// CHECK-NOT: func.func private @shared
// CHECK-LABEL: func.func @public_g
// CHECK-LABEL: kg.program @shared_uses
// CHECK: kg.graph @shared(%x) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: kt.exp
// CHECK: kg.graph @shared(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: kt.exp
// CHECK: kg.graph @public_g(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: kt.sin
func.func private @shared(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  %0 = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @public_g(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  %0 = kt.sin %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
kg.program @shared_uses(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @shared(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = kg.graph @shared(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %w = kg.graph @public_g(%z) : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %w : tensor<4xf32>
}
