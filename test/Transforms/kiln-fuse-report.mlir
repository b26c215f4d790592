// RUN: kiln-opt %s -kiln-fuse="report=true" -o /dev/null | FileCheck %s
// RUN: kiln-opt %s -kiln-fuse="report=true assumed-dim-size=10" -o /dev/null | FileCheck %s --check-prefix=DYN

// Tests the report: kernels and estimated bytes moved before and after, and
// one line per kernel. @chain: 10 ops on 4x8xf32 (128 B), each reading one
// or two tensors and writing one: 10 kernels, 2944 B; after: one kernel
// reading %x, %y and writing the result: 384 B.
// CHECK: kiln-fuse @chain: kernels 10 -> 1, bytes moved 2944 -> 384 (87.0% saved)
// CHECK-NEXT: fused_add_neg_exp_mul_tanh_etc_0: 10 ops, reads 256 B, writes 128 B
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kt.neg %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = kt.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = kt.mul %2, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = kt.tanh %3 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = kt.sigmoid %4 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = kt.relu %5 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = kt.sin %6 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = kt.abs %7 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = kt.sub %8, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %9 : tensor<4x8xf32>
}

// Ops that stay alone are kernels by their own name; kt.constant is not a
// kernel. transpose: 64 + 64; exp+add refused (cycle): exp 64 + 64, add
// 128 + 64.
// CHECK: kiln-fuse @unfused: kernels 3 -> 3, bytes moved 448 -> 448 (0.0% saved)
// CHECK-NEXT: kt.exp: 1 op, reads 64 B, writes 64 B
// CHECK-NEXT: kt.transpose: 1 op, reads 64 B, writes 64 B
// CHECK-NEXT: kt.add: 1 op, reads 128 B, writes 64 B
func.func @unfused(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kt.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kt.transpose %0 {dim0 = 0, dim1 = 1} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kt.add %0, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// A ? dim counts as assumed-dim-size (default 128): exp then sum of
// tensor<?x4xf16> (2 bytes per element): exp reads and writes 128*4*2 =
// 1024 B, sum reads 1024 and writes 128*2 = 256 B.
// CHECK: kiln-fuse @dynamic: kernels 2 -> 1, bytes moved 3328 -> 1280 (61.5% saved)
// DYN: kiln-fuse @dynamic: kernels 2 -> 1, bytes moved 260 -> 100 (61.5% saved)
func.func @dynamic(%x: tensor<?x4xf16>) -> tensor<?xf16> {
  %0 = kt.exp %x : (tensor<?x4xf16>) -> tensor<?x4xf16>
  %1 = kt.sum %0 {dim = [1]} : (tensor<?x4xf16>) -> tensor<?xf16>
  return %1 : tensor<?xf16>
}

// A type may name more bytes than 2^63 - 1 (kiln-run rejects it when it
// runs, test/Tools/kiln-run/alloc-failure.mlir): the estimate saturates at
// 2^53 - 1 bytes instead of overflowing (UB, found by UBSan; the wrapped
// product was 0 B, and the report said 4 -> 4). Two kernels: expand reads
// 4 B and writes the saturated estimate, neg reads and writes it.
// CHECK: kiln-fuse @impossible: kernels 2 -> 2, bytes moved 27021597764222977 -> 27021597764222977 (0.0% saved)
// CHECK-NEXT: kt.expand: 1 op, reads 4 B, writes 9007199254740991 B
// CHECK-NEXT: kt.neg: 1 op, reads 9007199254740991 B, writes 9007199254740991 B
func.func @impossible(%a: tensor<1xf32>) -> tensor<4611686018427387904xf32> {
  %r = kt.expand %a {size = [4611686018427387904]} : (tensor<1xf32>) -> tensor<4611686018427387904xf32>
  %n = kt.neg %r : (tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32>
  return %n : tensor<4611686018427387904xf32>
}
