// RUN: kiln-opt %s -split-input-file -kiln-explain -o /dev/null | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-explain="output=%t.txt" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s < %t.txt --check-prefix=FILE

// Tests explain() on the FAQ's toy_example: three graphs, two breaks (the
// print, and the data-dependent branch on kg.to_host: generic_jump) with their
// reasons and source lines, the kt ops counted and listed per graph in program
// order (including the graph inside scf.if). The IR is unchanged.
// CHECK-LABEL: Program: @toy_example
// CHECK-NEXT: Graph Count: 3
// CHECK-NEXT: Graph Break Count: 2
// CHECK-NEXT: Op Count: 6
// CHECK-NEXT: Break Reasons:
// CHECK-NEXT:   Break Reason 1:
// CHECK-NEXT:     Reason: call_function print
// CHECK-NEXT:     User Stack:
// CHECK-NEXT:       t2.py:16:4
// CHECK-NEXT:   Break Reason 2:
// CHECK-NEXT:     Reason: generic_jump
// CHECK-NEXT:     User Stack:
// CHECK-NEXT:       {{.*}}kiln-explain.mlir:56:8
// CHECK-NEXT: Ops per Graph:
// CHECK-NEXT:   Graph 1: @toy_example_g0
// CHECK-NEXT:     kt.abs
// CHECK-NEXT:     kt.constant
// CHECK-NEXT:     kt.add
// CHECK-NEXT:     kt.div
// CHECK-NEXT:   Graph 2: @toy_example_g1
// CHECK-NEXT:     kt.constant
// CHECK-NEXT:   Graph 3: @toy_example_g2
// CHECK-NEXT:     kt.mul
// FILE: Program: @stacks
// FILE: Program: @empty
// IR-LABEL: kg.program @toy_example
// IR: kt.abs %{{.*}} {kg.nn_module_stack = ["L__self__"], kg.source_fn = "abs"} : (tensor<10xf32>) -> tensor<10xf32> loc("t2.py":14:8)
// IR: } loc("t2.py":16:4)
kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
  %x = kg.graph @toy_example_g0(%a) : (tensor<10xf32>) -> tensor<10xf32> {
  ^bb0(%a0: tensor<10xf32>):
    %0 = kt.abs %a0 {kg.nn_module_stack = ["L__self__"], kg.source_fn = "abs"} : (tensor<10xf32>) -> tensor<10xf32> loc("t2.py":14:8)
    %c1 = kt.constant {value = dense<1.0> : tensor<10xf32>} : () -> tensor<10xf32>
    %1 = kt.add %0, %c1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    %2 = kt.div %a0, %1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    kg.yield %2 : tensor<10xf32>
  }
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<10xf32>) -> ()
  } loc("t2.py":16:4)
  %s = kg.graph @toy_example_g1(%b) : (tensor<10xf32>) -> tensor<i1> {
  ^bb0(%b0: tensor<10xf32>):
    %t = kt.constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    kg.yield %t : tensor<i1>
  }
  %c = kg.to_host %s : tensor<i1> -> i1
  %r = scf.if %c -> (tensor<10xf32>) {
    %y = kg.graph @toy_example_g2(%x, %b) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> {
    ^bb0(%x0: tensor<10xf32>, %b0: tensor<10xf32>):
      %0 = kt.mul %x0, %b0 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
      kg.yield %0 : tensor<10xf32>
    }
    scf.yield %y : tensor<10xf32>
  } else {
    scf.yield %x : tensor<10xf32>
  }
  kg.return %r : tensor<10xf32>
}

// -----

// Tests that outlined graphs are looked up in the module, that a break's
// inlined call stack is printed innermost frame first, that a NameLoc prints
// its child's frame and that each program gets its own report.
// CHECK-LABEL: Program: @stacks
// CHECK-NEXT: Graph Count: 2
// CHECK-NEXT: Graph Break Count: 3
// CHECK-NEXT: Op Count: 3
// CHECK-NEXT: Break Reasons:
// CHECK-NEXT:   Break Reason 1:
// CHECK-NEXT:     Reason: disallowed op kt.exp
// CHECK-NEXT:     User Stack:
// CHECK-NEXT:       helper.py:3:8
// CHECK-NEXT:       model.py:10:4
// CHECK-NEXT:   Break Reason 2:
// CHECK-NEXT:     Reason: graph_break()
// CHECK-NEXT:     User Stack:
// CHECK-NEXT:       model.py:12:4
// CHECK-NEXT:   Break Reason 3:
// CHECK-NEXT:     Reason: generic_jump
// CHECK-NEXT:     User Stack:
// CHECK-NEXT:       <unknown>
// CHECK-NEXT: Ops per Graph:
// CHECK-NEXT:   Graph 1: @stacks_g0
// CHECK-NEXT:     kt.neg
// CHECK-NEXT:     kt.sin
// CHECK-NEXT:   Graph 2: @stacks_g1
// CHECK-NEXT:     kt.cos
// CHECK-LABEL: Program: @empty
// CHECK-NEXT: Graph Count: 0
// CHECK-NEXT: Graph Break Count: 0
// CHECK-NEXT: Op Count: 0
// CHECK-NEXT: Break Reasons:
// CHECK-NEXT: Ops per Graph:
// CHECK-NOT: Graph 1
func.func private @stacks_g0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.sin %0 : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
kg.program @stacks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @stacks_g0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = kg.break "disallowed op kt.exp" -> tensor<4xf32> {
    %0 = kt.exp %y : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  } loc(callsite("helper.py":3:8 at "model.py":10:4))
  kg.break "graph_break()" {
  } loc("self.block"("model.py":12:4))
  kg.break "generic_jump" {
  } loc(unknown)
  %w = kg.graph @stacks_g1(%z) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.cos %a : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %w : tensor<4xf32>
}
kg.program @empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  kg.return %x : tensor<4xf32>
}
