// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-vectorize="threads=1 vector-bits=512" 2>&1 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-vectorize="threads=1 vector-bits=256" 2>&1 | FileCheck %s --check-prefix=AVX2

// The online row max and sum of exp (the two-result generic that
// kiln-lower-to-linalg{online-row-stats} makes of cross_entropy's and
// log_softmax's row statistics, its exp marked kiln.online_lse) becomes
// vector loops that read each row once (OnlineRowStats.cpp): per row,
// blocks of 16 vector steps of 4 registers (the step: one read, -|x - m|,
// one exp, one fma), the f32 block sum rescaled into f64 lanes once per
// block, one masked step for the rest of the row (padded with -inf), and one
// merge of the lanes. A marked generic of another shape
// (f16 input, a fused prologue) is left as it is, without a diagnostic.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Tests the loops for f32 rows of `?` length: 64 lanes at 512 bits (32 at
// 256), one read per vector step, one exp per step; the masked step; the
// lanes merged (maxnumf, then the f64 add of the rescaled sums).
// CHECK-NOT: error
// CHECK-LABEL: func.func @rows
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[R:.+]] = %c0 to %{{.+}} step %c1 iter_args(%{{.+}} = %arg1, %{{.+}} = %arg2) -> (tensor<16xf32>, tensor<16xf64>)
// CHECK: scf.for %[[J0:.+]] = %c0 to %{{.+}} step %c1024 iter_args({{.*}}) -> (vector<64xf32>, vector<64xf64>)
// CHECK: scf.for %[[J:.+]] = %[[J0]] to %{{.+}} step %c64 iter_args({{.*}}) -> (vector<64xf32>, vector<64xf32>)
// CHECK-NEXT: vector.transfer_read %arg0[%[[R]], %[[J]]]{{.*}} {in_bounds = [true]} : tensor<16x?xf32>, vector<64xf32>
// CHECK-NOT: vector.transfer_read
// CHECK: math.absf {{.*}} : vector<64xf32>
// CHECK: math.exp {{.*}} : vector<64xf32>
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : vector<64xf32>
// CHECK: scf.yield
// CHECK: math.exp {{.*}} : vector<64xf32>
// CHECK: arith.extf {{.*}} : vector<64xf32> to vector<64xf64>
// CHECK: scf.yield
// CHECK: %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<64xi1>
// CHECK: vector.transfer_read %arg0[%[[R]], %{{.+}}], %{{.+}}, %[[MASK]] {in_bounds = [true]}
// CHECK: vector.reduction <maxnumf>, %{{.+}} : vector<64xf32> into f32
// CHECK: vector.reduction <add>, %{{.+}} : vector<64xf64> into f64
// The sum is NaN where the max is +inf; the max -inf where the sum is 0.
// CHECK: arith.cmpf oeq, %{{.+}}, %cst{{.*}} : f32
// CHECK: arith.select %{{.+}}, %cst{{.*}} : f64
// CHECK: arith.cmpf oeq, %{{.+}}, %cst{{.*}} : f64
// CHECK: arith.select %{{.+}}, %cst{{.*}} : f32
// CHECK: tensor.insert
// CHECK: tensor.insert
// AVX2-LABEL: func.func @rows
// AVX2: step %c512
// AVX2: vector.transfer_read {{.*}} : tensor<16x?xf32>, vector<32xf32>
func.func @rows(%x: tensor<16x?xf32>, %m: tensor<16xf32>, %s: tensor<16xf64>) -> (tensor<16xf32>, tensor<16xf64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %one = arith.constant 1.0 : f32
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x?xf32>) outs(%m, %s : tensor<16xf32>, tensor<16xf64>) {
  ^bb0(%in: f32, %mo: f32, %so: f64):
    %gt = arith.cmpf ogt, %in, %mo : f32
    %a = arith.subf %mo, %in : f32
    %b = arith.subf %in, %mo : f32
    %d0 = arith.select %gt, %a, %b : f32
    %isn = arith.cmpf oeq, %in, %ninf : f32
    %d = arith.select %isn, %ninf, %d0 : f32
    %e = math.exp %d {kiln.online_lse} : f32
    %z = arith.subf %in, %in : f32
    %self = arith.addf %z, %one : f32
    %e64 = arith.extf %e : f32 to f64
    %self64 = arith.extf %self : f32 to f64
    %sc = arith.mulf %so, %e64 : f64
    %grown = arith.addf %sc, %self64 : f64
    %added = arith.addf %so, %e64 : f64
    %s2 = arith.select %gt, %grown, %added : f64
    %m2 = arith.select %gt, %in, %mo : f32
    linalg.yield %m2, %s2 : f32, f64
  } -> (tensor<16xf32>, tensor<16xf64>)
  return %r#0, %r#1 : tensor<16xf32>, tensor<16xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Tests that a marked generic with a prologue fused in (a second input) is
// left alone (no vector loops of its own, no diagnostic).
// CHECK-LABEL: func.func @prologue
// CHECK: linalg.generic
// CHECK: math.exp {{.*}} {kiln.online_lse}
// CHECK-NOT: vector.reduction
// CHECK-NOT: error
func.func @prologue(%x: tensor<4x100xf32>, %y: tensor<4x100xf32>, %m: tensor<4xf32>, %s: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : tensor<4x100xf32>, tensor<4x100xf32>) outs(%m, %s : tensor<4xf32>, tensor<4xf64>) {
  ^bb0(%in: f32, %in2: f32, %mo: f32, %so: f64):
    %v = arith.mulf %in, %in2 : f32
    %gt = arith.cmpf ogt, %v, %mo : f32
    %b = arith.subf %v, %mo : f32
    %e = math.exp %b {kiln.online_lse} : f32
    %e64 = arith.extf %e : f32 to f64
    %added = arith.addf %so, %e64 : f64
    %m2 = arith.select %gt, %v, %mo : f32
    linalg.yield %m2, %added : f32, f64
  } -> (tensor<4xf32>, tensor<4xf64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf64>
}
