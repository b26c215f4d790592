// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=online-row-stats | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s --check-prefix=OFF

// With online-row-stats (kiln-cpu sets it with fuse=true), cross_entropy and
// log_softmax over an innermost class dim take the row max and the sum of
// exp in ONE generic with two results (the online step: one exp per
// element, its exp marked kiln.online_lse), so the row is read once; the
// class dim elsewhere, a log_softmax over another dim or of an input computed
// in the same function (a prologue could be fused into it), and softmax
// keep the two-pass max + sum of exp. Without the option nothing is online.

// Tests cross_entropy [N, C]: one two-result reduction (max in f32, sum in
// f64, exp in f32 marked), no maxnumf max; log(sum) after it.
// CHECK-LABEL: func.func @ce_rows
// CHECK: %[[MS:.+]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x100xf32>) outs(%{{.+}}, %{{.+}} : tensor<8xf32>, tensor<8xf64>)
// CHECK: arith.cmpf ogt
// CHECK: math.exp {{.*}} {kiln.online_lse} : f32
// CHECK: arith.extf {{.*}} : f32 to f64
// CHECK: linalg.yield {{.*}} : f32, f64
// CHECK-NOT: arith.maxnumf
// CHECK: ins(%[[MS]]#1 : tensor<8xf64>)
// CHECK: math.log
// OFF-LABEL: func.func @ce_rows
// OFF-NOT: kiln.online_lse
// OFF: arith.maxnumf
// OFF: return
func.func @ce_rows(%x: tensor<8x100xf32>, %t: tensor<8xi64>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<8x100xf32>, tensor<8xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests a rank-1 input (one row, rank-0 statistics), f16 (the step in f32)
// and `?` classes.
// CHECK-LABEL: func.func @ce_one_row_f16
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0 : tensor<?xf16>) outs(%{{.+}}, %{{.+}} : tensor<f32>, tensor<f64>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: math.exp {{.*}} {kiln.online_lse} : f32
func.func @ce_one_row_f16(%x: tensor<?xf16>, %t: tensor<i64>) -> tensor<f16> {
  %r = kt.cross_entropy %x, %t : (tensor<?xf16>, tensor<i64>) -> tensor<f16>
  return %r : tensor<f16>
}

// -----

// Tests that spatial dims ([N, C, d]: the class dim not innermost) keep
// the max and the sum of exp.
// CHECK-LABEL: func.func @ce_spatial
// CHECK-NOT: kiln.online_lse
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK-NOT: kiln.online_lse
// CHECK: return
func.func @ce_spatial(%x: tensor<2x5x7xf32>, %t: tensor<2x7xi64>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<2x5x7xf32>, tensor<2x7xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests log_softmax over the last dim of an argument: the online generic,
// then x - max - log(sum) (no exp); softmax keeps its two passes.
// CHECK-LABEL: func.func @log_softmax_rows
// CHECK: %[[MS:.+]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x?xf32>)
// CHECK: math.exp {{.*}} {kiln.online_lse}
// CHECK: math.log
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[MS]]#0, %{{.+}} :
// CHECK-NOT: math.exp
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: linalg.yield
// OFF-LABEL: func.func @log_softmax_rows
// OFF-NOT: kiln.online_lse
// OFF: return
func.func @log_softmax_rows(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %r = kt.log_softmax %x {dim = -1} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

// Tests the two-pass form for log_softmax over dim 0, for one whose input
// is computed in the function, and for softmax.
// CHECK-LABEL: func.func @two_pass
// CHECK-NOT: kiln.online_lse
// CHECK: return
func.func @two_pass(%x: tensor<4x9xf32>) -> (tensor<4x9xf32>, tensor<4x9xf32>, tensor<4x9xf32>) {
  %0 = kt.log_softmax %x {dim = 0} : (tensor<4x9xf32>) -> tensor<4x9xf32>
  %1 = kt.neg %x : (tensor<4x9xf32>) -> tensor<4x9xf32>
  %2 = kt.log_softmax %1 {dim = 1} : (tensor<4x9xf32>) -> tensor<4x9xf32>
  %3 = kt.softmax %x {dim = 1} : (tensor<4x9xf32>) -> tensor<4x9xf32>
  return %0, %2, %3 : tensor<4x9xf32>, tensor<4x9xf32>, tensor<4x9xf32>
}
