// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-check-fullgraph
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-check-fullgraph -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// Tests that a program with no break passes silently and is unchanged,
// locations and metadata included.
// CHECK-LABEL: kg.program @one_graph
// CHECK: kt.neg %{{.*}} {kg.nn_module_stack = ["L__self__"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("one.py":2:4)
kg.program @one_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %y = kg.graph @one_graph_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a {kg.nn_module_stack = ["L__self__"], kg.source_fn = "neg"} : (tensor<4xf32>) -> tensor<4xf32> loc("one.py":2:4)
    kg.yield %0 : tensor<4xf32>
  }
  %c = kg.is_compiling
  kg.return %y : tensor<4xf32>
}

// -----

// Tests the FAQ's toy_example under fullgraph=True: the print break is
// reported at its source line with the program name and reason.
kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
  %x = kg.graph @toy_example_g0(%a) : (tensor<10xf32>) -> tensor<10xf32> {
  ^bb0(%a0: tensor<10xf32>):
    %0 = kt.abs %a0 : (tensor<10xf32>) -> tensor<10xf32>
    %c1 = kt.constant {value = dense<1.0> : tensor<10xf32>} : () -> tensor<10xf32>
    %1 = kt.add %0, %c1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    %2 = kt.div %a0, %1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    kg.yield %2 : tensor<10xf32>
  }
  // expected-error@below {{graph break in @toy_example: call_function print}}
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<10xf32>) -> ()
  }
  %s = kg.graph @toy_example_g1(%b) : (tensor<10xf32>) -> tensor<i1> {
  ^bb0(%b0: tensor<10xf32>):
    %t = kt.constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    kg.yield %t : tensor<i1>
  }
  // expected-error@below {{graph break in @toy_example: generic_jump}}
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

// Tests that every break is reported, not just the first, across programs
// and inside host control flow, each with its own program and reason.
kg.program @two_breaks(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error@below {{graph break in @two_breaks: graph_break()}}
  kg.break "graph_break()" {
  }
  scf.if %c {
    // expected-error@below {{graph break in @two_breaks: disallowed op kt.abs}}
    %y = kg.break "disallowed op kt.abs" -> tensor<4xf32> {
      %0 = kt.abs %x : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
  }
  kg.return %x : tensor<4xf32>
}
kg.program @another(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{graph break in @another: generic_jump}}
  kg.break "generic_jump" {
  }
  kg.return %x : tensor<4xf32>
}
