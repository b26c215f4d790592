// RUN: kiln-opt %s -split-input-file -kiln-cpu-lower-vectors | FileCheck %s

// kiln-cpu-lower-vectors reads and writes vectors of i1 in memory as bytes
// (a bool is one byte; LLVM would load and store a vector of i1 as packed
// bits): the memref is viewed as i8 (an unrealized cast that folds away in
// the LLVM lowering), reads compare the bytes with 0, writes store 0 or 1.
// Masked transfers keep their masks.

// CHECK-LABEL: func.func @read_write
// CHECK-SAME: (%[[M:.*]]: memref<64xi1>, %[[O:.*]]: memref<64xi1>)
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0> : vector<16xi8>
// CHECK: %[[MB:.*]] = builtin.unrealized_conversion_cast %[[M]] : memref<64xi1> to memref<64xi8>
// CHECK: %[[B:.*]] = vector.load %[[MB]][%{{.*}}] : memref<64xi8>, vector<16xi8>
// CHECK: %[[V:.*]] = arith.cmpi ne, %[[B]], %[[Z]] : vector<16xi8>
// CHECK: %[[N:.*]] = arith.xori %[[V]]
// CHECK: %[[W:.*]] = arith.extui %[[N]] : vector<16xi1> to vector<16xi8>
// CHECK: %[[OB:.*]] = builtin.unrealized_conversion_cast %[[O]] : memref<64xi1> to memref<64xi8>
// CHECK: vector.store %[[W]], %[[OB]][%{{.*}}] : memref<64xi8>, vector<16xi8>
// CHECK-NOT: vector<16xi1> to
func.func @read_write(%m: memref<64xi1>, %o: memref<64xi1>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant false
  %t = arith.constant dense<true> : vector<16xi1>
  scf.for %i = %c0 to %c64 step %c16 {
    %v = vector.transfer_read %m[%i], %f {in_bounds = [true]} : memref<64xi1>, vector<16xi1>
    %n = arith.xori %v, %t : vector<16xi1>
    vector.transfer_write %n, %o[%i] {in_bounds = [true]} : vector<16xi1>, memref<64xi1>
  }
  return
}

// -----

// A masked tail: the read pads with 0 (false) and keeps its mask.
// CHECK-LABEL: func.func @masked
// CHECK: vector.maskedload {{.*}} : memref<?xi8>, vector<16xi1>, vector<16xi8> into vector<16xi8>
// CHECK: arith.cmpi ne
// CHECK: vector.maskedstore {{.*}} : memref<?xi8>, vector<16xi1>, vector<16xi8>
func.func @masked(%m: memref<?xi1>, %o: memref<?xi1>, %n: index) {
  %c0 = arith.constant 0 : index
  %f = arith.constant false
  %mask = vector.create_mask %n : vector<16xi1>
  %v = vector.transfer_read %m[%c0], %f, %mask {in_bounds = [true]} : memref<?xi1>, vector<16xi1>
  vector.transfer_write %v, %o[%c0], %mask {in_bounds = [true]} : vector<16xi1>, memref<?xi1>
  return
}

// -----

// An accumulator read and written in place in a loop (kt.all's partial
// reduction): the transfer hoisting runs on the i1 transfers of one buffer
// before they become byte views, so the loop carries the value (it read
// the buffer once before the loop and never again when the views were two
// different values).
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[INIT:.*]] = vector.load {{.*}} : memref<8xi8>, vector<8xi8>
// CHECK: %[[INITB:.*]] = arith.cmpi ne, %[[INIT]]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INITB]]) -> (vector<8xi1>)
// CHECK: arith.andi %[[ACC]]
// CHECK: scf.yield
// CHECK: arith.extui %[[R]] : vector<8xi1> to vector<8xi8>
// CHECK: vector.store
func.func @accumulate(%x: memref<4x8xi1>, %acc: memref<8xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant false
  scf.for %i = %c0 to %c4 step %c1 {
    %a = vector.transfer_read %acc[%c0], %f {in_bounds = [true]} : memref<8xi1>, vector<8xi1>
    %v = vector.transfer_read %x[%i, %c0], %f {in_bounds = [true]} : memref<4x8xi1>, vector<8xi1>
    %r = arith.andi %a, %v : vector<8xi1>
    vector.transfer_write %r, %acc[%c0] {in_bounds = [true]} : vector<8xi1>, memref<8xi1>
  }
  return
}
