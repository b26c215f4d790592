// RUN: kiln-opt %s -kiln-cpu="threads=2" --mlir-print-ir-after=kiln-matmul-to-blas -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: kiln-opt %s -kiln-cpu="threads=2 sgemm=onednn" --mlir-print-ir-after=kiln-matmul-to-blas -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,FORCED
// RUN: kiln-opt %s -kiln-cpu="threads=2 sgemm=openblas" --mlir-print-ir-after=kiln-matmul-to-blas -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLAS
// RUN: not kiln-opt %s -kiln-cpu="sgemm=mkl" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// REQUIRES: onednn

// f32 products chosen for a BLAS call go to oneDNN's JIT sgemm through
// libkiln_onednn (kiln_onednn_sgemm: cblas_sgemm's arguments, then the
// thread count) where the build has it; with sgemm=auto only products of
// at least 2^23 multiply-adds (smaller ones: cblas_sgemm; `?` sizes: a
// run-time test choosing one); sgemm=openblas keeps cblas_sgemm; f64
// products always call cblas_dgemm.

// CHECK-LABEL: func.func private @kernel_linear(
// CHECK: func.call @kiln_onednn_sgemm(%c101_i32, %c111_i32, %c112_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64)
// CHECK-NOT: cblas_sgemm
// CHECK-LABEL: func.func private @kernel_matmul(
// CHECK: func.call @cblas_dgemm(
// 64x64x64 (262144 multiply-adds): OpenBLAS under auto.
// CHECK-LABEL: func.func private @kernel_matmul_0(
// AUTO: func.call @cblas_sgemm(
// AUTO-NOT: kiln_onednn_sgemm
// FORCED: func.call @kiln_onednn_sgemm(
// FORCED-NOT: cblas_sgemm
// A `?` size: under auto, M * N * K >= 2^23 tested per call.
// CHECK-LABEL: func.func private @kernel_matmul_1(
// AUTO: %[[MIN:.*]] = arith.constant 8388608 : index
// AUTO: scf.if %{{.*}} {
// AUTO: func.call @kiln_onednn_sgemm(
// AUTO: } else {
// AUTO: func.call @cblas_sgemm(
// FORCED: func.call @kiln_onednn_sgemm(
// FORCED-NOT: cblas_sgemm
// BLAS-LABEL: func.func private @kernel_linear(
// BLAS: func.call @cblas_sgemm(%c101_i32, %c111_i32, %c112_i32,
// BLAS-NOT: kiln_onednn_sgemm
// BAD: kiln-matmul-to-blas: sgemm must be auto, openblas or onednn, not 'mkl'
func.func @f(%x: tensor<8x1280xf32>, %w: tensor<1000x1280xf32>, %b: tensor<1000xf32>, %p: tensor<32x40xf64>, %q: tensor<40x48xf64>, %s: tensor<64x64xf32>, %d: tensor<?x64xf32>) -> (tensor<8x1000xf32>, tensor<32x48xf64>, tensor<64x64xf32>, tensor<?x64xf32>) {
  %y = kt.linear %x, %w, %b : (tensor<8x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
  %m = kt.matmul %p, %q : (tensor<32x40xf64>, tensor<40x48xf64>) -> tensor<32x48xf64>
  %sm = kt.matmul %s, %s : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %dm = kt.matmul %d, %s : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y, %m, %sm, %dm : tensor<8x1000xf32>, tensor<32x48xf64>, tensor<64x64xf32>, tensor<?x64xf32>
}
