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

// Tests copy_ of a value whose type equals the ref's but has `?` dims: the
// sizes may still differ at run time (a [1, 5] source into a [2, 5] ref, as
// a dynamic entry types both ?x?), so it is broadcast too. Before (gen28),
// the value was stored as it was and the compiled code wrote only row 0.
// CHECK-LABEL: func.func @copy_same_dynamic_type
// CHECK: %[[L:.+]] = kt.load
// CHECK: %[[M:.+]] = kt.full %{{.+}}, %{{.+}} {dtype = i1, size = [-1, -1], value = 1.000000e+00 : f64} : (index, index) -> tensor<?x?xi1>
// CHECK: %[[W:.+]] = kt.where %[[M]], %{{.+}}, %[[L]] : (tensor<?x?xi1>, tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
// CHECK: kt.store %[[W]]
// Static and equal: stored as it is.
// CHECK-LABEL: func.func @copy_same_static_type
// CHECK-NOT: kt.where
// CHECK: kt.store %arg1
func.func @copy_same_dynamic_type(%r: !kt.ref<?x?xf64>, %a: tensor<?x?xf64>) {
  kt.copy_ %r, %a : (!kt.ref<?x?xf64>, tensor<?x?xf64>) -> ()
  return
}
func.func @copy_same_static_type(%r: !kt.ref<2x5xf64>, %a: tensor<2x5xf64>) {
  kt.copy_ %r, %a : (!kt.ref<2x5xf64>, tensor<2x5xf64>) -> ()
  return
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

// -----

// Tests a graph that passes one ref twice (x.add_(1); y.mul_(2) with x is y):
// its body uses the first argument for both, so the update is read once and
// written back once, in program order (PyTorch: 4 for ones, not 2).
// CHECK-LABEL: kg.program @same_ref_twice
// CHECK: kg.graph @same_ref_twice_g(%a, %a)
// CHECK-NEXT: ^bb0(%[[X:.+]]: !kt.ref<3xf32>, %[[Y:.+]]: !kt.ref<3xf32>):
// CHECK-NEXT: %[[L:.+]] = kt.load %[[X]]
// CHECK-NOT: kt.load
// CHECK: %[[A:.+]] = kt.add %[[L]], %{{.+}}
// CHECK-NEXT: %[[M:.+]] = kt.mul %[[A]], %{{.+}}
// CHECK-NEXT: kt.store %[[M]], %[[X]]
// CHECK-NOT: kt.store
// CHECK: kg.yield %[[M]]
kg.program @same_ref_twice(%a: !kt.ref<3xf32>) -> tensor<3xf32> {
  %r = kg.graph @same_ref_twice_g(%a, %a) : (!kt.ref<3xf32>, !kt.ref<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: !kt.ref<3xf32>, %y: !kt.ref<3xf32>):
    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> tensor<3xf32>
    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> tensor<3xf32>
    kt.add_ %x, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    kt.mul_ %y, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    %v = kt.load %x : (!kt.ref<3xf32>) -> tensor<3xf32>
    kg.yield %v : tensor<3xf32>
  }
  kg.return %r : tensor<3xf32>
}

// -----

// Tests an outlined graph function called once with one ref twice and once
// with two refs: the aliased call site gets a copy of the function that uses
// its first argument for both; the other keeps the original.
// CHECK-LABEL: func.func private @upd(
// CHECK-SAME: %[[P:[^:]+]]: !kt.ref<3xf32>, %[[Q:[^:]+]]: !kt.ref<3xf32>,
// CHECK: kt.load %[[P]]
// CHECK: kt.load %[[Q]]
// CHECK: kt.store %{{.+}}, %[[P]]
// CHECK: kt.store %{{.+}}, %[[Q]]
// CHECK-LABEL: func.func private @upd_aliased(
// CHECK-SAME: %[[P2:[^:]+]]: !kt.ref<3xf32>, %{{[^:]+}}: !kt.ref<3xf32>,
// CHECK-NEXT: %[[L:.+]] = kt.load %[[P2]]
// CHECK-NEXT: %[[S:.+]] = kt.sub %[[L]], %{{.+}}
// CHECK-NEXT: %[[T:.+]] = kt.sub %[[S]], %{{.+}}
// CHECK-NEXT: kt.store %[[T]], %[[P2]]
// CHECK-NEXT: return
// CHECK-LABEL: kg.program @shared_callee
// CHECK: kg.graph @upd(%a, %b, %g)
// CHECK: kg.graph @upd_aliased(%a, %a, %g)
func.func private @upd(%p: !kt.ref<3xf32>, %q: !kt.ref<3xf32>, %g: tensor<3xf32>) attributes {kg.graph_function} {
  kt.sub_ %p, %g : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  kt.sub_ %q, %g : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  return
}
kg.program @shared_callee(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>, %g: tensor<3xf32>) {
  kg.graph @upd(%a, %b, %g) : (!kt.ref<3xf32>, !kt.ref<3xf32>, tensor<3xf32>) -> ()
  kg.graph @upd(%a, %a, %g) : (!kt.ref<3xf32>, !kt.ref<3xf32>, tensor<3xf32>) -> ()
  kg.return
}

// -----

// kt.index_put_ becomes one kt.scatter (sum for accumulate) into the value
// reshaped to [N, rest] at the linear index of the wrapped, broadcast index
// tensors; with two index tensors each is range-checked against its own dim
// by a kt.index_select of an iota laid along that dim.
// CHECK-LABEL: func.func @index_put
// CHECK-SAME: (%[[X:.+]]: !kt.ref<4x3x2xf32>, %[[I:.+]]: tensor<2x2xi64>, %[[J:.+]]: tensor<2xi32>, %[[V:.+]]: tensor<2xf32>)
// CHECK: %[[L:.+]] = kt.load %[[X]]
// CHECK: kt.where
// CHECK: kt.index_select %{{.+}}, %{{.+}} {dim = 0 : i64} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: kt.cast %[[J]] {dtype = i64}
// CHECK: kt.expand %{{.+}} {size = [2, 2]} : (tensor<2xi64>) -> tensor<2x2xi64>
// CHECK: kt.index_select %{{.+}}, %{{.+}} {dim = 1 : i64} : (tensor<1x3xi64>, tensor<4xi64>) -> tensor<1x4xi64>
// CHECK: %[[C:.+]] = kt.reshape %[[L]] {shape = [12, 2]} : (tensor<4x3x2xf32>) -> tensor<12x2xf32>
// CHECK: %[[S:.+]] = kt.scatter %[[C]], %{{.+}}, %{{.+}} {dim = 0 : i64, reduce = #kt.scatter_reduce<sum>} : (tensor<12x2xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<12x2xf32>
// CHECK: %[[R:.+]] = kt.reshape %[[S]] {shape = [4, 3, 2]}
// CHECK: kt.store %[[R]], %[[X]]
// CHECK-NOT: kt.index_put_
func.func @index_put(%x: !kt.ref<4x3x2xf32>, %i: tensor<2x2xi64>, %j: tensor<2xi32>, %v: tensor<2xf32>) {
  kt.index_put_ %x, %i, %j, %v {accumulate = true} : (!kt.ref<4x3x2xf32>, tensor<2x2xi64>, tensor<2xi32>, tensor<2xf32>) -> ()
  return
}

// -----

// Tests a write through kt.view_reshape of a base with several `?` dims
// (an error before kt.reshape had size operands): the flat value is
// reshaped back to the base's shape with its `?` dims from tensor.dim, and
// a view_reshape's own size operands are kept when it is applied.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: !kt.ref<?x?xf32>, %{{[^:]+}}: tensor<f32>, %[[N:[^:]+]]: index)
// CHECK: %[[V:.+]] = kt.load %[[X]]
// CHECK: %[[F:.+]] = kt.reshape %[[V]], %[[N]] {shape = [-2]} : (tensor<?x?xf32>, index) -> tensor<?xf32>
// CHECK: %[[M:.+]] = kt.mul %[[F]]
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[V]], %c0
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[V]], %c1
// CHECK: %[[B:.+]] = kt.reshape %[[M]], %[[D0]], %[[D1]] {shape = [-2, -2]} : (tensor<?xf32>, index, index) -> tensor<?x?xf32>
// CHECK: kt.store %[[B]], %[[X]]
func.func @reshape_dynamic(%x: !kt.ref<?x?xf32>, %c: tensor<f32>, %n: index) {
  %r = kt.view_reshape %x, %n {shape = [-2]} : (!kt.ref<?x?xf32>, index) -> !kt.ref<?xf32>
  kt.mul_ %r, %c : (!kt.ref<?xf32>, tensor<f32>) -> ()
  return
}
