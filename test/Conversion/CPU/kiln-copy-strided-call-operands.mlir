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
