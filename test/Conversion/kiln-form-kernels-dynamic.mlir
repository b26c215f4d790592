// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-to-linalg -kiln-form-kernels -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu=fuse=true -verify-diagnostics -o /dev/null

// Groups over `?` dims: each operand read with a run-time broadcast gets an
// scf.if that copies it to the result's size. Such a copy keeps the static
// dims of its operand (17 below) in its type. When its tensor.empty was
// `?x?x?` with a size folding to 17, upstream's tensor.empty
// canonicalization (static dims + tensor.cast) and linalg's
// RemoveOutsDependency (a fresh empty from the cast's sizes) undid each other
// until the rewrite cap: ~10 s per group, and a "rewriting did not converge"
// warning since then; -verify-diagnostics fails on that warning.

// CHECK-LABEL: func.func @atan2_fmod
// CHECK-NOT: tensor<?x?x?xf32>
// CHECK: tensor.empty({{.*}}) : tensor<?x17x?xf32>
// CHECK-NOT: tensor<?x?x?xf32>
// The copies (scf.if) stand between the group's generics, so only the last
// one is tiled into the kernel (a known gap of `?`-dim groups).
// CHECK: math.atan2
// CHECK: scf.forall
// CHECK: arith.remf
// CHECK: } {kiln.kernel = "fused_atan2_mul_fmod_0"}
func.func @atan2_fmod(%a: tensor<?x17x?xf32>, %b: tensor<?x17x?xf32>) -> tensor<?x17x?xf32> {
  %0 = kt.atan2 %a, %b : (tensor<?x17x?xf32>, tensor<?x17x?xf32>) -> tensor<?x17x?xf32>
  %1 = kt.mul %0, %a : (tensor<?x17x?xf32>, tensor<?x17x?xf32>) -> tensor<?x17x?xf32>
  %2 = kt.fmod %1, %b : (tensor<?x17x?xf32>, tensor<?x17x?xf32>) -> tensor<?x17x?xf32>
  return %2 : tensor<?x17x?xf32>
}

// -----

// CHECK-LABEL: func.func @bitwise
// CHECK: scf.forall
// CHECK: } {kiln.kernel = "fused_bitwise_xor_bitwise_not_fmod_bitwise_and_bitwise_or_etc_0"}
func.func @bitwise(%a: tensor<?xi64>, %b: tensor<?xi64>) -> tensor<?xi1> {
  %0 = kt.bitwise_xor %a, %b : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %1 = kt.bitwise_not %0 : (tensor<?xi64>) -> tensor<?xi64>
  %2 = kt.fmod %1, %b : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %3 = kt.bitwise_and %2, %a : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %4 = kt.bitwise_or %3, %b : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %5 = kt.logical_xor %4, %a : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi1>
  return %5 : tensor<?xi1>
}

// -----

// CHECK-LABEL: func.func @linear_gelu_residual
// CHECK-NOT: tensor<?x?xf32>
// CHECK: scf.forall
// CHECK: } {kiln.kernel =
func.func @linear_gelu_residual(%x: tensor<?x5xf32>, %w: tensor<3x5xf32>, %bias: tensor<3xf32>, %r: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = kt.linear %x, %w, %bias : (tensor<?x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = kt.gelu %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = kt.add %1, %r : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
