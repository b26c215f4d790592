// RUN: kiln-opt %s -split-input-file -kiln-aot-autograd | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-aot-autograd -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// Tests kiln-aot-autograd with partition=none (the kiln-eager rung): the
// loss's graph (outlined first when inline) becomes one call of its joint
// function, seeded with a cotangent of 1, returning every output of the graph
// and then the gradients in kg.grad's wrt order.

// CHECK-LABEL: func.func private @step_g0_joint(
// CHECK-SAME:     %[[W:.*]]: tensor<3xf32>, %[[X:.*]]: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) attributes {kg.graph_function} {
// CHECK:        %[[M:.*]] = kt.mul %[[W]], %[[X]]
// CHECK:        %[[L:.*]] = kt.sum %[[M]]
// CHECK:        %[[ONE:.*]] = kt.full {dtype = f32, size = [], value = 1.000000e+00 : f64} : () -> tensor<f32>
// CHECK:        %[[G:.*]] = kt.mul %{{.*}}, %[[X]]
// CHECK:        return %[[L]], %[[G]] : tensor<f32>, tensor<3xf32>
// The differentiated graph function is private and no longer used: erased.
// CHECK-NOT:  func.func private @step_g0(
// CHECK-LABEL: kg.program @step
// CHECK:        %[[J:.*]]:2 = kg.graph @step_g0_joint(%w, %x) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
// CHECK-NOT:    kg.grad
// CHECK:        kg.return %[[J]]#0, %[[J]]#1
// The graph call keeps the graph's location.
// LOC-LABEL: kg.program @step
// LOC:         kg.graph @step_g0_joint{{.*}} loc("step.py":3:4)
kg.program @step(%w: tensor<3xf32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %l = kg.graph @step_g0(%w, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %0 = kt.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.sum %0 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %1 : tensor<f32>
  } loc("step.py":3:4)
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32> loc("step.py":4:4)
  kg.return %l, %g : tensor<f32>, tensor<3xf32>
}

// -----

// Several outputs (only the loss is differentiated: the other output gets no
// cotangent), wrt in an order other than the graph's inputs, and one value
// passed to the graph twice (its gradients are summed).

// CHECK-LABEL: func.func private @multi_g0_joint(
// CHECK-SAME:     %[[A:[^:]*]]: tensor<2xf64>, %[[B:[^:]*]]: tensor<2xf64>, %[[C:[^:]*]]: tensor<2xf64>) -> (tensor<2xf64>, tensor<f64>, tensor<2xf64>, tensor<2xf64>)
// CHECK:        %[[E:.*]] = kt.exp %[[B]]
// CHECK:        %[[M:.*]] = kt.mul %[[A]], %[[C]]
// CHECK:        %[[L:.*]] = kt.sum %[[M]]
// CHECK:        kt.full {dtype = f64, size = [], value = 1.000000e+00 : f64}
// CHECK:        %[[GA:.*]] = kt.mul %{{.*}}, %[[C]]
// CHECK:        %[[GC:.*]] = kt.mul %{{.*}}, %[[A]]
// %v does not reach the loss (allow_unused): zeros.
// CHECK:        %[[Z:.*]] = kt.full {dtype = f64, size = [2], value = 0.000000e+00 : f64}
// CHECK:        %[[SUM:.*]] = kt.add %[[GA]], %[[GC]]
// CHECK:        return %[[E]], %[[L]], %[[Z]], %[[SUM]]
// CHECK-LABEL: kg.program @multi
// CHECK:        %[[J:.*]]:4 = kg.graph @multi_g0_joint(%w, %v, %w)
// CHECK:        kg.return %[[J]]#0, %[[J]]#2, %[[J]]#3
kg.program @multi(%w: tensor<2xf64>, %v: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
  %e, %l = kg.graph @multi_g0(%w, %v, %w) : (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<f64>) {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>, %c: tensor<2xf64>):
    %0 = kt.exp %b : (tensor<2xf64>) -> tensor<2xf64>
    %1 = kt.mul %a, %c : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %2 = kt.sum %1 {dim = [0]} : (tensor<2xf64>) -> tensor<f64>
    kg.yield %0, %2 : tensor<2xf64>, tensor<f64>
  }
  %g:2 = kg.grad %l wrt(%v, %w) {allow_unused} : (tensor<f64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  kg.return %e, %g#0, %g#1 : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}

// -----

// A graph function called by two graphs keeps its function for the other
// call; the loss's graph calls the joint.

// CHECK:      func.func private @shared_g_joint(
// CHECK:      func.func private @shared_g(
// CHECK-LABEL: kg.program @shared
// CHECK:        kg.graph @shared_g_joint(%w)
// CHECK:        kg.graph @shared_g(%w)
func.func private @shared_g(%a: tensor<3xf32>) -> tensor<f32> attributes {kg.graph_function} {
  %0 = kt.sum %a {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
kg.program @shared(%w: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %l = kg.graph @shared_g(%w) : (tensor<3xf32>) -> tensor<f32>
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %l2 = kg.graph @shared_g(%w) : (tensor<3xf32>) -> tensor<f32>
  kg.return %g, %l2 : tensor<3xf32>, tensor<f32>
}

// -----

// Ref inputs (parameters): the loss's graph only reads them; the reads move
// to a graph of their own (@<g>_read) called just before, and the joint takes
// the values. The update graph mutates the refs in place, untouched.

// CHECK-LABEL: func.func private @refs_g0_read(
// CHECK-SAME:     %[[R:.*]]: !kt.ref<3xf32>) -> tensor<3xf32> attributes {kg.graph_function}
// CHECK:        %[[V:.*]] = kt.load %[[R]]
// CHECK:        return %[[V]]
// CHECK-LABEL: func.func private @refs_g0_joint(
// CHECK-SAME:     %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
// CHECK-NOT:    kt.load
// CHECK-LABEL: kg.program @refs
// CHECK:        %[[W:.*]] = kg.graph @refs_g0_read(%w) : (!kt.ref<3xf32>) -> tensor<3xf32>
// CHECK:        %[[J:.*]]:2 = kg.graph @refs_g0_joint(%[[W]], %x)
// CHECK:        kg.graph @refs_sgd(%w, %[[J]]#1)
kg.program @refs(%w: !kt.ref<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %l = kg.graph @refs_g0(%w, %x) : (!kt.ref<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<3xf32>, %b: tensor<3xf32>):
    %a = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    %0 = kt.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.sum %0 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %1 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> tensor<3xf32>
  kg.graph @refs_sgd(%w, %g) : (!kt.ref<3xf32>, tensor<3xf32>) -> () {
  ^bb0(%p: !kt.ref<3xf32>, %d: tensor<3xf32>):
    kt.sub_ %p, %d : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    kg.yield
  }
  kg.return %l : tensor<f32>
}

// -----

// A ref passed to the loss's graph twice (tied weights): it is read once, and
// its gradient is the sum of the gradients of both inputs it is passed as.

// CHECK-LABEL: func.func private @tied_g0_read(
// CHECK-SAME:     %[[R:.*]]: !kt.ref<3xf32>) -> tensor<3xf32>
// CHECK-LABEL: func.func private @tied_g0_joint(
// CHECK:        %[[G:.*]] = kt.add
// CHECK-NEXT:   return %{{.*}}, %[[G]]
// CHECK-LABEL: kg.program @tied
// CHECK:        %[[W:.*]] = kg.graph @tied_g0_read(%w) : (!kt.ref<3xf32>) -> tensor<3xf32>
// CHECK:        kg.graph @tied_g0_joint(%[[W]], %[[W]], %x)
kg.program @tied(%w: !kt.ref<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %l = kg.graph @tied_g0(%w, %w, %x) : (!kt.ref<3xf32>, !kt.ref<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<3xf32>, %s: !kt.ref<3xf32>, %b: tensor<3xf32>):
    %a = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    %c = kt.load %s : (!kt.ref<3xf32>) -> tensor<3xf32>
    %0 = kt.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.mul %0, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %2 = kt.sum %1 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %2 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<3xf32>) -> tensor<3xf32>
  kg.return %l : tensor<f32>
}
