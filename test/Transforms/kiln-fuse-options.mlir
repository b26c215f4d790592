// RUN: kiln-opt %s -split-input-file -kiln-fuse="max-group-size=3" | FileCheck %s
// RUN: not kiln-opt %s -kiln-fuse="max-group-size=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADSIZE
// RUN: not kiln-opt %s -kiln-fuse="assumed-dim-size=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADDIM

// Tests the group-size cap: a chain of 6 pointwise ops with
// max-group-size=3 becomes two groups of 3.
// CHECK-LABEL: func.func @cap
// CHECK: %[[A:.*]] = kt.fusion "fused_exp_neg_sin_0"(%arg0)
// CHECK-COUNT-3: kt.
// CHECK-NEXT: kt.yield
// CHECK: kt.fusion "fused_cos_abs_tanh_1"(%[[A]])
// CHECK-COUNT-3: kt.
// CHECK-NEXT: kt.yield
// BADSIZE: error: kiln-fuse: max-group-size must be at least 1, got 0
// BADDIM: error: kiln-fuse: assumed-dim-size must be at least 1, got 0
func.func @cap(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kt.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kt.neg %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = kt.sin %1 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = kt.cos %2 : (tensor<8xf32>) -> tensor<8xf32>
  %4 = kt.abs %3 : (tensor<8xf32>) -> tensor<8xf32>
  %5 = kt.tanh %4 : (tensor<8xf32>) -> tensor<8xf32>
  return %5 : tensor<8xf32>
}
