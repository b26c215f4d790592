// RUN: kiln-opt %s -kiln-cpu-rename-reserved-symbols | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu=sgemm=openblas | FileCheck %s --check-prefix=LLVM

// Tests that user functions named like the external functions compiled code
// calls (libm, the C library, Kiln's runtime, OpenBLAS) are renamed with
// their uses, that the renames are recorded, that declarations and other
// names stay, and that after kiln-cpu the libm / runtime functions are
// declarations of their own while the C interface wrappers keep the user's
// names.

// CHECK: module attributes {kiln.renamed_symbols = {kiln.user.cblas_sgemm = "cblas_sgemm", kiln.user.exp = "exp", kiln.user.kiln_cpu_runtime_error = "kiln_cpu_runtime_error", kiln.user.malloc = "malloc"}}
// CHECK-LABEL: func.func @kiln.user.exp(
// CHECK-LABEL: func.func @caller(
// CHECK: call @kiln.user.exp(
// CHECK: call @expf(
// CHECK-LABEL: func.func private @expf(f32) -> f32
// CHECK-LABEL: func.func @kiln.user.malloc(
// CHECK-LABEL: func.func @kiln.user.cblas_sgemm(
// CHECK-LABEL: func.func @kiln.user.kiln_cpu_runtime_error(
// CHECK-LABEL: func.func @exponent(

// LLVM-DAG: llvm.func @kiln.user.exp(
// LLVM-DAG: llvm.func @_mlir_ciface_exp(
// LLVM-DAG: llvm.func @exp(f64) -> f64
// LLVM-DAG: llvm.func @_mlir_ciface_caller(
// LLVM-DAG: llvm.func @kiln.user.malloc(
// LLVM-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// LLVM-DAG: llvm.func @kiln.user.cblas_sgemm(
// LLVM-DAG: llvm.func @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// LLVM-DAG: llvm.func @kiln.user.kiln_cpu_runtime_error(
// LLVM-DAG: llvm.func @kiln_cpu_runtime_error(i64,
// LLVM-NOT: kiln.renamed_symbols
// LLVM-NOT: _mlir_ciface_kiln.user

func.func @exp(%x: tensor<5xf64>) -> tensor<5xf64> attributes {llvm.emit_c_interface} {
  %0 = kt.exp %x : (tensor<5xf64>) -> tensor<5xf64>
  return %0 : tensor<5xf64>
}
func.func @caller(%x: tensor<5xf64>, %s: f32) -> (tensor<5xf64>, f32) attributes {llvm.emit_c_interface} {
  %0 = call @exp(%x) : (tensor<5xf64>) -> tensor<5xf64>
  %1 = call @expf(%s) : (f32) -> f32
  return %0, %1 : tensor<5xf64>, f32
}
func.func private @expf(f32) -> f32
func.func @malloc(%x: tensor<5xf64>) -> tensor<5xf64> {
  %0 = kt.add %x, %x : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  return %0 : tensor<5xf64>
}
func.func @cblas_sgemm(%a: tensor<32x40xf32>, %b: tensor<40x48xf32>) -> tensor<32x48xf32> {
  %0 = kt.matmul %a, %b : (tensor<32x40xf32>, tensor<40x48xf32>) -> tensor<32x48xf32>
  return %0 : tensor<32x48xf32>
}
func.func @kiln_cpu_runtime_error(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
func.func @exponent(%x: tensor<5xf64>) -> tensor<5xf64> {
  return %x : tensor<5xf64>
}
