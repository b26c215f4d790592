// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=2" | FileCheck %s
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
