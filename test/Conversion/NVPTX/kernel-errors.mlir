// RUN: kiln-opt %s -split-input-file -kiln-nvptx-map-to-gpu | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-nvptx='emit=isa' -o %t.mlir
// RUN: rm -rf %t.ptx && %python %S/../../../scripts/extract_ptx.py %t.mlir %t.ptx && cat %t.ptx/*.ptx | FileCheck %s --check-prefix=PTX
// REQUIRES: ptxas
// RUN: ptxas -arch=sm_90a %t.ptx/*.ptx -o /dev/null

// A run-time check inside a kernel (an index range check: the lowering
// calls kiln_cpu_runtime_error where it fails and goes on with a clamped
// index) writes a device error record instead: slot 0 counts failures (an
// atomic add), the thread that finds it 0 writes the id and the values; the function zeroes the
// record on entry and, before returning, copies it to the host and calls
// the error function when the flag is set.
// CHECK-LABEL: func.func @checked_gather
// CHECK: %[[REC:.*]] = gpu.alloc () : memref<10xi64>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[REC]][%c0
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.atomic_rmw addi %{{.*}}, %[[REC]][%{{.*}}] : (i64, memref<10xi64>) -> i64
// CHECK: %[[WON:.*]] = arith.cmpi eq, %[[OLD]], %{{.*}} : i64
// CHECK: scf.if %[[WON]]
// CHECK-COUNT-9: memref.store %{{.*}}, %[[REC]]
// CHECK-NOT: func.call @kiln_cpu_runtime_error
// CHECK: gpu.terminator
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<10xi64>
// CHECK: gpu.memcpy  %[[HOST]], %[[REC]]
// CHECK: %[[FLAG:.*]] = memref.load %[[HOST]][%c0
// CHECK: %[[SET:.*]] = arith.cmpi ne, %[[FLAG]]
// CHECK: scf.if %[[SET]]
// CHECK: call @kiln_cpu_runtime_error(
// CHECK: return
// PTX: atom.global.add.u64
func.func private @kiln_cpu_runtime_error(i64, i64, i64, i64, i64, i64, i64, i64, i64)
func.func @checked_gather(%x: memref<16xf32>, %i: memref<8xi64>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : i64
  %z = arith.constant 0 : i64
  %id = arith.constant 3 : i64
  %y = memref.alloc() : memref<8xf32>
  scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
    %k = memref.load %i[%j] : memref<8xi64>
    %lo = arith.cmpi slt, %k, %z : i64
    %hi = arith.cmpi sge, %k, %c16 : i64
    %bad = arith.ori %lo, %hi : i1
    scf.if %bad {
      func.call @kiln_cpu_runtime_error(%id, %k, %c16, %z, %z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    }
    %safe = arith.select %bad, %z, %k : i64
    %ki = arith.index_cast %safe : i64 to index
    %v = memref.load %x[%ki] : memref<16xf32>
    memref.store %v, %y[%j] : memref<8xf32>
    scf.reduce
  }
  return %y : memref<8xf32>
}
