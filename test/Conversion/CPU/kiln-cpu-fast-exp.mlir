// REQUIRES: avx512f
// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=1" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=1 fast-exp=false" | FileCheck %s --check-prefix=OFF

// Tests that on a host with AVX-512F every f32 exp kiln-cpu makes (pointwise
// exp, sigmoid, silu; softmax's stored exp; log_softmax's and cross_entropy's
// online row step and its rescale; logsumexp) is the vscalefps form of
// kiln-cpu-lower-vectors (FastExp.cpp): no math.exp or libm expf is left,
// and none of MLIR's exp (its 2^n from shifted integer bits) either.
// fast-exp=false keeps MLIR's polynomial approximation everywhere.

// CHECK-LABEL: llvm.func @kernel_exp
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: math.exp
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_exp
// OFF-NOT: scalef
// OFF: llvm.shl
func.func @kernel_exp(%x: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %r = kt.exp %x : (tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}

// -----

// CHECK-LABEL: llvm.func @kernel_sigmoid
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_sigmoid
// OFF-NOT: scalef
func.func @kernel_sigmoid(%x: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %r = kt.sigmoid %x : (tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}

// -----

// CHECK-LABEL: llvm.func @kernel_silu
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_silu
// OFF-NOT: scalef
func.func @kernel_silu(%x: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %r = kt.silu %x : (tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}

// -----

// CHECK-LABEL: llvm.func @kernel_softmax
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_softmax
// OFF-NOT: scalef
func.func @kernel_softmax(%x: tensor<64x1000xf32>) -> tensor<64x1000xf32> {
  %r = kt.softmax %x {dim = 1} : (tensor<64x1000xf32>) -> tensor<64x1000xf32>
  return %r : tensor<64x1000xf32>
}

// -----

// CHECK-LABEL: llvm.func @kernel_log_softmax
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_log_softmax
// OFF-NOT: scalef
func.func @kernel_log_softmax(%x: tensor<64x1000xf32>) -> tensor<64x1000xf32> {
  %r = kt.log_softmax %x {dim = 1} : (tensor<64x1000xf32>) -> tensor<64x1000xf32>
  return %r : tensor<64x1000xf32>
}

// -----

// CHECK-LABEL: llvm.func @kernel_cross_entropy
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_cross_entropy
// OFF-NOT: scalef
func.func @kernel_cross_entropy(%x: tensor<64x1000xf32>, %t: tensor<64xi64>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<64x1000xf32>, tensor<64xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// CHECK-LABEL: llvm.func @kernel_logsumexp
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK-NOT: @expf
// OFF-LABEL: llvm.func @kernel_logsumexp
// OFF-NOT: scalef
func.func @kernel_logsumexp(%x: tensor<64x1000xf32>) -> tensor<64xf32> {
  %r = kt.logsumexp %x {dim = [1]} : (tensor<64x1000xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
