// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = kt.reshape %[[X]] {shape = [4, -1]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = kt.reshape %x {shape = [6, 4]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kt.reshape %0 {shape = [4, -1]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<?x3xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @reshape_identity(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<2x3xf32>, tensor<?x3xf32>) {
  %0 = kt.reshape %x {shape = [-1, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kt.reshape %y {shape = [-1, 3]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<?x3xf32>
}

// -----

// A reshape of a dynamic tensor to the same type need not be the identity:
// tensor<?x?xf32> reshaped to [3, -1] is written tensor<?x?xf32> here.
// CHECK-LABEL: func.func @reshape_dynamic_not_identity
// CHECK: kt.reshape %{{.*}} {shape = [3, -1]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @reshape_dynamic_not_identity(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.reshape %x {shape = [3, -1]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
// CHECK-NEXT: %[[C:.*]] = kt.constant {value = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x3xf32> {
  %c = kt.constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>} : () -> tensor<6xf32>
  %0 = kt.reshape %c {shape = [2, -1]} : (tensor<6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<1x4x1xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @transpose_identity(%x: tensor<2x3xf32>, %y: tensor<1x4x1xf32>) -> (tensor<2x3xf32>, tensor<1x4x1xf32>) {
  %0 = kt.transpose %x {dim0 = 1 : i64, dim1 = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kt.transpose %y {dim0 = 0 : i64, dim1 = 2 : i64} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<1x4x1xf32>
}

// -----

// Negative: a square transpose has the input's type but is not the identity.
// CHECK-LABEL: func.func @transpose_square
// CHECK: kt.transpose
func.func @transpose_square(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = kt.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kt.transpose %x {dim0 = 0 : i64, dim1 = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = kt.transpose %0 {dim0 = -1 : i64, dim1 = 0 : i64} : (tensor<4x3x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Negative: different dims do not cancel.
// CHECK-LABEL: func.func @transpose_transpose_other
// CHECK: kt.transpose
// CHECK: kt.transpose
func.func @transpose_transpose_other(%x: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  %0 = kt.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %1 = kt.transpose %0 {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %1 : tensor<2x2x2xf32>
}

// -----

// CHECK-LABEL: func.func @permute_permute
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = kt.permute %[[X]] {dims = [2, 1, 0]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[R]]
func.func @permute_permute(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // %0 has dims (x1, x2, x0); picking [1, 0, 2] of it gives (x2, x1, x0).
  %0 = kt.permute %x {dims = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = kt.permute %0 {dims = [1, 0, 2]} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @permute_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<2x1x4xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @permute_inverse(%x: tensor<2x3x4xf32>, %y: tensor<2x1x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x4xf32>) {
  %0 = kt.permute %x {dims = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = kt.permute %0 {dims = [2, 0, 1]} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %2 = kt.permute %y {dims = [1, 0, 2]} : (tensor<2x1x4xf32>) -> tensor<1x2x4xf32>
  %3 = kt.permute %2 {dims = [1, 0, 2]} : (tensor<1x2x4xf32>) -> tensor<2x1x4xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<2x1x4xf32>
}

// -----

// CHECK-LABEL: func.func @permute_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<1x3x1xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @permute_identity(%x: tensor<2x3xf32>, %y: tensor<1x3x1xf32>) -> (tensor<2x3xf32>, tensor<1x3x1xf32>) {
  %0 = kt.permute %x {dims = [0, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kt.permute %y {dims = [2, 1, 0]} : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<1x3x1xf32>
}

// -----

// Negative: same type, but the data moves.
// CHECK-LABEL: func.func @permute_square
// CHECK: kt.permute
func.func @permute_square(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = kt.permute %x {dims = [1, 0]} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<?x3xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @expand_identity(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<2x3xf32>, tensor<?x3xf32>) {
  %0 = kt.expand %x {size = [2, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kt.expand %y {size = [-1, 3]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<?x3xf32>
}

// -----

// Negative: expanding a `?` dim to a size is not the identity (it may be 1).
// CHECK-LABEL: func.func @expand_not_identity
// CHECK: kt.expand %{{.*}} {size = [4, 3]}
func.func @expand_not_identity(%y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = kt.expand %y {size = [4, 3]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Tests folds of kt.reshape with size operands: reshape(reshape(x)) reads x
// (the outer op keeps its own sizes), and a reshape whose sizes are
// `tensor.dim` of its input at the same positions is the identity.
// CHECK-LABEL: func.func @reshape_sizes
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xf32>)
// CHECK: %[[B:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[T:.+]] = tensor.dim %[[X]], %c1
// CHECK-NEXT: %[[R:.+]] = kt.reshape %[[X]], %[[B]], %[[T]] {shape = [-2, -2, 4, -1]} : (tensor<?x?x64xf32>, index, index) -> tensor<?x?x4x16xf32>
// CHECK-NEXT: return %[[R]], %[[X]]
func.func @reshape_sizes(%x: tensor<?x?x64xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %bt = arith.muli %b, %t : index
  %0 = kt.reshape %x, %bt {shape = [-2, 64]} : (tensor<?x?x64xf32>, index) -> tensor<?x64xf32>
  %1 = kt.reshape %0, %b, %t {shape = [-2, -2, 4, -1]} : (tensor<?x64xf32>, index, index) -> tensor<?x?x4x16xf32>
  %2 = kt.reshape %x, %b, %t {shape = [-2, -2, 64]} : (tensor<?x?x64xf32>, index, index) -> tensor<?x?x64xf32>
  return %1, %2 : tensor<?x?x4x16xf32>, tensor<?x?x64xf32>
}
