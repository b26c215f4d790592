// RUN: kiln-run %s --backend=cpu --random-inputs --stats --emit-object=%t.o | FileCheck %s
// RUN: llvm-nm --defined-only %t.o | FileCheck %s --check-prefix=NM --implicit-check-not=_mlir_

// Issue 13: the code handed to the JIT's code generator. ExecutionEngine
// gives every external function a packed wrapper `_mlir_<f>(void **)`; only
// the entry's C-interface wrapper `_mlir__mlir_ciface_<entry>` is looked up.
// The wrapper of the entry's own function called it with every memref field
// as a scalar argument (11 per rank-4 tensor), one basic block of thousands
// of stack stores for a CNN, and took 27 of resnet50's 45 s of codegen; the
// kernels' wrappers were never called either. The object must contain the
// entry, its C interface, the packed C interface and the kernels, and no
// other `_mlir_` function.

// CHECK: object file: {{.*}}.o

// (llvm-nm sorts by name.)
// NM: T _mlir__mlir_ciface_main
// NM-NEXT: T _mlir_ciface_main
// NM: T kernel_conv2d
// NM: T main
func.func @main(%x: tensor<2x3x8x8xf32>, %w1: tensor<4x3x3x3xf32>,
                %s: tensor<2x4x6x6xf32>, %w2: tensor<4x4x1x1xf32>,
                %b: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> {
  %0 = kt.conv2d %x, %w1 : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %1 = kt.sub %0, %s : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %2 = kt.relu %1 : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %3 = kt.conv2d %2, %w2 : (tensor<2x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x6x6xf32>
  %4 = kt.add %3, %b : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %4 : tensor<2x4x6x6xf32>
}
