// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -kiln-cpu-fuse-elementwise -canonicalize | FileCheck %s

// Tests kiln-cpu-fuse-elementwise: a pointwise chain (with a broadcast and a
// value used twice) becomes one generic reading only the function's
// arguments; a pointwise producer fuses into a reduction; a reduction
// producer does not fuse into its consumer (the f64 sum's rounding to f32).

// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<64x32xf32>, %y: tensor<32xf32>) -> tensor<64x32xf32> {
  %0 = kt.mul %x, %y : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %1 = kt.add %0, %x : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %2 = kt.relu %1 : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %3 = kt.mul %2, %0 : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %3 : tensor<64x32xf32>
}

// -----

// CHECK-LABEL: func.func @into_reduction
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: arith.addf {{.*}} : f64
// CHECK: linalg.generic
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK-NOT: linalg.generic
func.func @into_reduction(%x: tensor<64x32xf32>) -> tensor<64xf32> {
  %0 = kt.exp %x : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %1 = kt.sum %0 {dim = [1]} : (tensor<64x32xf32>) -> tensor<64xf32>
  return %1 : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK-COUNT-3: linalg.generic
func.func @softmax(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// A producer that its consumer reads broadcast (here sqrt of a row vector,
// read along a second dim) is not fused: it would be recomputed for every
// element instead of once per row.
// CHECK-LABEL: func.func @broadcast_producer
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<64x1xf32>) outs(%{{.*}} : tensor<64x1xf32>)
// CHECK: math.sqrt
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: math.sqrt
// CHECK: return
func.func @broadcast_producer(%x: tensor<64x32xf32>, %v: tensor<64x1xf32>) -> tensor<64x32xf32> {
  %0 = kt.sqrt %v : (tensor<64x1xf32>) -> tensor<64x1xf32>
  %1 = kt.mul %x, %0 : (tensor<64x32xf32>, tensor<64x1xf32>) -> tensor<64x32xf32>
  return %1 : tensor<64x32xf32>
}
