// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Tests the FAQ's toy_example as a captured program: guards, an inline graph,
// a break with a host callback, a data-dependent branch through kg.to_host,
// and argument source names that survive printing.
// CHECK-LABEL: kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32>
// CHECK: kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
// CHECK: kg.guard_backend {backend = "eager"}
// CHECK: %[[X:.+]] = kg.graph @toy_example_g0(%a) : (tensor<10xf32>) -> tensor<10xf32> {
// CHECK: kg.yield
// CHECK: kg.break "call_function print" {
// CHECK-NEXT: kg.host_call @print(%[[X]]) : (tensor<10xf32>) -> ()
// CHECK: %[[C:.+]] = kg.to_host %{{.*}} : tensor<i1> -> i1
// CHECK: scf.if %[[C]] -> (tensor<10xf32>)
// CHECK: kg.return %{{.*}} : tensor<10xf32>
kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_backend {backend = "eager"}
  %x = kg.graph @toy_example_g0(%a) : (tensor<10xf32>) -> tensor<10xf32> {
  ^bb0(%a0: tensor<10xf32>):
    %c1 = kt.constant {value = dense<1.0> : tensor<10xf32>} : () -> tensor<10xf32>
    %0 = kt.add %a0, %c1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    kg.yield %0 : tensor<10xf32>
  }
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<10xf32>) -> ()
  } loc("t2.py":16:4)
  %s = kg.graph @toy_example_g1(%b) : (tensor<10xf32>) -> tensor<i1> {
  ^bb0(%b0: tensor<10xf32>):
    %z = kt.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %0 = kt.add %z, %z : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %t = kt.constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    kg.yield %t : tensor<i1>
  }
  %c = kg.to_host %s : tensor<i1> -> i1
  %r = scf.if %c -> (tensor<10xf32>) {
    %y = kg.graph @toy_example_g2(%x, %b) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> {
    ^bb0(%x0: tensor<10xf32>, %b0: tensor<10xf32>):
      %0 = kt.add %x0, %b0 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
      kg.yield %0 : tensor<10xf32>
    }
    scf.yield %y : tensor<10xf32>
  } else {
    scf.yield %x : tensor<10xf32>
  }
  kg.return %r : tensor<10xf32>
}

// -----

// Tests symbolic dims, strides, identity, value and relation guards, the
// outlined graph form, kg.from_host and kg.is_compiling.
// CHECK-LABEL: kg.program @guards(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>, %n: i64) -> tensor<i64>
// CHECK: kg.guard_tensor %x {dtype = f32, requires_grad = true, shape = ["s0", 4], strides = [4, 1]} : tensor<?x4xf32>
// CHECK: kg.guard_identity %w : tensor<4x4xf32>
// CHECK: kg.guard_value %n {value = 3 : i64} : i64
// CHECK: kg.guard_shape_relation "s0 >= 2"
// CHECK: kg.graph @g_outlined(%x, %w) : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
// CHECK-NOT: {
// CHECK: kg.from_host %n : i64 -> tensor<i64>
func.func @g_outlined(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>) -> tensor<?x4xf32> attributes {kg.graph_function} {
  %0 = kt.add %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
kg.program @guards(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>, %n: i64) -> tensor<i64> {
  kg.guard_tensor %x {dtype = f32, shape = ["s0", 4], strides = [4, 1], requires_grad = true} : tensor<?x4xf32>
  kg.guard_identity %w : tensor<4x4xf32>
  kg.guard_value %n {value = 3 : i64} : i64
  kg.guard_shape_relation "s0 >= 2"
  %y = kg.graph @g_outlined(%x, %w) : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %c = kg.is_compiling
  %t = kg.from_host %n : i64 -> tensor<i64>
  kg.return %t : tensor<i64>
}
