// RUN: kiln-opt %s -split-input-file -kiln-outline-graphs | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-outline-graphs -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC
// RUN: kiln-opt %s -split-input-file -kiln-outline-graphs -kiln-inline-graphs | FileCheck %s --check-prefix=ROUNDTRIP

// Tests that each inline graph becomes a private graph function placed
// before its program, named by its callee, and the kg.graph becomes the
// outlined form; a graph inside scf.if is outlined too, and block argument
// and op locations and metadata move with the ops.
// CHECK-LABEL: func.func private @two_graphs_g0(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
// CHECK-NEXT: %[[N:.+]] = kt.neg %arg0 {kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "neg"}
// CHECK-NEXT: return %[[N]] : tensor<4xf32>
// CHECK-LABEL: func.func private @two_graphs_g1(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
// CHECK-NEXT: kt.add %arg0, %arg1
// CHECK-LABEL: kg.program @two_graphs
// CHECK: %[[Y:.+]] = kg.graph @two_graphs_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: kg.yield
// CHECK: scf.if
// CHECK-NEXT: kg.graph @two_graphs_g1(%[[Y]], %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: kg.yield
// CHECK: kg.return
// LOC-LABEL: func.func private @two_graphs_g0
// LOC-NEXT: kt.neg {{.*}} {kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "neg"} {{.*}} loc("model.py":3:8)
// LOC: } loc("model.py":2:2)
// ROUNDTRIP-NOT: func.func
// ROUNDTRIP-LABEL: kg.program @two_graphs
// ROUNDTRIP: %[[Y:.+]] = kg.graph @two_graphs_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
// ROUNDTRIP-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// ROUNDTRIP-NEXT: %[[N:.+]] = kt.neg %[[A]] {kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "neg"}
// ROUNDTRIP-NEXT: kg.yield %[[N]] : tensor<4xf32>
// ROUNDTRIP: kg.graph @two_graphs_g1(%[[Y]], %x)
// ROUNDTRIP: kt.add
kg.program @two_graphs(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %y = kg.graph @two_graphs_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a {kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":3:8)
    kg.yield %0 : tensor<4xf32>
  } loc("model.py":2:2)
  %r = scf.if %c -> (tensor<4xf32>) {
    %z = kg.graph @two_graphs_g1(%y, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %0 = kt.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
    scf.yield %z : tensor<4xf32>
  } else {
    scf.yield %y : tensor<4xf32>
  }
  kg.return %r : tensor<4xf32>
}

// -----

// Tests that a graph whose name is taken by another symbol gets a unique
// function name, and an already outlined graph is left alone.
// CHECK-LABEL: func.func @taken(
// CHECK-LABEL: func.func private @taken_0(
// CHECK-SAME: attributes {kg.graph_function}
// CHECK: kt.neg
// CHECK-LABEL: kg.program @name_clash
// CHECK: kg.graph @taken_0(%x)
// CHECK: kg.graph @taken(%x)
// ROUNDTRIP-LABEL: func.func @taken(
// ROUNDTRIP-LABEL: kg.program @name_clash
// ROUNDTRIP: kg.graph @taken_0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
// ROUNDTRIP: kg.graph @taken(%x) : (tensor<4xf32>) -> tensor<4xf32> {
func.func @taken(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  return %a : tensor<4xf32>
}
kg.program @name_clash(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @taken(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  %z = kg.graph @taken(%x) : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}
