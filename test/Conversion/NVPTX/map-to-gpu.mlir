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
// block-reduce=false, found by kiln-fuzz-pipeline). (The host use is a
// buffer size: a buffer whose size does not come from the run moves before
// it and its stores join the kernel, see @mean_result_buffer.)
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
func.func @pure_chain_used_after_run(%x: memref<?xf32>, %acc: memref<1xf64>) -> memref<?xf64> {
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
  %m = arith.subf %nf, %one : f64
  %mi = arith.fptosi %m : f64 to i64
  %size = arith.index_cast %mi : i64 to index
  %out = memref.alloc(%size) : memref<?xf64>
  return %out : memref<?xf64>
}

// -----

// A mean's division (nll_loss, cross_entropy with reduction=mean): the sums
// are 0-d buffers, the host divides them and stores the quotient into a
// buffer allocated between the loads and the store. The allocation moves
// before the run, so the loads, the division and the store are one
// one-thread kernel (before gpu28 the allocation ended the run and the
// division read device memory on the host: "the host uses a value this op
// computes from device memory").
// CHECK-LABEL: func.func @mean_result_buffer
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: }
// CHECK-NEXT: %[[S:.*]] = memref.load %{{.*}}[] : memref<f64>
// CHECK-NEXT: %[[N:.*]] = memref.load %{{.*}}[] : memref<f64>
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[S]], %[[N]] : f64
// CHECK: %[[T:.*]] = arith.truncf %[[Q]]
// CHECK: memref.store %[[T]], %[[OUT]][]
// CHECK: gpu.terminator
// CHECK-NOT: memref.load
// CHECK: return %[[OUT]]
func.func @mean_result_buffer(%x: memref<4xf64>, %s: memref<f64>, %n: memref<f64>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f64
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    %a = memref.load %s[] : memref<f64>
    %b = memref.load %n[] : memref<f64>
    %a2 = arith.addf %a, %v : f64
    %b2 = arith.addf %b, %one : f64
    memref.store %a2, %s[] : memref<f64>
    memref.store %b2, %n[] : memref<f64>
  }
  %0 = memref.load %s[] : memref<f64>
  %1 = memref.load %n[] : memref<f64>
  %2 = arith.divf %0, %1 : f64
  %3 = arith.truncf %2 : f64 to f32
  %out = memref.alloc() : memref<f32>
  memref.store %3, %out[] : memref<f32>
  return %out : memref<f32>
}

// -----

// A run-time check on a value the host loads from device memory (a 0-d
// nll_loss's target range check, kt.check's condition): the scf.if joins
// the run, and its error call becomes a write of the kernel's error record
// (before gpu28 the scf.if stayed on the host and the load with it: "the
// host uses a value this op computes from device memory").
// CHECK-LABEL: func.func @scalar_check_joins_run
// CHECK: %[[REC:.*]] = gpu.alloc () : memref<10xi64>
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: %[[T:.*]] = memref.load %{{.*}}[] : memref<i64>
// CHECK: %[[BAD:.*]] = arith.cmpi sge, %[[T]]
// CHECK: scf.if %[[BAD]]
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[REC]]
// CHECK-NOT: func.call @kiln_cpu_runtime_error
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: gpu.memcpy
// CHECK: call @kiln_cpu_runtime_error(
func.func private @kiln_cpu_runtime_error(i64, i64, i64, i64, i64, i64, i64, i64, i64)
func.func @scalar_check_joins_run(%t: memref<i64>, %x: memref<3xf32>) -> memref<f32> {
  %c3 = arith.constant 3 : i64
  %z = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %0 = memref.load %t[] : memref<i64>
  %bad = arith.cmpi sge, %0, %c3 : i64
  scf.if %bad {
    func.call @kiln_cpu_runtime_error(%z, %0, %c3, %z, %z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  }
  %i = arith.index_cast %0 : i64 to index
  %safe = arith.select %bad, %c0, %i : index
  %v = memref.load %x[%safe] : memref<3xf32>
  %out = memref.alloc() : memref<f32>
  memref.store %v, %out[] : memref<f32>
  return %out : memref<f32>
}

// -----

// A shape check on sizes (no device value in it) stays on the host, before
// the kernels it guards.
// CHECK-LABEL: func.func @size_check_stays
// CHECK: %[[D:.*]] = memref.dim
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[D]]
// CHECK-NEXT: scf.if %[[BAD]] {
// CHECK-NEXT: func.call @kiln_cpu_runtime_error(
// CHECK: gpu.launch
func.func private @kiln_cpu_runtime_error(i64, i64, i64, i64, i64, i64, i64, i64, i64)
func.func @size_check_stays(%x: memref<?xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0 : i64
  %d = memref.dim %x, %c0 : memref<?xf32>
  %bad = arith.cmpi ne, %d, %c3 : index
  scf.if %bad {
    func.call @kiln_cpu_runtime_error(%z, %z, %z, %z, %z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  }
  %v = memref.load %x[%c0] : memref<?xf32>
  %out = memref.alloc() : memref<f32>
  memref.store %v, %out[] : memref<f32>
  return %out : memref<f32>
}

// -----

// A seed that kernels and the host code of a 0-d random op both read: each
// kernel loads it, and the host's uses get their own load just before them,
// which joins their one-thread kernel (before gpu28 the one load stayed at
// the top for the host and its run escaped: "the host uses a value this op
// computes from device memory", kt.rand of size [] next to other random
// ops).
// CHECK-LABEL: func.func @seed_for_kernels_and_host
// CHECK: gpu.launch
// CHECK: %[[K:.*]] = memref.load %arg0[] : memref<i64>
// CHECK: arith.sitofp %[[K]]
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: %[[H:.*]] = memref.load %arg0[] : memref<i64>
// CHECK: arith.sitofp %[[H]]
// CHECK: gpu.terminator
// CHECK-NOT: memref.load
// CHECK: return
func.func @seed_for_kernels_and_host(%seed: memref<i64>) -> (memref<8xf64>, memref<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.load %seed[] : memref<i64>
  %a = memref.alloc() : memref<8xf64>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %f = arith.sitofp %s : i64 to f64
    memref.store %f, %a[%i] : memref<8xf64>
    scf.reduce
  }
  %g = arith.sitofp %s : i64 to f64
  %b = memref.alloc() : memref<f64>
  memref.store %g, %b[] : memref<f64>
  return %a, %b : memref<8xf64>, memref<f64>
}

// -----

// A host scf.if that yields buffers and tests a device value (a scatter
// with one index position): each branch copies what it yields into a
// buffer allocated before the if (serial loops), the allocation inside moves
// out, and the if, with the load it tests, is a one-thread kernel (before
// gpu28: "the host uses a value this op computes from device memory").
// CHECK-LABEL: func.func @buffer_chosen_by_device_value
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<3xf32>
// CHECK: %[[NEW:.*]] = gpu.alloc () : memref<3xf32>
// CHECK: gpu.launch
// CHECK: %[[I:.*]] = memref.load %arg1
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[NEW]]
// CHECK: memref.store %{{.*}}, %[[NEW]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: gpu.terminator
// CHECK-NOT: scf.if
// CHECK: return %[[OUT]]
func.func @buffer_chosen_by_device_value(%x: memref<3xf32>, %i: memref<1xi64>) -> memref<3xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %0 = memref.load %i[%c0] : memref<1xi64>
  %1 = arith.index_cast %0 : i64 to index
  %bad = arith.cmpi sge, %1, %c3 : index
  %r = scf.if %bad -> (memref<3xf32>) {
    scf.yield %x : memref<3xf32>
  } else {
    %new = memref.alloc() : memref<3xf32>
    memref.copy %x, %new : memref<3xf32> to memref<3xf32>
    memref.store %one, %new[%1] : memref<3xf32>
    scf.yield %new : memref<3xf32>
  }
  return %r : memref<3xf32>
}

// -----

// An scf.if with an allocation inside does not join a run (a kernel
// allocates nothing): the device value it uses is refused, located, as
// before gpu28.
func.func @if_with_alloc_stays(%x: memref<4xf32>, %c: i1) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{kiln-nvptx: the host uses a value this op computes from device memory; not supported}}
  %v = memref.load %x[%c0] : memref<4xf32>
  %out = memref.alloc() : memref<4xf32>
  scf.if %c {
    %tmp = memref.alloc() : memref<4xf32>
    memref.store %v, %tmp[%c0] : memref<4xf32>
    %w = memref.load %tmp[%c0] : memref<4xf32>
    memref.store %w, %out[%c1] : memref<4xf32>
    memref.dealloc %tmp : memref<4xf32>
  }
  return %out : memref<4xf32>
}
