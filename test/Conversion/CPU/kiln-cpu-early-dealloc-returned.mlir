// RUN: kiln-opt %s -ownership-based-buffer-deallocation -canonicalize -kiln-cpu-early-dealloc | FileCheck %s

// kiln-cpu-early-dealloc hands the fresh buffers a function returns to its
// return: a call's fresh result (or a clone or alloc of the block) that the
// func.return returns once, directly or through views and casts, leaves the
// end-of-block bufferization.dealloc's memrefs and retained values (a
// training forward returns hundreds of saved activations: that one dealloc
// made buffer-deallocation-simplification quadratic). What may alias
// another returned, listed or retained value stays with the dealloc.

func.func private @k(%a: memref<4xf32>) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  memref.copy %a, %r : memref<4xf32> to memref<4xf32>
  return %r : memref<4xf32>
}

// Returns its argument: its result may be the caller's buffer.
func.func private @same(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}

func.func private @read(%a: memref<4xf32>)

// The kernel's own alloc, returned: its dealloc goes too.
// CHECK-LABEL: func.func private @k(
// CHECK-NOT:   bufferization.dealloc
// CHECK:       return

// Every result returned: no dealloc is left.
// CHECK-LABEL: func.func @many
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[B:.*]] = call @k(%[[A]])
// CHECK-NEXT: %[[C:.*]] = call @k(%[[B]])
// CHECK-NOT:  dealloc
// CHECK:      return %[[A]], %[[B]], %[[C]]
func.func @many(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %b = call @k(%a) : (memref<4xf32>) -> memref<4xf32>
  %c = call @k(%b) : (memref<4xf32>) -> memref<4xf32>
  return %a, %b, %c : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// Returned and freed: the returned one leaves, the other is freed after its
// last use.
// CHECK-LABEL: func.func @some
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[B:.*]] = call @k(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NOT:  retain
// CHECK:      return %[[B]]
func.func @some(%x: memref<4xf32>) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %b = call @k(%a) : (memref<4xf32>) -> memref<4xf32>
  return %b : memref<4xf32>
}

// Returned twice: the caller gets one buffer twice; the dealloc keeps it.
// CHECK-LABEL: func.func @twice
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK:      bufferization.dealloc ({{.*}}) if ({{.*}}) retain (%[[A]] :
// CHECK-NEXT: return %[[A]], %[[A]]
func.func @twice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}

// Returned with a view of it: both stay.
// CHECK-LABEL: func.func @with_view
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK:      %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK:      bufferization.dealloc ({{.*}}) if ({{.*}}) retain (%[[A]], %[[V]] :
func.func @with_view(%x: memref<4xf32>) -> (memref<4xf32>, memref<2x2xf32>) {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  return %a, %v : memref<4xf32>, memref<2x2xf32>
}

// Returned only through a view (and a cast): handed over.
// CHECK-LABEL: func.func @through_view
// CHECK-NOT:  dealloc
// CHECK:      return
func.func @through_view(%x: memref<4xf32>) -> memref<?x2xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %c = memref.cast %v : memref<2x2xf32> to memref<?x2xf32>
  call @read(%a) : (memref<4xf32>) -> ()
  return %c : memref<?x2xf32>
}

// A returned input is cloned (the function must return what it owns); the
// clone is handed over, the input is never freed.
// CHECK-LABEL: func.func @input
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[C:.*]] = bufferization.clone %arg0
// CHECK-NOT:  dealloc
// CHECK:      return %[[A]], %[[C]]
func.func @input(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  return %a, %x : memref<4xf32>, memref<4xf32>
}

// The returned value may be %a itself (@same): %a stays listed and the
// returned one retained, so the dealloc frees %a only if it is not the
// returned buffer.
// CHECK-LABEL: func.func @maybe_alias
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[B:.*]] = call @same(%[[A]])
// CHECK:      bufferization.dealloc ({{.*}}) if ({{.*}}) retain (%[[B]] :
// CHECK-NEXT: return %[[B]]
func.func @maybe_alias(%x: memref<4xf32>) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %b = call @same(%a) : (memref<4xf32>) -> memref<4xf32>
  return %b : memref<4xf32>
}

// One of two results chosen at run time: the one not returned is freed by
// the dealloc (its clone of the choice is returned).
// CHECK-LABEL: func.func @select
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[B:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[S:.*]] = arith.select %arg1, %[[A]], %[[B]]
// CHECK-NEXT: %[[C:.*]] = bufferization.clone %[[S]]
// CHECK:      bufferization.dealloc (%{{.*}}, %{{.*}} : memref<f32>, memref<f32>) if
// CHECK-NOT:  retain
// CHECK-NEXT: return %[[C]]
func.func @select(%x: memref<4xf32>, %p: i1) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %b = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %r = scf.if %p -> memref<4xf32> {
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %b : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// Returned on one path, used and freed on the other: in the block that
// returns it, the dealloc keeps it (its ownership is a run-time
// condition); the other block's own result is handed over and %a is freed
// there when owned.
// CHECK-LABEL: func.func @paths
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK:      cf.cond_br
// CHECK:      ^bb1:
// CHECK:      %[[R:.*]] = scf.if
// CHECK:      bufferization.dealloc ({{.*}}) if ({{.*}}) retain (%[[R]] :
// CHECK-NEXT: return %[[R]]
// CHECK:      ^bb2:
// CHECK:      %[[B:.*]] = call @k(%[[A]])
// CHECK:      %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[A]]
// CHECK-NEXT: bufferization.dealloc (%[[BASE]] : memref<f32>) if (%{{.*}}){{$}}
// CHECK-NEXT: return %[[B]]
func.func @paths(%x: memref<4xf32>, %p: i1) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  cf.cond_br %p, ^ret, ^other
^ret:
  return %a : memref<4xf32>
^other:
  %b = call @k(%a) : (memref<4xf32>) -> memref<4xf32>
  return %b : memref<4xf32>
}

// A yielded buffer is not returned by a func.return: left alone.
// CHECK-LABEL: func.func @yielded
// CHECK:      scf.for
// CHECK:        %[[A:.*]] = func.call @k
// CHECK:        bufferization.dealloc ({{.*}}) if ({{.*}}) retain (%[[A]] :
// CHECK:        scf.yield %[[A]]
func.func @yielded(%x: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%it = %x) -> memref<4xf32> {
    %a = func.call @k(%it) : (memref<4xf32>) -> memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}
