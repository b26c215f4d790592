// RUN: kiln-opt %s -split-input-file -kiln-inline-allowed | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-inline-allowed -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// Tests that a call inside an inline graph to a private allow_in_graph
// function is traced through: the callee's ops replace the call, its
// arguments map to the call's operands, and the callee, now unused, is
// erased. Inlined ops get callsite(callee loc at call loc) and keep their
// metadata.
// CHECK-NOT: func.func private @helper
// CHECK-LABEL: kg.program @inline_in_graph
// CHECK: kg.graph @inline_in_graph_g0(%x)
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[N:.+]] = kt.neg %[[A]] {kg.nn_module_stack = ["L__self__.helper"], kg.source_fn = "neg"}
// CHECK-NEXT: %[[M:.+]] = kt.mul %[[N]], %[[A]]
// CHECK-NEXT: %[[E:.+]] = kt.exp %[[M]]
// CHECK-NEXT: kg.yield %[[E]]
// CHECK-NOT: func.call
// LOC-LABEL: kg.program @inline_in_graph
// LOC: kt.neg {{.*}} {kg.nn_module_stack = ["L__self__.helper"], kg.source_fn = "neg"} {{.*}} loc(callsite("helper.py":3:8 at "model.py":10:4))
// LOC-NEXT: kt.mul {{.*}} loc(callsite("helper.py":4:8 at "model.py":10:4))
// LOC-NEXT: kt.exp {{.*}} loc("model.py":11:4)
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  %0 = kt.neg %a {kg.nn_module_stack = ["L__self__.helper"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("helper.py":3:8)
  %1 = kt.mul %0, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("helper.py":4:8)
  return %1 : tensor<4xf32> loc("helper.py":5:4)
}
kg.program @inline_in_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @inline_in_graph_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":10:4)
    %1 = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":11:4)
    kg.yield %1 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that allowed functions calling allowed functions are traced through
// inside a graph function, keeping the whole inlined call stack (innermost
// frame first), that a public callee is kept, that a call to a function
// without kg.allow_in_graph stays, and that a call on the host path of a
// program is not inlined.
// CHECK-LABEL: func.func @outer
// CHECK-LABEL: func.func private @plain
// CHECK-LABEL: func.func private @stack_g0
// CHECK-NEXT: %[[N:.+]] = kt.neg %arg0
// CHECK-NEXT: %[[S:.+]] = kt.sin %[[N]]
// CHECK-NEXT: %[[P:.+]] = call @plain(%[[S]])
// CHECK-NEXT: return %[[P]]
// CHECK-LABEL: kg.program @stack
// CHECK: call @outer
// LOC-LABEL: func.func private @stack_g0
// LOC-NEXT: kt.neg {{.*}} loc(callsite("inner.py":1:1 at callsite("outer.py":2:2 at "model.py":3:3)))
// LOC-NEXT: kt.sin {{.*}} loc(callsite("outer.py":4:4 at "model.py":3:3))
func.func private @inner(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32> loc("inner.py":1:1)
  return %0 : tensor<4xf32>
}
func.func @outer(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.allow_in_graph} {
  %0 = call @inner(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("outer.py":2:2)
  %1 = kt.sin %0 : (tensor<4xf32>) -> tensor<4xf32> loc("outer.py":4:4)
  return %1 : tensor<4xf32>
}
func.func private @plain(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func private @stack_g0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  %0 = call @outer(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":3:3)
  %1 = call @plain(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
kg.program @stack(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @stack_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  kg.break "disable" -> tensor<4xf32> {
    %z = func.call @outer(%y) : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %z : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}
