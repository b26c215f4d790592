// RUN: kiln-opt %s | FileCheck %s

// Tests that attributes with a dialect prefix (annotations such as the
// source function and module stack a frontend records, or a pass's marks)
// are allowed on kt ops and kept, next to the op's own attributes.
// CHECK-LABEL: func.func @prefixed_annotations
// CHECK: kt.sum %{{.*}} {dim = [1], keepdim = true, kg.nn_module_stack = ["L__self__.lin"], kg.source_fn = "sum", kiln.note = "kept"}
// CHECK: kt.load %{{.*}} {other.dialect.mark} : (!kt.ref<4xf32>) -> tensor<4xf32>
func.func @prefixed_annotations(%a: tensor<2x3xf32>, %r: !kt.ref<4xf32>) -> (tensor<2x1xf32>, tensor<4xf32>) {
  %0 = kt.sum %a {dim = [1], keepdim = true, kg.source_fn = "sum", kg.nn_module_stack = ["L__self__.lin"], kiln.note = "kept"} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = kt.load %r {other.dialect.mark} : (!kt.ref<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<2x1xf32>, tensor<4xf32>
}
