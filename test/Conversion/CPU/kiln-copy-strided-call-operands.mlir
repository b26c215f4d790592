// RUN: kiln-opt %s -kiln-copy-strided-call-operands | FileCheck %s

// A strided view passed to an identity-layout callee: one-shot-bufferize's
// call boundary casts it (statically compatible), but the callee reads with
// identity strides and offset 0. The operand becomes a fresh copy.

func.func private @kernel(%a: memref<?x1x?xf32>) -> memref<?x1x?xf32>

// CHECK-LABEL: func.func @strided
// CHECK:      %[[V:.*]] = memref.subview %arg0[0, 0, 0] [%{{.*}}, 1, %{{.*}}] [1, 1, 1]
// CHECK-NOT:  memref.cast
// CHECK:      %[[D0:.*]] = memref.dim %[[V]], %c0
// CHECK:      %[[D2:.*]] = memref.dim %[[V]], %c2
// CHECK:      %[[C:.*]] = memref.alloc(%[[D0]], %[[D2]]) {alignment = 64 : i64} : memref<?x1x?xf32>
// CHECK-NEXT: memref.copy %[[V]], %[[C]]
// CHECK-NEXT: call @kernel(%[[C]])
func.func @strided(%x: memref<?x3x?xf32>) -> memref<?x1x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %d0 = memref.dim %x, %c0 : memref<?x3x?xf32>
  %d2 = memref.dim %x, %c2 : memref<?x3x?xf32>
  %v = memref.subview %x[0, 0, 0] [%d0, 1, %d2] [1, 1, 1] : memref<?x3x?xf32> to memref<?x1x?xf32, strided<[?, ?, 1]>>
  %c = memref.cast %v : memref<?x1x?xf32, strided<[?, ?, 1]>> to memref<?x1x?xf32>
  %r = call @kernel(%c) : (memref<?x1x?xf32>) -> memref<?x1x?xf32>
  return %r : memref<?x1x?xf32>
}

// A cast between identity layouts (static to dynamic sizes) is left alone.
// CHECK-LABEL: func.func @identity
// CHECK:      %[[K:.*]] = memref.cast %arg0
// CHECK-NEXT: call @kernel(%[[K]])
// CHECK-NOT:  memref.copy
func.func @identity(%x: memref<2x1x4xf32>) -> memref<?x1x?xf32> {
  %c = memref.cast %x : memref<2x1x4xf32> to memref<?x1x?xf32>
  %r = call @kernel(%c) : (memref<?x1x?xf32>) -> memref<?x1x?xf32>
  return %r : memref<?x1x?xf32>
}

// A view that addresses like the identity layout (offset 0, row-major
// strides; a unit dim's stride is never used) is passed as it is: the
// leading rows of a matrix, as the first of q/k/v in a packed projection.
// (memref.cast accepts a static layout only when it is exactly the
// identity's strides; other static layouts do not reach a cast.)
func.func private @kernel2(%a: memref<32x32xf32>) -> memref<32x32xf32>
func.func private @kernel3(%a: memref<1x32xf32>) -> memref<1x32xf32>

// CHECK-LABEL: func.func @rows_at_zero
// CHECK:      %[[K:.*]] = memref.cast %{{.*}} : memref<32x32xf32, strided<[32, 1]>> to memref<32x32xf32>
// CHECK-NEXT: call @kernel2(%[[K]])
// CHECK:      %[[U:.*]] = memref.cast %{{.*}} : memref<1x32xf32, strided<[?, 1]>> to memref<1x32xf32>
// CHECK-NEXT: call @kernel3(%[[U]])
// CHECK-NOT:  memref.copy
// CHECK-LABEL: func.func @rows_elsewhere
func.func @rows_at_zero(%w: memref<96x32xf32>, %m: memref<4x7xf32>, %s: index) -> (memref<32x32xf32>, memref<1x32xf32>) {
  %v = memref.subview %w[0, 0] [32, 32] [1, 1] : memref<96x32xf32> to memref<32x32xf32, strided<[32, 1]>>
  %c = memref.cast %v : memref<32x32xf32, strided<[32, 1]>> to memref<32x32xf32>
  %r = call @kernel2(%c) : (memref<32x32xf32>) -> memref<32x32xf32>
  %u = memref.reinterpret_cast %m to offset: [0], sizes: [1, 32], strides: [%s, 1] : memref<4x7xf32> to memref<1x32xf32, strided<[?, 1]>>
  %uc = memref.cast %u : memref<1x32xf32, strided<[?, 1]>> to memref<1x32xf32>
  %t = call @kernel3(%uc) : (memref<1x32xf32>) -> memref<1x32xf32>
  return %r, %t : memref<32x32xf32>, memref<1x32xf32>
}

// Rows at a dynamic offset, or with a dynamic row stride, are copied: the
// callee would read from offset 0 with its own strides.
// CHECK-COUNT-2: memref.copy
// CHECK-NOT:  memref.cast
func.func @rows_elsewhere(%w: memref<96x32xf32>, %i: index, %d: memref<?x?xf32>) -> (memref<32x32xf32>, memref<32x32xf32>) {
  %v2 = memref.subview %w[%i, 0] [32, 32] [1, 1] : memref<96x32xf32> to memref<32x32xf32, strided<[32, 1], offset: ?>>
  %c2 = memref.cast %v2 : memref<32x32xf32, strided<[32, 1], offset: ?>> to memref<32x32xf32>
  %r2 = call @kernel2(%c2) : (memref<32x32xf32>) -> memref<32x32xf32>
  %v3 = memref.subview %d[0, 0] [32, 32] [1, 1] : memref<?x?xf32> to memref<32x32xf32, strided<[?, 1]>>
  %c3 = memref.cast %v3 : memref<32x32xf32, strided<[?, 1]>> to memref<32x32xf32>
  %r3 = call @kernel2(%c3) : (memref<32x32xf32>) -> memref<32x32xf32>
  return %r2, %r3 : memref<32x32xf32>, memref<32x32xf32>
}
