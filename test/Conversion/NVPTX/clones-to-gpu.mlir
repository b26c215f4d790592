// RUN: kiln-opt %s -split-input-file -kiln-nvptx | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-nvptx-clones-to-gpu))' | FileCheck %s --check-prefix=PASS
// RUN: not kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-nvptx-clones-to-gpu{block-size=0}))' 2>&1 | FileCheck %s --check-prefix=BAD

// Returned buffers the function does not own (an argument returned as it
// is, the same value returned twice) are cloned by the deallocation
// pipeline; in kiln-nvptx every host buffer is device memory, so the clone
// is a device allocation filled by a copy kernel, never a host malloc and
// memcpy of a device pointer (which crashed the host).

// CHECK-LABEL: llvm.func @identity(
// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: llvm.intr.memcpy
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.return
func.func @identity(%a: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  return %a, %a : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A 0-d argument returned: a one-iteration copy kernel.
// CHECK-LABEL: llvm.func @scalar(
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func
func.func @scalar(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}

// -----

// The pass alone, on bufferized IR: the clone becomes gpu.alloc + a kernel.
// PASS-LABEL: func.func @clone(
// PASS-NOT: bufferization.clone
// PASS: %[[D:.*]] = memref.dim %arg0, %c0
// PASS: %[[A:.*]] = gpu.alloc (%[[D]]) : memref<?x4xf32>
// PASS: gpu.launch
// PASS: memref.load %arg0
// PASS: memref.store %{{.*}}, %[[A]]
// PASS: return %[[A]]
func.func @clone(%a: memref<?x4xf32>) -> memref<?x4xf32> {
  %c = bufferization.clone %a : memref<?x4xf32> to memref<?x4xf32>
  return %c : memref<?x4xf32>
}

// A bad option is an error naming the pass and the values.
// BAD: error: kiln-nvptx-clones-to-gpu: block-size must be in [1, 1024] and max-blocks positive, not 0 and 65535
