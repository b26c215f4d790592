// RUN: kiln-opt %s -kiln-cpu | FileCheck %s

// Tests that kiln-cpu lowers a kt function to the LLVM dialect with a C
// interface wrapper when asked for one.
// CHECK-NOT: kt.
// CHECK-NOT: linalg.
// CHECK-LABEL: llvm.func @relu_sum
// CHECK: llvm.func @_mlir_ciface_relu_sum
func.func @relu_sum(%x: tensor<?x8xf32>) -> tensor<?xf32> attributes {llvm.emit_c_interface} {
  %0 = kt.relu %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = kt.sum %0 {dim = [1]} : (tensor<?x8xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
