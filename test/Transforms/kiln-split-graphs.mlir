// RUN: kiln-opt %s -split-input-file -kiln-split-graphs="disallow=kt.abs,kt.exp" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-split-graphs="disallow=kt.abs,kt.exp" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC
// RUN: kiln-opt %s -split-input-file -kiln-split-graphs | FileCheck %s --check-prefix=NONE

// Tests that one disallowed op in the middle of a graph splits it into the
// graph of the ops before, a break holding the op, and the graph of the ops
// after; crossing values become results and operands, the first piece keeps
// the graph's name, and locations and metadata of the moved ops are kept.
// CHECK-LABEL: kg.program @split_in_middle
// CHECK: %[[G0:.+]] = kg.graph @split_in_middle_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[N:.+]] = kt.neg %[[A]]
// CHECK-NEXT: kg.yield %[[N]] : tensor<4xf32>
// CHECK: %[[B:.+]] = kg.break "disallowed op kt.abs" -> tensor<4xf32> {
// CHECK-NEXT: %[[ABS:.+]] = kt.abs %[[G0]]
// CHECK-NEXT: kg.yield %[[ABS]] : tensor<4xf32>
// CHECK: %[[G1:.+]] = kg.graph @split_in_middle_g0_1(%[[B]]) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: kt.neg
// CHECK: kg.return %[[G1]]
// LOC-LABEL: kg.program @split_in_middle
// LOC: kt.neg %{{.*}} {kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":3:8)
// LOC: kg.break "disallowed op kt.abs"
// LOC-NEXT: kt.abs %{{.*}} {kg.source_fn = "abs"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":4:8)
// LOC: } loc("model.py":4:8)
// LOC: kt.neg %{{.*}} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":5:8)
// NONE-LABEL: kg.program @split_in_middle
// NONE-NOT: kg.break
// NONE: kg.graph @split_in_middle_g0(%x)
// NONE-NOT: kg.graph
// NONE: kg.return
kg.program @split_in_middle(%x: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %y = kg.graph @split_in_middle_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a {kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":3:8)
    %1 = kt.abs %0 {kg.source_fn = "abs"} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":4:8)
    %2 = kt.neg %1 : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":5:8)
    kg.yield %2 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that several disallowed ops give several breaks in program order,
// that a value defined before a break and used after it becomes a result of
// the first graph and an operand of a later one, and that graph names stay
// unique when a name like @multi_g0_1 is already taken.
// CHECK-LABEL: kg.program @multi
// CHECK: %[[G0:.+]]:2 = kg.graph @multi_g0(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: kt.add
// CHECK: kt.mul
// CHECK: %[[B0:.+]] = kg.break "disallowed op kt.exp" -> tensor<4xf32>
// CHECK-NEXT: kt.exp %[[G0]]#0
// CHECK: %[[G1:.+]] = kg.graph @multi_g0_2(%[[B0]], %[[G0]]#1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: kt.add
// CHECK: %[[B1:.+]] = kg.break "disallowed op kt.abs" -> tensor<4xf32>
// CHECK-NEXT: kt.abs %[[G1]]
// CHECK: %[[G2:.+]] = kg.graph @multi_g0_3(%[[B1]], %[[G0]]#1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: kg.graph @multi_g0_1(%[[G2]])
// CHECK: kg.return
kg.program @multi(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = kg.graph @multi_g0(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %0 = kt.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = kt.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
    %3 = kt.add %2, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %4 = kt.abs %3 : (tensor<4xf32>) -> tensor<4xf32>
    %5 = kt.mul %4, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    kg.yield %5 : tensor<4xf32>
  }
  %s = kg.graph @multi_g0_1(%r) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %s : tensor<4xf32>
}

// -----

// Tests that a disallowed op at the start and at the end of a graph gives no
// empty graph, that a graph result passed straight through from an input is
// forwarded, and that a graph inside scf.if is split in place.
// CHECK-LABEL: kg.program @edges
// CHECK: scf.if
// CHECK-NEXT: %[[B0:.+]] = kg.break "disallowed op kt.abs" -> tensor<4xf32> {
// CHECK-NEXT: kt.abs %x
// CHECK: %[[G:.+]] = kg.graph @edges_g0(%[[B0]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: kt.neg
// CHECK: %[[B1:.+]] = kg.break "disallowed op kt.exp" -> tensor<4xf32> {
// CHECK-NEXT: kt.exp %[[G]]
// CHECK: scf.yield %[[B1]], %x
// CHECK-NOT: kg.graph
// CHECK: kg.return
kg.program @edges(%x: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = scf.if %c -> (tensor<4xf32>, tensor<4xf32>) {
    %y:2 = kg.graph @edges_g0(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.abs %a : (tensor<4xf32>) -> tensor<4xf32>
      %1 = kt.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
      %2 = kt.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %2, %a : tensor<4xf32>, tensor<4xf32>
    }
    scf.yield %y#0, %y#1 : tensor<4xf32>, tensor<4xf32>
  } else {
    scf.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  kg.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a graph without a disallowed op, an existing break and an
// outlined graph whose function holds no disallowed op are left alone.
// CHECK-LABEL: kg.program @untouched
// CHECK: kg.graph @untouched_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: kg.break "call_function print" {
// CHECK: kg.graph @untouched_outlined(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: kg.break
func.func private @untouched_outlined(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
kg.program @untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @untouched_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.break "call_function print" {
    kg.host_call @print(%y) : (tensor<4xf32>) -> ()
  }
  %z = kg.graph @untouched_outlined(%x) : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %z : tensor<4xf32>
}
