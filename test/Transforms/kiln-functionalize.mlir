// RUN: kiln-opt %s -split-input-file -kiln-functionalize -kiln-verify-functional | FileCheck %s

// Tests the example of docs/functionalization.md: x.t()[1:3].add_(y) becomes
// a leading load, value views, the add, the inverse views (slice_scatter,
// transpose) and one trailing store of the final value.
// CHECK-LABEL: func.func @t_slice_add
// CHECK-SAME: (%[[X:.+]]: !kt.ref<3x4xf32>, %[[Y:.+]]: tensor<3xf32>)
// CHECK-NEXT: %[[L:.+]] = kt.load %[[X]] : (!kt.ref<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[T:.+]] = kt.transpose %[[L]] {dim0 = 0 : i64, dim1 = 1 : i64}
// CHECK-NEXT: %[[S:.+]] = kt.slice %[[T]] {end = 3 : i64, start = 1 : i64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[A:.+]] = kt.add %[[S]], %[[Y]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[SC:.+]] = kt.slice_scatter %{{.+}}, %[[A]] {end = 3 : i64, start = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[B:.+]] = kt.transpose %[[SC]] {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: kt.store %[[B]], %[[X]] : (tensor<3x4xf32>, !kt.ref<3x4xf32>) -> ()
// CHECK-NEXT: return
// CHECK-NOT: kt.view_
func.func @t_slice_add(%x: !kt.ref<3x4xf32>, %y: tensor<3xf32>) {
  %t = kt.view_transpose %x {dim0 = 0, dim1 = 1} : (!kt.ref<3x4xf32>) -> !kt.ref<4x3xf32>
  %v = kt.view_slice %t {start = 1, end = 3} : (!kt.ref<4x3xf32>) -> !kt.ref<2x3xf32>
  kt.add_ %v, %y : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
  return
}

// -----

// Tests the inverse of each view: select -> select_scatter, permute ->
// inverse permutation, reshape -> reshape to the base shape, unsqueeze ->
// squeeze, squeeze -> unsqueeze; a read-only argument gets no store.
// CHECK-LABEL: func.func @inverses
// CHECK: kt.select_scatter %{{.+}}, %{{.+}} {dim = 0 : i64, index = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: kt.permute %{{.+}} {dims = [1, 2, 0]} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
// CHECK: kt.reshape %{{.+}} {shape = [2, 3, 4]} : (tensor<24xf32>) -> tensor<2x3x4xf32>
// CHECK: kt.squeeze %{{.+}} {dim = [0]} : (tensor<1x2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: kt.unsqueeze %{{.+}} {dim = 1 : i64} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: kt.store %{{.+}}, %arg0 : (tensor<2x3x4xf32>, !kt.ref<2x3x4xf32>) -> ()
// CHECK: kt.store %{{.+}}, %arg1 : (tensor<3x1xf32>, !kt.ref<3x1xf32>) -> ()
// CHECK-NOT: kt.store
// CHECK: return
func.func @inverses(%x: !kt.ref<2x3x4xf32>, %s: !kt.ref<3x1xf32>, %ro: !kt.ref<2xf32>, %c: tensor<f32>) -> tensor<2xf32> {
  %a = kt.view_select %x {dim = 0, index = 1} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x4xf32>
  kt.relu_ %a : (!kt.ref<3x4xf32>) -> ()
  %p = kt.view_permute %x {dims = [2, 0, 1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x2x3xf32>
  kt.mul_ %p, %c : (!kt.ref<4x2x3xf32>, tensor<f32>) -> ()
  %r = kt.view_reshape %x {shape = [-1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<24xf32>
  kt.zero_ %r : (!kt.ref<24xf32>) -> ()
  %u = kt.view_unsqueeze %x {dim = 0} : (!kt.ref<2x3x4xf32>) -> !kt.ref<1x2x3x4xf32>
  kt.fill_ %u, %c : (!kt.ref<1x2x3x4xf32>, tensor<f32>) -> ()
  %q = kt.view_squeeze %s : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
  kt.add_ %q, %c : (!kt.ref<3xf32>, tensor<f32>) -> ()
  %v = kt.load %ro : (!kt.ref<2xf32>) -> tensor<2xf32>
  return %v : tensor<2xf32>
}

// -----

// Tests a local buffer: no ref remains at all, and copy_ with broadcasting
// becomes kt.where over a true mask (sizes of dynamic dims from tensor.dim).
// CHECK-LABEL: func.func @local
// CHECK-NOT: kt.alloc_ref
// CHECK-NOT: kt.load
// CHECK: %[[D:.+]] = tensor.dim
// CHECK: %[[M:.+]] = kt.full %[[D]] {dtype = i1, size = [-1, 3], value = 1.000000e+00 : f64} : (index) -> tensor<?x3xi1>
// CHECK: kt.where %[[M]], %{{.+}}, %{{.+}} : (tensor<?x3xi1>, tensor<3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT: kt.store
// CHECK: return
func.func @local(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
  %b = kt.alloc_ref %x : (tensor<?x3xf32>) -> !kt.ref<?x3xf32>
  kt.copy_ %b, %y : (!kt.ref<?x3xf32>, tensor<3xf32>) -> ()
  %r = kt.load %b : (!kt.ref<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// -----

// Tests a kg.graph region with a ref block argument (a mutated program input).
// CHECK-LABEL: kg.program @step
// CHECK: kg.graph @step_g0(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
// CHECK-NEXT: ^bb0(%[[W:.+]]: !kt.ref<4xf32>, %[[G:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[L:.+]] = kt.load %[[W]]
// CHECK-NEXT: %[[S:.+]] = kt.sub %[[L]], %[[G]]
// CHECK-NEXT: kt.store %[[S]], %[[W]]
// CHECK-NEXT: kg.yield
kg.program @step(%w: !kt.ref<4xf32>, %g: tensor<4xf32>) {
  kg.graph @step_g0(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%w0: !kt.ref<4xf32>, %g0: tensor<4xf32>):
    kt.sub_ %w0, %g0 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return
}
