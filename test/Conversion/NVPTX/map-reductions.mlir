// RUN: kiln-opt %s -split-input-file -kiln-nvptx-map-reductions=block-size=128 | FileCheck %s
// RUN: not kiln-opt %s -split-input-file -kiln-nvptx-map-reductions=block-size=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: kiln-nvptx-map-reductions: block-size must be in [1, 1024]

// A max over the last dim: one block per row (grid min(rows, max-blocks),
// grid-stride over rows), at most 128 threads striding over the row from
// -inf, a block all-reduce, thread 0 folds the total into the output, then
// a barrier before the next row reuses the reduction's shared memory.
// CHECK-LABEL: func.func @row_max
// CHECK-NOT: linalg.generic
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[GRID:.*]] = arith.minsi %[[ROWS]], %c65535
// CHECK: scf.if
// CHECK: gpu.launch blocks(%[[B:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%[[NB:[a-z0-9]+]] = %[[GRID]], {{.*}}) threads(%[[T:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%[[NT:[a-z0-9]+]] = %{{.*}}, {{.*}}) module(@row_max_kernel) function(@row_max_kernel)
// CHECK: scf.for %[[ROW:.*]] = %[[B]] to %[[ROWS]] step %[[NB]]
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.*]] = scf.for %[[COL:.*]] = %[[T]] to %{{.*}} step %[[NT]] iter_args(%[[ACC:.*]] = %[[NEG]]) -> (f32)
// CHECK: %[[V:.*]] = memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK: %[[E:.*]] = math.exp %[[V]]
// CHECK: %[[M:.*]] = arith.maximumf %[[ACC]], %[[E]] : f32
// CHECK: scf.yield %[[M]]
// CHECK: %[[TOT:.*]] = gpu.all_reduce maximumf %[[P]] uniform
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[OLD:.*]] = memref.load %arg1[%[[ROW]]]
// CHECK: %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[TOT]]
// CHECK: memref.store %[[NEW]], %arg1[%[[ROW]]]
// CHECK: gpu.barrier
func.func @row_max(%x: memref<?x1000xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x1000xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %e = math.exp %in : f32
    %m = arith.maximumf %acc, %e : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Two outputs (a sum and a sum of squares in f64) over the last two dims of
// a 3-D input with a broadcast operand: the columns delinearize over both
// reduced dims (innermost fastest); each output its own partial and
// all-reduce. The broadcast operand (no reduced dim) needs no contiguity.
// CHECK-LABEL: func.func @two_sums
// CHECK: gpu.launch
// CHECK: arith.constant -0.000000e+00 : f64
// CHECK: scf.for %[[COL:.*]] = {{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[Q:.*]] = %{{.*}}) -> (f64, f64)
// CHECK: %[[J:.*]] = arith.remsi %[[COL]], %c64
// CHECK: %[[I:.*]] = arith.divsi %[[COL]], %c64
// CHECK: memref.load %arg0[%{{.*}}, %[[I]], %[[J]]]
// CHECK: memref.load %arg1[%{{.*}}]
// CHECK: arith.addf %[[S]]
// CHECK: arith.addf %{{.*}}, %[[Q]]
// CHECK: gpu.all_reduce add %{{.*}} uniform
// CHECK: gpu.all_reduce add %{{.*}} uniform
// CHECK: memref.store {{.*}}, %arg2
// CHECK: memref.store {{.*}}, %arg3
func.func @two_sums(%x: memref<8x32x64xf32>, %shift: memref<8xf32>, %s: memref<8xf64>, %q: memref<8xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %shift : memref<8x32x64xf32>, memref<8xf32>) outs(%s, %q : memref<8xf64>, memref<8xf64>) {
  ^bb0(%in: f32, %c: f32, %a: f64, %b: f64):
    %d = arith.subf %in, %c : f32
    %w = arith.extf %d : f32 to f64
    %sq = arith.mulf %w, %w : f64
    %a2 = arith.addf %a, %w : f64
    %b2 = arith.addf %sq, %b : f64
    linalg.yield %a2, %b2 : f64, f64
  }
  return
}

// -----

// A full reduction with linalg.index in the payload (a count of the
// positions whose value exceeds their index): one block, integer add.
// CHECK-LABEL: func.func @full_count
// CHECK: gpu.launch
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: scf.for %[[COL:.*]] = {{.*}} iter_args(%{{.*}} = %[[C0]]) -> (i64)
// CHECK: arith.index_cast %[[COL]]
// CHECK: gpu.all_reduce add
func.func @full_count(%x: memref<4096xi64>, %out: memref<i64>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<4096xi64>) outs(%out : memref<i64>) {
  ^bb0(%in: i64, %acc: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %gt = arith.cmpi sgt, %in, %ii : i64
    %one = arith.extui %gt : i1 to i64
    %r = arith.addi %acc, %one : i64
    linalg.yield %r : i64
  }
  return
}

// -----

// Left to one thread per output: a product whose second operand is not
// contiguous along the reduced dim (a matmul), an argmax-style pair (the
// index depends on the running max), a short static row (< 64), an i16
// accumulator (no 16-bit shuffles), a reduction inside a host loop.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: gpu.launch
func.func @left_alone(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>,
                      %v: memref<64x128xf32>, %mx: memref<64xf32>, %ix: memref<64xi64>,
                      %short: memref<64x16xf32>, %so: memref<64xf32>,
                      %h: memref<64x128xi16>, %ho: memref<64xi16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%v : memref<64x128xf32>) outs(%mx, %ix : memref<64xf32>, memref<64xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %x, %m : f32
    %m2 = arith.select %gt, %x, %m : f32
    %i2 = arith.select %gt, %jj, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<64x16xf32>) outs(%so : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<64x128xi16>) outs(%ho : memref<64xi16>) {
  ^bb0(%x: i16, %acc: i16):
    %s = arith.addi %acc, %x : i16
    linalg.yield %s : i16
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %it = %c0 to %c2 step %c1 {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%v : memref<64x128xf32>) outs(%so : memref<64xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %acc, %x : f32
      linalg.yield %s : f32
    }
  }
  return
}
