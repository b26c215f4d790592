// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests that kg.grad round-trips, inline and outlined, with allow_unused.

// CHECK-LABEL: kg.program @inline
// CHECK: %[[L:.*]] = kg.graph @inline_g0
// CHECK: %{{.*}}:2 = kg.grad %[[L]] wrt(%w, %b) : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<f32>)
kg.program @inline(%w: tensor<3xf32>, %b: tensor<f32>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %l = kg.graph @inline_g0(%w, %b, %x) : (tensor<3xf32>, tensor<f32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %c: tensor<f32>, %d: tensor<3xf32>):
    %0 = kt.mul %a, %d : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.add %0, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %2 = kt.sum %1 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %2 : tensor<f32>
  }
  %g:2 = kg.grad %l wrt(%w, %b) : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<f32>)
  kg.return %g#0, %g#1 : tensor<3xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: kg.program @outlined
// CHECK: kg.grad %{{.*}} wrt(%w, %u) {allow_unused} : (tensor<f64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
func.func private @outlined_g0(%a: tensor<2xf64>, %u: tensor<2xf64>) -> (tensor<2xf64>, tensor<f64>) attributes {kg.graph_function} {
  %0 = kt.sum %a {dim = [0]} : (tensor<2xf64>) -> tensor<f64>
  return %u, %0 : tensor<2xf64>, tensor<f64>
}
kg.program @outlined(%w: tensor<2xf64>, %u: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %y, %l = kg.graph @outlined_g0(%w, %u) : (tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<f64>)
  %g:2 = kg.grad %l wrt(%w, %u) {allow_unused} : (tensor<f64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  kg.return %g#0, %g#1 : tensor<2xf64>, tensor<2xf64>
}

// -----

// Parameters as refs: guarded like tensors; kg.grad differentiates with
// respect to the value the graph reads, and its result is a tensor.
// CHECK-LABEL: kg.program @refs
// CHECK: kg.guard_tensor %w {dtype = f32, requires_grad = true, shape = [3]} : !kt.ref<3xf32>
// CHECK: kg.grad %{{.*}} wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> tensor<3xf32>
kg.program @refs(%w: !kt.ref<3xf32>) -> tensor<3xf32> {
  kg.guard_tensor %w {dtype = f32, shape = [3], requires_grad = true} : !kt.ref<3xf32>
  %l = kg.graph @refs_g0(%w) : (!kt.ref<3xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<3xf32>):
    %a = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> tensor<3xf32>
  kg.return %g : tensor<3xf32>
}
