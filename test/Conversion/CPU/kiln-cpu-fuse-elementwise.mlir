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

// -----

// Tests that a generic whose body carries kiln.materialize (softmax's stored
// exp) is not folded into its readers (the sum and the in-place
// normalization keep reading it: exp once), and that the in-place
// normalization (its payload reads the materialized init) is not folded
// into an epilogue, which would give the fused op the init as a second
// output.
// CHECK-LABEL: func.func @materialized
// CHECK: %[[E:.+]] = linalg.generic
// CHECK: math.exp %{{.+}} {kiln.materialize}
// CHECK: linalg.generic {{.+}} ins(%[[E]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.addf {{.*}} : f64
// CHECK: %[[N:.+]] = linalg.generic {{.+}} outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[N]], %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.addf {{.*}} : f32
// CHECK: return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @materialized(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %r: tensor<4xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf64>) {
  %z = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %v = math.exp %d {kiln.materialize} : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %se = tensor.empty() : tensor<4xf64>
  %s0 = linalg.fill ins(%z : f64) outs(%se : tensor<4xf64>) -> tensor<4xf64>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x8xf32>) outs(%s0 : tensor<4xf64>) {
  ^bb0(%a: f32, %o: f64):
    %w = arith.extf %a : f32 to f64
    %t = arith.addf %o, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %n = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %o, %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %empty2 = tensor.empty() : tensor<4x8xf32>
  %out = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%empty2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %out, %s : tensor<4x8xf32>, tensor<4xf64>
}
