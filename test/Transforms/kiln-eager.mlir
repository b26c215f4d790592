// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-eager{disallow=kt.abs})' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-eager{disallow=kt.abs})' -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// Tests the kiln-eager pipeline: the graph is split at kt.abs, the
// allow_in_graph call is traced through, both pieces are outlined into graph
// functions, and kg.is_compiling folds to true in a graph function and false
// on the host; locations and metadata survive the whole pipeline.
// CHECK-NOT: @helper
// CHECK-LABEL: func.func private @eager_g0(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function}
// CHECK-NEXT: kt.neg %arg0 {kg.source_fn = "neg"}
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @eager_g0_1(%arg0: tensor<4xf32>) -> (tensor<4xf32>, i1) attributes {kg.graph_function}
// CHECK-DAG: arith.constant true
// CHECK-DAG: kt.sin %arg0
// CHECK-LABEL: kg.program @eager
// CHECK: kg.graph @eager_g0(%x)
// CHECK: kg.break "disallowed op kt.abs"
// CHECK-NEXT: kt.abs
// CHECK: kg.graph @eager_g0_1(
// CHECK-NOT: kg.is_compiling
// CHECK: kg.return
// LOC-LABEL: func.func private @eager_g0(
// LOC: kt.neg {{.*}} {kg.source_fn = "neg"} {{.*}} loc("model.py":3:8)
// LOC-LABEL: func.func private @eager_g0_1(
// LOC: kt.sin {{.*}} loc(callsite("helper.py":1:4 at "model.py":5:8))
// LOC-LABEL: kg.program @eager
// LOC: kg.break "disallowed op kt.abs"
// LOC-NEXT: kt.abs {{.*}} loc("model.py":4:8)
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  %0 = kt.sin %a : (tensor<4xf32>) -> tensor<4xf32> loc("helper.py":1:4)
  return %0 : tensor<4xf32>
}
kg.program @eager(%x: tensor<4xf32>) -> (tensor<4xf32>, i1, i1) {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %y:2 = kg.graph @eager_g0(%x) : (tensor<4xf32>) -> (tensor<4xf32>, i1) {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a {kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":3:8)
    %1 = kt.abs %0 : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":4:8)
    %2 = func.call @helper(%1) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":5:8)
    %c = kg.is_compiling
    kg.yield %2, %c : tensor<4xf32>, i1
  }
  %h = kg.is_compiling
  kg.return %y#0, %y#1, %h : tensor<4xf32>, i1, i1
}
