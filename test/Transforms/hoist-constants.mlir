// RUN: kiln-opt %s -split-input-file -kiln-hoist-constants='args=1,2,3' | FileCheck %s
// kiln-hoist-constants: what a graph computes from constant program arguments
// alone moves into a kg.constant_graph the runtime runs once per constant
// epoch (docs/runtime.md, "Constant arguments").

// Inference batch norm folded into a convolution: the scale, the folded
// weights and the bias are constant; the convolution of the input is not.
// CHECK-LABEL: func.func private @fold_g0_constant(
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x3x3x3xf32>, %[[V:[^:]*]]: tensor<8xf32>, %[[G:[^:]*]]: tensor<8xf32>)
// CHECK-SAME: -> (tensor<8xf32>, tensor<8x3x3x3xf32>) attributes {kg.graph_function}
// CHECK: kt.full
// CHECK: kt.rsqrt
// CHECK: %[[S:.*]] = kt.mul %[[G]]
// CHECK: %[[R:.*]] = kt.reshape %[[S]]
// CHECK: %[[FW:.*]] = kt.mul %[[W]], %[[R]]
// CHECK: return %[[S]], %[[FW]]
// CHECK-LABEL: func.func private @fold_g0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x8x8xf32>, %{{.*}}: tensor<8x3x3x3xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %[[CS:[^:]*]]: tensor<8xf32>, %[[CW:[^:]*]]: tensor<8x3x3x3xf32>)
// CHECK-NEXT: %[[Y:.*]] = kt.conv2d %[[X]], %[[CW]], %[[CS]]
// CHECK-NEXT: return %[[Y]]
// CHECK: kg.program @fold
// CHECK: %[[C:.*]]:2 = kg.graph @fold_g0_constant(%w, %v, %g) {kg.constant_graph}
// CHECK: kg.graph @fold_g0(%x, %w, %v, %g, %[[C]]#0, %[[C]]#1)
module {
  func.func private @fold_g0(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %v: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<1x8x6x6xf32> attributes {kg.graph_function} {
    %e = kt.full {dtype = f32, size = [], value = 1.000000e-05 : f64} : () -> tensor<f32>
    %0 = kt.add %v, %e : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = kt.rsqrt %0 : (tensor<8xf32>) -> tensor<8xf32>
    %2 = kt.mul %g, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %3 = kt.reshape %2 {shape = [8, 1, 1, 1]} : (tensor<8xf32>) -> tensor<8x1x1x1xf32>
    %4 = kt.mul %w, %3 : (tensor<8x3x3x3xf32>, tensor<8x1x1x1xf32>) -> tensor<8x3x3x3xf32>
    %5 = kt.conv2d %x, %4, %2 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
    return %5 : tensor<1x8x6x6xf32>
  }
  kg.program @fold(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %v: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
    %0 = kg.graph @fold_g0(%x, %w, %v, %g) : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
    kg.return %0 : tensor<1x8x6x6xf32>
  }
}

// -----

// Nothing to hoist: a broadcast of a constant to the activation's shape
// stays where it fuses (larger than its operand), a constant argument read
// as it is needs no graph, a kt.full alone is not constant work, and an op
// that also reads the input is not constant.
// CHECK-LABEL: func.func private @stay_g0(
// CHECK-NOT: _constant
// CHECK: kt.expand
// CHECK: kt.mul
// CHECK: kt.add
// CHECK: kg.program @stay
// CHECK-NOT: kg.constant_graph
// CHECK: kg.graph @stay_g0(%x, %w, %v, %b)
module {
  func.func private @stay_g0(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %v: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {kg.graph_function} {
    %0 = kt.expand %w {size = [4, 8]} : (tensor<8xf32>) -> tensor<4x8xf32>
    %1 = kt.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %e = kt.full {dtype = f32, size = [4, 8], value = 1.0 : f64} : () -> tensor<4x8xf32>
    %2 = kt.add %1, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = kt.add %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    return %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  kg.program @stay(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %v: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %0:2 = kg.graph @stay_g0(%x, %w, %v, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
    kg.return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

// -----

// Arguments not named (0), refs (1 here is a ref: its kt.exp stays) and
// graph functions called from two graphs keep their work; a constant value
// the graph returns is a result of the constant graph, passed through.
// CHECK-LABEL: func.func private @shared_g(
// CHECK: kt.neg
// CHECK-LABEL: func.func private @ret_g0_constant(
// CHECK-SAME: %[[V:[^:]*]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK: kt.exp %[[V]]
// CHECK-LABEL: func.func private @ret_g0(
// CHECK-SAME: %[[C:[^:]*]]: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: kt.abs %arg0
// CHECK: kt.load %arg1
// CHECK: kt.exp
// CHECK: return %{{.*}}, %{{.*}}, %[[C]]
// CHECK-LABEL: kg.program @ret
// CHECK: kg.graph @shared_g(%v)
// CHECK: kg.graph @shared_g(%v)
// CHECK: %[[K:.*]] = kg.graph @ret_g0_constant(%v) {kg.constant_graph}
// CHECK: kg.graph @ret_g0(%x, %r, %v, %[[K]])
module {
  func.func private @shared_g(%a: tensor<8xf32>) -> tensor<8xf32> attributes {kg.graph_function} {
    %0 = kt.neg %a : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @ret_g0(%x: tensor<8xf32>, %r: !kt.ref<8xf32>, %v: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) attributes {kg.graph_function} {
    %0 = kt.abs %x : (tensor<8xf32>) -> tensor<8xf32>
    %l = kt.load %r : (!kt.ref<8xf32>) -> tensor<8xf32>
    %2 = kt.exp %l : (tensor<8xf32>) -> tensor<8xf32>
    %1 = kt.exp %v : (tensor<8xf32>) -> tensor<8xf32>
    return %0, %2, %1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
  kg.program @ret(%x: tensor<8xf32>, %r: !kt.ref<8xf32>, %v: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %a = kg.graph @shared_g(%v) : (tensor<8xf32>) -> tensor<8xf32>
    %b = kg.graph @shared_g(%v) : (tensor<8xf32>) -> tensor<8xf32>
    %0:3 = kg.graph @ret_g0(%x, %r, %v) : (tensor<8xf32>, !kt.ref<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
    kg.return %a, %b, %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
