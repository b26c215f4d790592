// RUN: kiln-opt %s -ownership-based-buffer-deallocation -canonicalize -kiln-cpu-early-dealloc | FileCheck %s

// Kernel results (fresh buffers of the callee) are freed right after their
// last use, direct or through a view, and leave the end-of-block dealloc;
// what is returned (handed to the return: kiln-cpu-early-dealloc-returned.mlir),
// what a callee may return as an alias of its argument, and what escapes
// into a region's yield stay with the dealloc.

func.func private @k(%a: memref<4xf32>) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  memref.copy %a, %r : memref<4xf32> to memref<4xf32>
  return %r : memref<4xf32>
}

// Returns its argument: its result may alias the caller's buffer.
func.func private @same(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}

// Both results are one buffer.
func.func private @twice(%a: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %r = memref.alloc() : memref<4xf32>
  memref.copy %a, %r : memref<4xf32> to memref<4xf32>
  return %r, %r : memref<4xf32>, memref<4xf32>
}

// A buffer and a view of it (a fused sum's keepdim and scalar results).
func.func private @and_view(%a: memref<4xf32>) -> (memref<1x1xf32>, memref<f32>) {
  %r = memref.alloc() : memref<f32>
  %v = memref.expand_shape %r [] output_shape [1, 1] : memref<f32> into memref<1x1xf32>
  return %v, %r : memref<1x1xf32>, memref<f32>
}

func.func private @use(%a: memref<2xf32, strided<[1], offset: 1>>)

// CHECK-LABEL: func.func @chain
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[B:.*]] = call @k(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[C:.*]] = call @k(%[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NOT:  memref.dealloc
// CHECK-NOT:  retain
// CHECK:      return %[[C]]
func.func @chain(%x: memref<4xf32>) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %b = call @k(%a) : (memref<4xf32>) -> memref<4xf32>
  %c = call @k(%b) : (memref<4xf32>) -> memref<4xf32>
  return %c : memref<4xf32>
}

// CHECK-LABEL: func.func @view
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[A]]
// CHECK-NEXT: %[[B:.*]] = call @k(%arg0)
// CHECK-NEXT: call @use(%[[V]])
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @view(%x: memref<4xf32>) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %v = memref.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  %b = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  call @use(%v) : (memref<2xf32, strided<[1], offset: 1>>) -> ()
  return %b : memref<4xf32>
}

// The result of @same may be %a: %a is left to the dealloc (which checks
// aliasing with the returned buffer at run time).
// CHECK-LABEL: func.func @maybe_alias
// CHECK-NOT:  memref.dealloc
// CHECK:      bufferization.dealloc
func.func @maybe_alias(%x: memref<4xf32>) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %b = call @same(%a) : (memref<4xf32>) -> memref<4xf32>
  return %b : memref<4xf32>
}

// CHECK-LABEL: func.func @two_results
// CHECK-NOT:  memref.dealloc
// CHECK:      bufferization.dealloc
func.func @two_results(%x: memref<4xf32>) -> memref<4xf32> {
  %a:2 = call @twice(%x) : (memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
  %b = call @k(%a#0) : (memref<4xf32>) -> memref<4xf32>
  return %b : memref<4xf32>
}

// The fresh-looking result is a view's buffer: neither is freed early (the
// end-of-block dealloc frees the one buffer once; freeing %a#1 here was a
// double free, found by kiln-fuzz-gen).
// CHECK-LABEL: func.func @buffer_and_view
// CHECK:      %[[A:.*]]:2 = call @and_view
// CHECK-NOT:  memref.dealloc %[[A]]#
// CHECK:      memref.extract_strided_metadata %[[A]]#0
// CHECK:      memref.extract_strided_metadata %[[A]]#1
// CHECK:      bufferization.dealloc
func.func @buffer_and_view(%x: memref<4xf32>) -> memref<1x1xf32> {
  %a:2 = call @and_view(%x) : (memref<4xf32>) -> (memref<1x1xf32>, memref<f32>)
  %b = call @scalar_use(%a#1) : (memref<f32>) -> memref<1x1xf32>
  %c = call @view_use(%a#0, %b) : (memref<1x1xf32>, memref<1x1xf32>) -> memref<1x1xf32>
  return %c : memref<1x1xf32>
}

func.func private @scalar_use(%a: memref<f32>) -> memref<1x1xf32> {
  %r = memref.alloc() : memref<1x1xf32>
  return %r : memref<1x1xf32>
}

func.func private @view_use(%a: memref<1x1xf32>, %b: memref<1x1xf32>) -> memref<1x1xf32> {
  %r = memref.alloc() : memref<1x1xf32>
  return %r : memref<1x1xf32>
}

// Used inside a region: freed after the op that holds the region.
// CHECK-LABEL: func.func @region
// CHECK:      %[[A:.*]] = call @k(%arg0)
// CHECK:      scf.if
// CHECK:      call @use
// CHECK:      }
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @region(%x: memref<4xf32>, %p: i1) -> memref<4xf32> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  scf.if %p {
    %v = memref.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
    func.call @use(%v) : (memref<2xf32, strided<[1], offset: 1>>) -> ()
  }
  %b = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  return %b : memref<4xf32>
}

// Returned through a view: stays.
// CHECK-LABEL: func.func @returned_view
// CHECK-NOT:  memref.dealloc
// CHECK:      return
func.func @returned_view(%x: memref<4xf32>) -> memref<2xf32, strided<[1], offset: 1>> {
  %a = call @k(%x) : (memref<4xf32>) -> memref<4xf32>
  %v = memref.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  return %v : memref<2xf32, strided<[1], offset: 1>>
}
