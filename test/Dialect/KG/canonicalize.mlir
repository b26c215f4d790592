// RUN: kiln-opt %s -split-input-file -canonicalize | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-outline-graphs -canonicalize | FileCheck %s --check-prefix=OUTLINED

// Tests that kg.is_compiling folds to true inside a graph region and to
// false on the host path of the program, including inside a break and as the
// condition of host control flow (whose dead branch then goes away). The
// host constant lands before the guards, which the program verifier accepts
// (constants may precede guards). After outlining, the fold inside the graph
// function is true.
// CHECK-LABEL: kg.program @is_compiling
// CHECK-NEXT: %[[F:.+]] = arith.constant false
// CHECK-NEXT: kg.guard_tensor %x
// CHECK-NEXT: %[[G:.+]] = kg.graph @is_compiling_g0() : () -> i1 {
// CHECK-NEXT: %[[T:.+]] = arith.constant true
// CHECK-NEXT: kg.yield %[[T]]
// CHECK: %[[B:.+]] = kg.break "graph_break()" -> i1 {
// CHECK-NEXT: kg.yield %[[F]]
// CHECK-NOT: kg.is_compiling
// CHECK-NOT: scf.if
// CHECK-NOT: @is_compiling_g1
// CHECK: kg.return %x, %[[B]], %[[F]], %{{.*}} :
// OUTLINED-LABEL: func.func private @is_compiling_g0
// OUTLINED-NEXT: %[[T:.+]] = arith.constant true
// OUTLINED-NEXT: return %[[T]]
// OUTLINED-LABEL: kg.program @is_compiling
// OUTLINED-NOT: kg.is_compiling
// OUTLINED: kg.return
kg.program @is_compiling(%x: tensor<4xf32>) -> (tensor<4xf32>, i1, i1, tensor<i1>) {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %g = kg.graph @is_compiling_g0() : () -> i1 {
    %c = kg.is_compiling
    kg.yield %c : i1
  }
  %b = kg.break "graph_break()" -> i1 {
    %c = kg.is_compiling
    kg.yield %c : i1
  }
  %h = kg.is_compiling
  %r = scf.if %h -> (tensor<4xf32>) {
    %n = kg.graph @is_compiling_g1(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
    scf.yield %n : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %t = kg.from_host %g : i1 -> tensor<i1>
  kg.return %r, %b, %h, %t : tensor<4xf32>, i1, i1, tensor<i1>
}

// -----

// Tests that kg.is_compiling inside a graph function written by hand folds
// to true, and inside a plain func.func (unknown caller) does not fold.
// CHECK-LABEL: func.func private @graph_fn
// CHECK-NEXT: %[[T:.+]] = arith.constant true
// CHECK-NEXT: return %[[T]]
// CHECK-LABEL: func.func @plain_fn
// CHECK-NEXT: %[[C:.+]] = kg.is_compiling
// CHECK-NEXT: return %[[C]]
func.func private @graph_fn() -> i1 attributes {kg.graph_function} {
  %c = kg.is_compiling
  return %c : i1
}
func.func @plain_fn() -> i1 {
  %c = kg.is_compiling
  return %c : i1
}
