// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Tests that !kt.ref types (static, dynamic, rank 0, every element type)
// round-trip as function arguments and results.
// CHECK-LABEL: func.func @types
// CHECK-SAME: !kt.ref<4x?xf32>, %{{.*}}: !kt.ref<f64>, %{{.*}}: !kt.ref<2x0xi1>, %{{.*}}: !kt.ref<?xbf16>, %{{.*}}: !kt.ref<3xi32>, %{{.*}}: !kt.ref<1xi64>, %{{.*}}: !kt.ref<2xf16>) -> !kt.ref<4x?xf32>
func.func @types(%a: !kt.ref<4x?xf32>, %b: !kt.ref<f64>, %c: !kt.ref<2x0xi1>, %d: !kt.ref<?xbf16>, %e: !kt.ref<3xi32>, %f: !kt.ref<1xi64>, %g: !kt.ref<2xf16>) -> !kt.ref<4x?xf32> {
  return %a : !kt.ref<4x?xf32>
}

// -----

// Tests load, store and alloc_ref, including a dynamic dim.
// CHECK-LABEL: func.func @load_store
// CHECK: kt.load %{{.*}} : (!kt.ref<4xf32>) -> tensor<4xf32>
// CHECK: kt.store %{{.*}}, %{{.*}} : (tensor<4xf32>, !kt.ref<4xf32>) -> ()
// CHECK: kt.alloc_ref %{{.*}} : (tensor<4xf32>) -> !kt.ref<4xf32>
// CHECK: kt.store %{{.*}}, %{{.*}} : (tensor<?xf32>, !kt.ref<4xf32>) -> ()
// CHECK: kt.load %{{.*}} : (!kt.ref<?x3xi64>) -> tensor<?x3xi64>
func.func @load_store(%r: !kt.ref<4xf32>, %d: tensor<?xf32>, %i: !kt.ref<?x3xi64>) -> tensor<4xf32> {
  %v = kt.load %r : (!kt.ref<4xf32>) -> tensor<4xf32>
  kt.store %v, %r : (tensor<4xf32>, !kt.ref<4xf32>) -> ()
  %n = kt.alloc_ref %v : (tensor<4xf32>) -> !kt.ref<4xf32>
  kt.store %d, %n : (tensor<?xf32>, !kt.ref<4xf32>) -> ()
  %w = kt.load %i : (!kt.ref<?x3xi64>) -> tensor<?x3xi64>
  return %v : tensor<4xf32>
}

// -----

// Tests every view op with the attributes of its value op.
// CHECK-LABEL: func.func @views
// CHECK: kt.view_reshape %{{.*}} {shape = [3, -1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x8xf32>
// CHECK: kt.view_transpose %{{.*}} {dim0 = 0 : i64, dim1 = -1 : i64} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x3x2xf32>
// CHECK: kt.view_permute %{{.*}} {dims = [2, 0, 1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x2x3xf32>
// CHECK: kt.view_slice %{{.*}} {dim = 1 : i64, end = -1 : i64, start = 1 : i64, step = 2 : i64} : (!kt.ref<2x3x4xf32>) -> !kt.ref<2x1x4xf32>
// CHECK: kt.view_slice %{{.*}} : (!kt.ref<2x3x4xf32>) -> !kt.ref<2x3x4xf32>
// CHECK: kt.view_select %{{.*}} {dim = 0 : i64, index = -1 : i64} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x4xf32>
// CHECK: kt.view_expand %{{.*}} {size = [2, -1, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<2x3x4xf32>
// CHECK: kt.view_squeeze %{{.*}} {dim = [1]} : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
// CHECK: kt.view_squeeze %{{.*}} : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
// CHECK: kt.view_unsqueeze %{{.*}} {dim = -1 : i64} : (!kt.ref<3x1xf32>) -> !kt.ref<3x1x1xf32>
// CHECK: kt.view_slice %{{.*}} {start = 1 : i64} : (!kt.ref<?x4xf32>) -> !kt.ref<?x4xf32>
// CHECK: kt.view_reshape %{{.*}} {shape = [-1]} : (!kt.ref<?x4xf32>) -> !kt.ref<?xf32>
func.func @views(%r: !kt.ref<2x3x4xf32>, %s: !kt.ref<3x1xf32>, %d: !kt.ref<?x4xf32>) {
  %0 = kt.view_reshape %r {shape = [3, -1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x8xf32>
  %1 = kt.view_transpose %r {dim0 = 0, dim1 = -1} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x3x2xf32>
  %2 = kt.view_permute %r {dims = [2, 0, 1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x2x3xf32>
  %3 = kt.view_slice %r {dim = 1, start = 1, end = -1, step = 2} : (!kt.ref<2x3x4xf32>) -> !kt.ref<2x1x4xf32>
  %4 = kt.view_slice %r : (!kt.ref<2x3x4xf32>) -> !kt.ref<2x3x4xf32>
  %5 = kt.view_select %r {dim = 0, index = -1} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x4xf32>
  %6 = kt.view_expand %s {size = [2, -1, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<2x3x4xf32>
  %7 = kt.view_squeeze %s {dim = [1]} : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
  %8 = kt.view_squeeze %s : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
  %9 = kt.view_unsqueeze %s {dim = -1} : (!kt.ref<3x1xf32>) -> !kt.ref<3x1x1xf32>
  %10 = kt.view_slice %d {dim = 0, start = 1} : (!kt.ref<?x4xf32>) -> !kt.ref<?x4xf32>
  %11 = kt.view_reshape %d {shape = [-1]} : (!kt.ref<?x4xf32>) -> !kt.ref<?xf32>
  return
}

// -----

// Tests the in-place ops, with broadcasting of the source operand, a slice
// assignment (copy_ into a view) and each optional attribute.
// CHECK-LABEL: func.func @in_place
// CHECK: kt.add_ %{{.*}}, %{{.*}} : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
// CHECK: kt.sub_ %{{.*}}, %{{.*}} : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()
// CHECK: kt.mul_ %{{.*}}, %{{.*}} : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
// CHECK: kt.div_ %{{.*}}, %{{.*}} : (!kt.ref<2x3xf32>, tensor<2x1xf32>) -> ()
// CHECK: kt.div_ %{{.*}}, %{{.*}} {rounding_mode = #kt.rounding_mode<floor>} : (!kt.ref<4xi64>, tensor<4xi64>) -> ()
// CHECK: kt.view_slice
// CHECK: kt.copy_ %{{.*}}, %{{.*}} : (!kt.ref<1x3xf32>, tensor<3xf32>) -> ()
// CHECK: kt.zero_ %{{.*}} : (!kt.ref<2x3xf32>) -> ()
// CHECK: kt.fill_ %{{.*}}, %{{.*}} : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
// CHECK: kt.relu_ %{{.*}} : (!kt.ref<2x3xf32>) -> ()
// CHECK: kt.index_put_ %{{.*}}, %{{.*}}, %{{.*}} : (!kt.ref<4xi64>, tensor<2xi64>, tensor<i64>) -> ()
// CHECK: kt.index_put_ %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {accumulate = true} : (!kt.ref<2x3xf32>, tensor<2x1xi64>, tensor<4xi32>, tensor<4xf32>) -> ()
// CHECK: kt.index_put_ %{{.*}}, %{{.*}}, %{{.*}} : (!kt.ref<2x3xf32>, tensor<5xi64>, tensor<5x3xf32>) -> ()
func.func @in_place(%r: !kt.ref<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x3xf32>, %s: tensor<f32>,
                    %col: tensor<2x1xf32>, %i: !kt.ref<4xi64>, %iv: tensor<4xi64>,
                    %idx: tensor<2xi64>, %sv: tensor<i64>, %rows: tensor<2x1xi64>, %cols: tensor<4xi32>,
                    %vals: tensor<4xf32>, %idx5: tensor<5xi64>, %v53: tensor<5x3xf32>) {
  kt.add_ %r, %b : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
  kt.sub_ %r, %c : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()
  kt.mul_ %r, %s : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
  kt.div_ %r, %col : (!kt.ref<2x3xf32>, tensor<2x1xf32>) -> ()
  kt.div_ %i, %iv {rounding_mode = #kt.rounding_mode<floor>} : (!kt.ref<4xi64>, tensor<4xi64>) -> ()
  %v = kt.view_slice %r {dim = 0, start = 1, end = 2} : (!kt.ref<2x3xf32>) -> !kt.ref<1x3xf32>
  kt.copy_ %v, %b : (!kt.ref<1x3xf32>, tensor<3xf32>) -> ()
  kt.zero_ %r : (!kt.ref<2x3xf32>) -> ()
  kt.fill_ %r, %s : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
  kt.relu_ %r : (!kt.ref<2x3xf32>) -> ()
  kt.index_put_ %i, %idx, %sv : (!kt.ref<4xi64>, tensor<2xi64>, tensor<i64>) -> ()
  kt.index_put_ %r, %rows, %cols, %vals {accumulate = true} : (!kt.ref<2x3xf32>, tensor<2x1xi64>, tensor<4xi32>, tensor<4xf32>) -> ()
  kt.index_put_ %r, %idx5, %v53 : (!kt.ref<2x3xf32>, tensor<5xi64>, tensor<5x3xf32>) -> ()
  return
}

// -----

// Tests that kg.program, kg.graph regions and graph functions accept ref
// arguments (a mutated input such as a parameter updated by an optimizer step).
// CHECK-LABEL: kg.program @sgd_step
// CHECK: kg.graph @sgd_step_g0(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
// CHECK: kt.mul_ %{{.*}}, %{{.*}} : (!kt.ref<4xf32>, tensor<f32>) -> ()
// CHECK: kt.sub_ %{{.*}}, %{{.*}} : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
// CHECK-LABEL: func.func @sgd_step_g1
// CHECK-SAME: (%{{.*}}: !kt.ref<4xf32>, %{{.*}}: tensor<4xf32>)
kg.program @sgd_step(%w: !kt.ref<4xf32>, %g: tensor<4xf32>) {
  kg.graph @sgd_step_g0(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%w0: !kt.ref<4xf32>, %g0: tensor<4xf32>):
    %lr = kt.constant {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
    %0 = kt.mul %g0, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kt.mul_ %w0, %lr : (!kt.ref<4xf32>, tensor<f32>) -> ()
    kt.sub_ %w0, %0 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return
}
func.func @sgd_step_g1(%w: !kt.ref<4xf32>, %g: tensor<4xf32>) attributes {kg.graph_function} {
  kt.sub_ %w, %g : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
  return
}
