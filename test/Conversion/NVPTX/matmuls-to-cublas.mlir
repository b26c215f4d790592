// RUN: kiln-opt %s -split-input-file -kiln-nvptx-matmuls-to-cublas | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-nvptx -mlir-print-ir-after=kiln-nvptx-matmuls-to-cublas -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: kiln-opt %s -split-input-file -kiln-nvptx=matmul=kernel | FileCheck %s --check-prefix=KERNEL
// RUN: not kiln-opt %s -kiln-nvptx=matmul=cudnn 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: kiln-nvptx: matmul must be cublas (cuBLAS calls through the runtime) or kernel (generated kernels), not 'cudnn'

// A matmul with dynamic M: a call of the runtime's kiln_cuda_gemm (f32 = 0,
// batch 1, m n k from the buffers, the aligned addresses), marked as the
// cuBLAS implementation; the declaration is added once.
// CHECK-LABEL: func.func private @kiln_cuda_gemm(i32, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @mm
// CHECK-NOT: linalg.matmul
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[M:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[K:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[N:.*]] = memref.dim %arg1, %c1
// CHECK-DAG: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK-DAG: %[[C:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: call @kiln_cuda_gemm(%[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]], %[[A]], %[[B]], %[[C]]) {kiln.matmul_impl = "cublas"}
func.func @mm(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

// batch_matmul in f64: dtype 1, the batch from A's first dim.
// CHECK-LABEL: func.func @bmm
// CHECK-DAG: %[[F64:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[BATCH:.*]] = memref.dim %arg0, %c0
// CHECK: call @kiln_cuda_gemm(%[[F64]], %[[BATCH]],
func.func @bmm(%a: memref<4x8x16xf64>, %b: memref<4x16x8xf64>, %c: memref<4x8x8xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x16xf64>, memref<4x16x8xf64>) outs(%c : memref<4x8x8xf64>)
  return
}

// -----

// Left as kernels: mixed element types (f16 inputs accumulating in f32), a
// strided (non-identity layout) operand, an integer matmul, a matmul in a
// host loop.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln_cuda_gemm
// CHECK-COUNT-4: linalg.matmul
func.func @left_alone(%h: memref<8x8xf16>, %hc: memref<8x8xf32>,
                      %s: memref<8x8xf32, strided<[16, 1]>>, %f: memref<8x8xf32>,
                      %i: memref<8x8xi32>) {
  linalg.matmul ins(%h, %h : memref<8x8xf16>, memref<8x8xf16>) outs(%hc : memref<8x8xf32>)
  linalg.matmul ins(%s, %f : memref<8x8xf32, strided<[16, 1]>>, memref<8x8xf32>) outs(%f : memref<8x8xf32>)
  linalg.matmul ins(%i, %i : memref<8x8xi32>, memref<8x8xi32>) outs(%i : memref<8x8xi32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %it = %c0 to %c1 step %c1 {
    linalg.matmul ins(%f, %f : memref<8x8xf32>, memref<8x8xf32>) outs(%hc : memref<8x8xf32>)
  }
  return
}

// -----

// End to end from kt: linear (weight transposed into a buffer, bias
// broadcast into the init) and a batched matmul call cuBLAS; the host code calls the
// runtime function after waiting for its stream. matmul=kernel keeps the
// generated kernels.
// PIPE-LABEL: func.func @linear
// PIPE: call @kiln_cuda_gemm
// PIPE-LABEL: func.func @bmm3
// PIPE: call @kiln_cuda_gemm
// KERNEL-NOT: kiln_cuda_gemm
func.func @linear(%x: tensor<?x256xf32>, %w: tensor<128x256xf32>, %b: tensor<128xf32>) -> tensor<?x128xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<?x256xf32>, tensor<128x256xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}
func.func @bmm3(%a: tensor<3x64x32xf32>, %b: tensor<3x32x16xf32>) -> tensor<3x64x16xf32> {
  %0 = kt.matmul %a, %b : (tensor<3x64x32xf32>, tensor<3x32x16xf32>) -> tensor<3x64x16xf32>
  return %0 : tensor<3x64x16xf32>
}
