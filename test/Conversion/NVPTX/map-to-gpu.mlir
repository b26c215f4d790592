// RUN: kiln-opt %s -split-input-file -kiln-nvptx-map-to-gpu=block-size=128 -verify-diagnostics | FileCheck %s

// A parallel loop: one launch of 128-thread blocks, a grid-stride loop
// over the linearized 2-D space (innermost dim fastest), nothing launched
// when the space is empty; buffers in device memory.
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[BUF:.*]] = gpu.alloc  (%{{.*}}) : memref<?x8xf32>
// CHECK: scf.if
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c128, {{.*}}) module(@pointwise_kernel) function(@pointwise_kernel)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: arith.remsi %[[I]]
// CHECK: arith.divsi %[[I]]
// CHECK: memref.load %arg0
// CHECK: memref.store {{.*}}, %[[BUF]]
func.func @pointwise(%x: memref<?x8xf32>) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  %y = memref.alloc(%n) : memref<?x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i, %j] : memref<?x8xf32>
    scf.reduce
  }
  return %y : memref<?x8xf32>
}

// -----

// A full reduction (no parallel dim): a one-thread kernel; a scalar the
// host loads for kernels only is loaded inside the kernel.
// CHECK-LABEL: func.func @full_sum
// CHECK: gpu.launch
// CHECK: memref.load %arg1[]
// CHECK: scf.for
// CHECK: gpu.terminator
func.func @full_sum(%x: memref<64xf32>, %init: memref<f32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %s = memref.alloc() : memref<f32>
  %i0 = memref.load %init[] : memref<f32>
  memref.store %i0, %s[] : memref<f32>
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %a = memref.load %s[] : memref<f32>
    %r = arith.addf %a, %v : f32
    memref.store %r, %s[] : memref<f32>
  }
  return %s : memref<f32>
}

// -----

// The host needs a value from device memory: not supported, a clear error.
func.func @host_reads(%x: memref<4xindex>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @below {{kiln-nvptx: the host uses a value this op computes from device memory; not supported}}
  %n = memref.load %x[%c0] : memref<4xindex>
  %y = memref.alloc(%n) : memref<?xf32>
  return %y : memref<?xf32>
}

// -----

// A host loop that touches memory (a scan along a dim: kt.cumsum) around
// a parallel loop (a copy): the loop runs in a one-thread kernel, and the
// kernel the inner parallel loop became runs inside it as loops over its
// blocks and threads (a kernel cannot launch a kernel; this was a nested
// gpu.launch that gpu-to-llvm could not lower, an error without location).
// CHECK-LABEL: func.func @scan_around_copy
// CHECK: gpu.launch blocks
// CHECK: scf.for %[[I:.*]] = %c0{{.*}} to %c9
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: gpu.launch
// CHECK: scf.for
// CHECK: scf.for
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @scan_around_copy(%a: memref<1x9xf32>, %acc: memref<1xf32>) -> memref<1x9xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %out = memref.alloc() : memref<1x9xf32>
  scf.for %i = %c0 to %c9 step %c1 {
    %s = memref.subview %a[0, %i] [1, 1] [1, 1] : memref<1x9xf32> to memref<1xf32, strided<[9], offset: ?>>
    %d = memref.subview %out[0, %i] [1, 1] [1, 1] : memref<1x9xf32> to memref<1xf32, strided<[9], offset: ?>>
    %x = memref.load %s[%c0] : memref<1xf32, strided<[9], offset: ?>>
    %y = memref.load %acc[%c0] : memref<1xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %acc[%c0] : memref<1xf32>
    memref.store %z, %d[%c0] : memref<1xf32, strided<[9], offset: ?>>
    scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
      %v = memref.load %d[%j] : memref<1xf32, strided<[9], offset: ?>>
      memref.store %v, %d[%j] : memref<1xf32, strided<[9], offset: ?>>
      scf.reduce
    }
  }
  return %out : memref<1x9xf32>
}

// -----

// A copy inside a parallel loop (an iteration's private buffer, as a
// scatter's lowering makes for a column it updates): with a strided source
// it becomes serial loops of loads and stores in that thread (upstream
// lowers such a memref.copy to a call of the host's memrefCopy, which
// kernels do not have: convert-gpu-to-nvvm failed with an error without a
// location; found by kiln-fuzz-pipeline's kiln-nvptx, fz27). A copy between
// identity layouts stays (it becomes a memcpy intrinsic).
// CHECK-LABEL: func.func @copy_in_kernel
// CHECK: gpu.launch
// CHECK: %[[SV:.*]] = memref.subview
// CHECK: %[[T:.*]] = memref.alloc
// CHECK-NOT: memref.copy %[[SV]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[V:.*]] = memref.load %[[SV]][%[[I]], %[[J]]]
// CHECK: memref.store %[[V]], %[[T]][%[[I]], %[[J]]]
// CHECK: memref.copy %[[T]], %{{.*}} : memref<?x1xf32> to memref<?x1xf32>
// CHECK: gpu.terminator
func.func @copy_in_kernel(%x: memref<?x4xf32>) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %y = memref.alloc(%n) : memref<?x4xf32>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    %col = memref.subview %x[0, %j] [%n, 1] [1, 1] : memref<?x4xf32> to memref<?x1xf32, strided<[4, 1], offset: ?>>
    %t = memref.alloc(%n) : memref<?x1xf32>
    memref.copy %col, %t : memref<?x1xf32, strided<[4, 1], offset: ?>> to memref<?x1xf32>
    %u = memref.alloc(%n) : memref<?x1xf32>
    memref.copy %t, %u : memref<?x1xf32> to memref<?x1xf32>
    %v = memref.load %u[%c0, %c0] : memref<?x1xf32>
    memref.store %v, %y[%c0, %j] : memref<?x4xf32>
    memref.dealloc %u : memref<?x1xf32>
    memref.dealloc %t : memref<?x1xf32>
    scf.reduce
  }
  return %y : memref<?x4xf32>
}

// -----

// A host run (one-thread kernel) with a view the host also uses after it:
// the kernel gets a copy of the view, and every use inside the run, also
// one nested in the run's loop, reads the copy (before fz27 the nested
// load kept the host's view, defined after the launch: "operand #0 does
// not dominate this use"; a scatter into a strided slice, found by
// kiln-fuzz-pipeline's kiln-nvptx).
// CHECK-LABEL: func.func @view_used_in_run_and_after
// CHECK: gpu.launch
// CHECK: memref.store
// CHECK: %[[KV:.*]] = memref.subview
// CHECK: scf.for
// CHECK: memref.load %[[KV]]
// CHECK: memref.store %{{.*}}, %[[KV]]
// CHECK: gpu.terminator
// CHECK: %[[HV:.*]] = memref.subview
// CHECK: gpu.launch
// CHECK: memref.load %[[HV]]
func.func @view_used_in_run_and_after(%x: memref<f32>, %u: memref<5xf32>) -> memref<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %a = memref.alloc() : memref<1xf32>
  %v = memref.load %x[] : memref<f32>
  memref.store %v, %a[%c0] : memref<1xf32>
  %s = memref.subview %a[0] [1] [2] : memref<1xf32> to memref<1xf32, strided<[2]>>
  scf.for %i = %c0 to %c5 step %c1 {
    %w = memref.load %u[%i] : memref<5xf32>
    %o = memref.load %s[%c0] : memref<1xf32, strided<[2]>>
    %r = arith.addf %o, %w : f32
    memref.store %r, %s[%c0] : memref<1xf32, strided<[2]>>
  }
  %b = memref.alloc() : memref<1xf32>
  memref.copy %s, %b : memref<1xf32, strided<[2]>> to memref<1xf32>
  return %b : memref<1xf32>
}

// -----

// A host run whose pure value (an element count as f64) the host also uses
// after the run: the value and the pure ops it is computed from stay on the
// host, and the kernel gets copies of all of them (before fz27 the operands
// moved into the kernel and the host's sitofp used a value defined inside
// the launch: "operand #0 does not dominate this use"; a kt.var with
// block-reduce=false, found by kiln-fuzz-pipeline).
// CHECK-LABEL: func.func @pure_chain_used_after_run
// CHECK: gpu.launch
// CHECK: %[[KN:.*]] = arith.muli
// CHECK: %[[KI:.*]] = arith.index_cast %[[KN]]
// CHECK: %[[KF:.*]] = arith.sitofp %[[KI]]
// CHECK: scf.for
// CHECK: arith.divf %{{.*}}, %[[KF]]
// CHECK: gpu.terminator
// CHECK: %[[HN:.*]] = arith.muli
// CHECK: %[[HI:.*]] = arith.index_cast %[[HN]]
// CHECK: %[[HF:.*]] = arith.sitofp %[[HI]]
// CHECK: arith.subf %[[HF]]
func.func @pure_chain_used_after_run(%x: memref<?xf32>, %acc: memref<1xf64>) -> memref<1xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f64
  %d = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %d step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %e = arith.extf %v : f32 to f64
    memref.store %e, %acc[%c0] : memref<1xf64>
  }
  %n = arith.muli %d, %c5 : index
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f64
  scf.for %i = %c0 to %d step %c1 {
    %a = memref.load %acc[%c0] : memref<1xf64>
    %q = arith.divf %a, %nf : f64
    memref.store %q, %acc[%c0] : memref<1xf64>
  }
  %out = memref.alloc() : memref<1xf64>
  %m = arith.subf %nf, %one : f64
  memref.store %m, %out[%c0] : memref<1xf64>
  return %out : memref<1xf64>
}
