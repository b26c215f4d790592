// RUN: kiln-opt %s -kiln-cpu -mlir-print-ir-after=kiln-dealloc-simplification -o /dev/null 2>&1 | FileCheck %s

// kiln-cpu's deallocation stage runs kiln-dealloc-simplification (not
// upstream's buffer-deallocation-simplification) on every function.
// CHECK: IR Dump After KilnDeallocSimplificationPass (kiln-dealloc-simplification)
// CHECK-NOT: IR Dump After BufferDeallocationSimplificationPass
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
