// RUN: kiln-opt %s -kiln-select-matmul | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s -kiln-select-matmul=impl=generated | FileCheck %s --check-prefix=GEN
// RUN: kiln-opt %s -kiln-select-matmul=impl=openblas | FileCheck %s --check-prefix=BLAS

// Tests the matmul implementation attribute: auto picks OpenBLAS for large
// products (every dim >= 24 or dynamic) and generated code for small ones;
// impl= forces one; integer matmuls get no attribute (always generated).

// AUTO-LABEL: func.func @big
// AUTO: linalg.matmul {kiln.matmul_impl = "openblas"}
// GEN: linalg.matmul {kiln.matmul_impl = "generated"}
// BLAS: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @big(%a: tensor<256x512xf32>, %b: tensor<512x128xf32>, %c: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x128xf32>) outs(%c : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}

// AUTO-LABEL: func.func @small
// AUTO: linalg.batch_matmul {kiln.matmul_impl = "generated"}
// BLAS-LABEL: func.func @small
// BLAS: linalg.batch_matmul {kiln.matmul_impl = "openblas"}
func.func @small(%a: tensor<4x8x16xf64>, %b: tensor<4x16x8xf64>, %c: tensor<4x8x8xf64>) -> tensor<4x8x8xf64> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf64>, tensor<4x16x8xf64>) outs(%c : tensor<4x8x8xf64>) -> tensor<4x8x8xf64>
  return %r : tensor<4x8x8xf64>
}

// AUTO-LABEL: func.func @dynamic
// AUTO: kiln.matmul_impl = "openblas"
func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// AUTO-LABEL: func.func @integer
// AUTO-NOT: kiln.matmul_impl
// AUTO: return
func.func @integer(%a: tensor<64x64xi64>, %b: tensor<64x64xi64>, %c: tensor<64x64xi64>) -> tensor<64x64xi64> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xi64>, tensor<64x64xi64>) outs(%c : tensor<64x64xi64>) -> tensor<64x64xi64>
  return %r : tensor<64x64xi64>
}
