// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=2 sgemm=openblas" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=1 matmul=generated" | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s -split-input-file -kiln-cpu="optimize=false" | FileCheck %s --check-prefix=SCALAR

// Tests the optimized kiln-cpu pipeline end to end: OpenMP regions for
// threads > 1, vector arithmetic, the polynomial exp (no libm call in the
// vector code), and the cblas_sgemm call for a matmul that auto gives to
// OpenBLAS. threads=1 has no OpenMP; optimize=false is scalar.

// CHECK-LABEL: llvm.func @pointwise
// CHECK: omp.parallel
// CHECK: llvm.fmul {{.*}} : vector<
// CHECK-NOT: llvm.call @expf
// ONE-LABEL: llvm.func @pointwise
// ONE-NOT: omp.parallel
// ONE: vector<
// SCALAR-LABEL: llvm.func @pointwise
// SCALAR-NOT: vector<
// SCALAR: llvm.call @expf
func.func @pointwise(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %0 = kt.exp %x : (tensor<512x256xf32>) -> tensor<512x256xf32>
  %1 = kt.mul %0, %x : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<512x256xf32>
  return %1 : tensor<512x256xf32>
}

// -----

// CHECK-LABEL: llvm.func @mm
// CHECK: llvm.call @cblas_sgemm
// ONE-LABEL: llvm.func @mm
// ONE-NOT: cblas_sgemm
// ONE: llvm.intr.fmuladd{{.*}}vector<
func.func @mm(%a: tensor<128x256xf32>, %b: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %0 = kt.matmul %a, %b : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// kt.linear's weight is read in place with CblasTrans (112) for B, no copy
// of the transposed weight, and without a bias C is not cleared first: beta
// is 0.
// CHECK-LABEL: llvm.func @linear_no_bias
// CHECK-DAG: %[[TRANS:.*]] = llvm.mlir.constant(112 : i32) : i32
// CHECK-DAG: %[[NOTRANS:.*]] = llvm.mlir.constant(111 : i32) : i32
// CHECK-DAG: %[[ROWMAJOR:.*]] = llvm.mlir.constant(101 : i32) : i32
// CHECK-DAG: %[[ALPHA:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG: %[[BETA:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NOT: llvm.intr.memset
// CHECK: llvm.call @cblas_sgemm(%[[ROWMAJOR]], %[[NOTRANS]], %[[TRANS]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ALPHA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]],
func.func @linear_no_bias(%x: tensor<64x48xf32>, %w: tensor<32x48xf32>) -> tensor<64x32xf32> {
  %0 = kt.linear %x, %w : (tensor<64x48xf32>, tensor<32x48xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}
