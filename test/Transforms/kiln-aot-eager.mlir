// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-aot-eager)' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-aot-eager{keep=kt.cross_entropy partition=save-all})' | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-aot-eager{fold-conv-bn=true keep=kt.cross_entropy,kt.log_softmax partition=save-all})' | FileCheck %s --check-prefix=CPU

// Tests the kiln-aot-eager pipeline on a training step: the graphs are
// outlined, composites are decomposed (kt.linear, kt.cross_entropy) before
// kg.grad is differentiated and partitioned, and the program calls the
// read, forward, backward and update graphs in order.

// CHECK-NOT:   kt.cross_entropy
// CHECK-NOT:   kt.linear
// CHECK-LABEL: kg.program @step
// CHECK:         %[[V:.*]]:2 = kg.graph @step_g0_read(%w, %b)
// CHECK:         %[[F:.*]]:{{[0-9]+}} = kg.graph @step_g0_fwd(%[[V]]#0, %[[V]]#1, %x, %t)
// CHECK:         %[[G:.*]]:2 = kg.graph @step_g0_bwd(
// CHECK:         kg.graph @step_sgd(%w, %b, %[[G]]#0, %[[G]]#1)
// CHECK:         kg.return %[[F]]#0

// KEEP:        func.func private @step_g0_fwd(
// KEEP:          kt.cross_entropy
// KEEP-NOT:      kt.linear
// KEEP:        func.func private @step_g0_bwd(

// The Python cpu backend's host pipeline (python/kiln/_compile.py) keeps
// cross_entropy in the forward and the log_softmax of its VJP in the
// backward: the gradient is then computed from the row statistics of one
// kt.log_softmax (one kernel on the CPU), not from amax/exp/sum/log.
// CPU-LABEL:   func.func private @step_g0_fwd(
// CPU-COUNT-1:   kt.cross_entropy
// CPU-NOT:       kt.log_softmax
// CPU-LABEL:   func.func private @step_g0_bwd(
// CPU-NOT:       kt.amax
// CPU:           kt.log_softmax %{{.*}} {dim = 1 : i64}
// CPU-NOT:       kt.log_softmax
// CPU-NOT:       kt.amax
// CPU:           kt.exp
// CPU:           return
kg.program @step(%w: !kt.ref<4x3xf32>, %b: !kt.ref<4xf32>, %x: tensor<2x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  kg.guard_tensor %w {dtype = f32, shape = [4, 3], requires_grad = true} : !kt.ref<4x3xf32>
  kg.guard_tensor %b {dtype = f32, shape = [4], requires_grad = true} : !kt.ref<4xf32>
  %loss = kg.graph @step_g0(%w, %b, %x, %t) : (!kt.ref<4x3xf32>, !kt.ref<4xf32>, tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32> {
  ^bb0(%rw: !kt.ref<4x3xf32>, %rb: !kt.ref<4xf32>, %ax: tensor<2x3xf32>, %at: tensor<2xi64>):
    %aw = kt.load %rw : (!kt.ref<4x3xf32>) -> tensor<4x3xf32>
    %ab = kt.load %rb : (!kt.ref<4xf32>) -> tensor<4xf32>
    %0 = kt.linear %ax, %aw, %ab : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %1 = kt.relu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %2 = kt.cross_entropy %1, %at : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<f32>
    kg.yield %2 : tensor<f32>
  }
  %g:2 = kg.grad %loss wrt(%w, %b) : (tensor<f32>, !kt.ref<4x3xf32>, !kt.ref<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>)
  kg.graph @step_sgd(%w, %b, %g#0, %g#1) : (!kt.ref<4x3xf32>, !kt.ref<4xf32>, tensor<4x3xf32>, tensor<4xf32>) -> () {
  ^bb0(%pw: !kt.ref<4x3xf32>, %pb: !kt.ref<4xf32>, %gw: tensor<4x3xf32>, %gb: tensor<4xf32>):
    %lr = kt.full {size = [], value = 0.1, dtype = f32} : () -> tensor<f32>
    %0 = kt.mul %gw, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    kt.sub_ %pw, %0 : (!kt.ref<4x3xf32>, tensor<4x3xf32>) -> ()
    %2 = kt.mul %gb, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kt.sub_ %pb, %2 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return %loss : tensor<f32>
}

// A forward that reads its parameter through a view (w.t()): kiln-functionalize
// turns the view read into kt.load + kt.transpose, so the read graph loads the
// ref and the forward transposes the value; the update graph's in-place op
// becomes a load, a sub and the trailing kt.store of the epilogue.

// CHECK-LABEL: func.func private @vstep_g0_read(
// CHECK:         kt.load
// CHECK-LABEL: func.func private @vstep_g0_fwd(
// CHECK-NOT:     kt.view_transpose
// CHECK:         kt.transpose
// CHECK-LABEL: func.func private @vstep_sgd(
// CHECK:         kt.load %arg0
// CHECK:         kt.sub
// CHECK:         kt.store %{{.*}}, %arg0
// CHECK-LABEL: kg.program @vstep
// CHECK:         kg.graph @vstep_g0_read(%w)
// CHECK:         kg.graph @vstep_g0_fwd(
// CHECK:         kg.graph @vstep_g0_bwd(
// CHECK:         kg.graph @vstep_sgd(%w,
kg.program @vstep(%w: !kt.ref<3x4xf32>, %x: tensor<2x3xf32>) -> tensor<f32> {
  kg.guard_tensor %w {dtype = f32, shape = [3, 4], requires_grad = true} : !kt.ref<3x4xf32>
  %loss = kg.graph @vstep_g0(%w, %x) : (!kt.ref<3x4xf32>, tensor<2x3xf32>) -> tensor<f32> {
  ^bb0(%rw: !kt.ref<3x4xf32>, %ax: tensor<2x3xf32>):
    %t = kt.view_transpose %rw {dim0 = 0 : i64, dim1 = 1 : i64} : (!kt.ref<3x4xf32>) -> !kt.ref<4x3xf32>
    %aw = kt.load %t : (!kt.ref<4x3xf32>) -> tensor<4x3xf32>
    %0 = kt.linear %ax, %aw : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
    %1 = kt.sum %0 {dim = [0, 1]} : (tensor<2x4xf32>) -> tensor<f32>
    kg.yield %1 : tensor<f32>
  }
  %g = kg.grad %loss wrt(%w) : (tensor<f32>, !kt.ref<3x4xf32>) -> tensor<3x4xf32>
  kg.graph @vstep_sgd(%w, %g) : (!kt.ref<3x4xf32>, tensor<3x4xf32>) -> () {
  ^bb0(%pw: !kt.ref<3x4xf32>, %gw: tensor<3x4xf32>):
    kt.sub_ %pw, %gw : (!kt.ref<3x4xf32>, tensor<3x4xf32>) -> ()
    kg.yield
  }
  kg.return %loss : tensor<f32>
}
