// Tests that kiln-functionalize keeps the meaning of ref programs: each
// function runs in the reference interpreter before and after the pass on the
// same random inputs; results and the final contents of every mutated ref
// argument (arg<i>.npy) must match. The functionalized module must also pass
// kiln-verify-functional.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-functionalize,kiln-verify-functional)' --seeds=3 | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: passed, 0 failed

// x.t()[1:3].add_(y), then a read of the base.
func.func @t_slice_add(%x: !kt.ref<3x4xf32>, %y: tensor<3xf32>) -> tensor<3x4xf32> {
  %t = kt.view_transpose %x {dim0 = 0, dim1 = 1} : (!kt.ref<3x4xf32>) -> !kt.ref<4x3xf32>
  %v = kt.view_slice %t {start = 1, end = 3} : (!kt.ref<4x3xf32>) -> !kt.ref<2x3xf32>
  kt.add_ %v, %y : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
  %r = kt.load %x : (!kt.ref<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// Loads before and after writes through aliases (select, reshape + slice).
func.func @aliases(%x: !kt.ref<4x6xf32>, %y: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<24xf32>) {
  %s1 = kt.view_select %x {dim = 0, index = 1} : (!kt.ref<4x6xf32>) -> !kt.ref<6xf32>
  %before = kt.load %s1 : (!kt.ref<6xf32>) -> tensor<6xf32>
  kt.mul_ %s1, %y : (!kt.ref<6xf32>, tensor<6xf32>) -> ()
  %flat = kt.view_reshape %x {shape = [24]} : (!kt.ref<4x6xf32>) -> !kt.ref<24xf32>
  %row = kt.view_slice %flat {start = 6, end = 12} : (!kt.ref<24xf32>) -> !kt.ref<6xf32>
  %after = kt.load %row : (!kt.ref<6xf32>) -> tensor<6xf32>
  %tail = kt.view_slice %flat {start = 20} : (!kt.ref<24xf32>) -> !kt.ref<4xf32>
  kt.relu_ %tail : (!kt.ref<4xf32>) -> ()
  %all = kt.load %flat : (!kt.ref<24xf32>) -> tensor<24xf32>
  return %before, %after, %all : tensor<6xf32>, tensor<6xf32>, tensor<24xf32>
}

// permute + strided slice + select, sub_ with broadcasting; unsqueeze/squeeze
// views; div_; two mutated arguments.
func.func @chains(%x: !kt.ref<2x3x5xf32>, %y: tensor<1x2xf32>, %z: !kt.ref<3xf32>, %w: tensor<3xf32>) {
  %p = kt.view_permute %x {dims = [2, 0, 1]} : (!kt.ref<2x3x5xf32>) -> !kt.ref<5x2x3xf32>
  %q = kt.view_slice %p {dim = 0, step = 2} : (!kt.ref<5x2x3xf32>) -> !kt.ref<3x2x3xf32>
  %v = kt.view_select %q {dim = 2, index = 1} : (!kt.ref<3x2x3xf32>) -> !kt.ref<3x2xf32>
  kt.sub_ %v, %y : (!kt.ref<3x2xf32>, tensor<1x2xf32>) -> ()
  %u = kt.view_unsqueeze %x {dim = 1} : (!kt.ref<2x3x5xf32>) -> !kt.ref<2x1x3x5xf32>
  %u1 = kt.view_select %u {dim = 0, index = -1} : (!kt.ref<2x1x3x5xf32>) -> !kt.ref<1x3x5xf32>
  %sq = kt.view_squeeze %u1 : (!kt.ref<1x3x5xf32>) -> !kt.ref<3x5xf32>
  %c = kt.view_slice %sq {dim = 1, start = -2} : (!kt.ref<3x5xf32>) -> !kt.ref<3x2xf32>
  kt.relu_ %c : (!kt.ref<3x2xf32>) -> ()
  kt.div_ %z, %w : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  return
}

// Slice assignment (copy_ with broadcasting), fill_, zero_, a store of the
// whole base, and an expanded view that is only read.
func.func @assign(%x: !kt.ref<3x5xf32>, %v: tensor<3x1xf32>, %c: tensor<f32>) -> tensor<3x4xf32> {
  %sl = kt.view_slice %x {dim = 1, start = 1, end = 4, step = 2} : (!kt.ref<3x5xf32>) -> !kt.ref<3x2xf32>
  kt.copy_ %sl, %v : (!kt.ref<3x2xf32>, tensor<3x1xf32>) -> ()
  %r2 = kt.view_select %x {dim = 0, index = 2} : (!kt.ref<3x5xf32>) -> !kt.ref<5xf32>
  kt.zero_ %r2 : (!kt.ref<5xf32>) -> ()
  %t = kt.view_transpose %x {dim0 = 0, dim1 = 1} : (!kt.ref<3x5xf32>) -> !kt.ref<5x3xf32>
  %c4 = kt.view_select %t {dim = 0, index = 4} : (!kt.ref<5x3xf32>) -> !kt.ref<3xf32>
  kt.fill_ %c4, %c : (!kt.ref<3xf32>, tensor<f32>) -> ()
  %c0 = kt.view_slice %x {dim = 1, end = 1} : (!kt.ref<3x5xf32>) -> !kt.ref<3x1xf32>
  %e = kt.view_expand %c0 {size = [3, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<3x4xf32>
  %r = kt.load %e : (!kt.ref<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// A local buffer (alloc_ref): the tensor argument is not changed; a store of
// a whole value, then in-place ops and loads.
func.func @local(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %b = kt.alloc_ref %x : (tensor<2x3xf32>) -> !kt.ref<2x3xf32>
  kt.add_ %b, %y : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()
  %b0 = kt.view_select %b {dim = 0, index = 0} : (!kt.ref<2x3xf32>) -> !kt.ref<3xf32>
  %r1 = kt.load %b0 : (!kt.ref<3xf32>) -> tensor<3xf32>
  kt.store %y, %b : (tensor<2x3xf32>, !kt.ref<2x3xf32>) -> ()
  kt.relu_ %b0 : (!kt.ref<3xf32>) -> ()
  %r0 = kt.load %b : (!kt.ref<2x3xf32>) -> tensor<2x3xf32>
  return %r0, %r1 : tensor<2x3xf32>, tensor<3xf32>
}

// An optimizer step on a parameter (SGD with momentum): mutated inputs only.
func.func @sgd(%w: !kt.ref<4x3xf32>, %buf: !kt.ref<4x3xf32>, %g: tensor<4x3xf32>) {
  %m = kt.constant {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %lr = kt.constant {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  kt.mul_ %buf, %m : (!kt.ref<4x3xf32>, tensor<f32>) -> ()
  kt.add_ %buf, %g : (!kt.ref<4x3xf32>, tensor<4x3xf32>) -> ()
  %b = kt.load %buf : (!kt.ref<4x3xf32>) -> tensor<4x3xf32>
  %step = kt.mul %b, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  kt.sub_ %w, %step : (!kt.ref<4x3xf32>, tensor<4x3xf32>) -> ()
  return
}

// Integer refs: floor div_ and mul_ through views.
func.func @ints(%x: !kt.ref<4x3xi64>, %d: tensor<3xi64>) {
  %one = kt.constant {value = dense<1> : tensor<3xi64>} : () -> tensor<3xi64>
  %dd = kt.add %d, %one : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %v = kt.view_slice %x {start = 1} : (!kt.ref<4x3xi64>) -> !kt.ref<3x3xi64>
  kt.div_ %v, %dd {rounding_mode = #kt.rounding_mode<floor>} : (!kt.ref<3x3xi64>, tensor<3xi64>) -> ()
  %w = kt.view_select %x {dim = 0, index = 0} : (!kt.ref<4x3xi64>) -> !kt.ref<3xi64>
  kt.mul_ %w, %d : (!kt.ref<3xi64>, tensor<3xi64>) -> ()
  return
}

// A ref argument that is only read stays unwritten (no epilogue store).
func.func @read_only(%x: !kt.ref<2x2xf32>) -> tensor<2xf32> {
  %t = kt.view_transpose %x {dim0 = 0, dim1 = 1} : (!kt.ref<2x2xf32>) -> !kt.ref<2x2xf32>
  %r = kt.view_select %t {dim = 0, index = 1} : (!kt.ref<2x2xf32>) -> !kt.ref<2xf32>
  %v = kt.load %r : (!kt.ref<2xf32>) -> tensor<2xf32>
  return %v : tensor<2xf32>
}
