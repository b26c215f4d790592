// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=report' -o /dev/null 2>&1 | FileCheck %s --check-prefix=B100
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=report memory-budget=0.5' -o /dev/null 2>&1 | FileCheck %s --check-prefix=B050
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=report memory-budget=0.25' -o /dev/null 2>&1 | FileCheck %s --check-prefix=B025
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=report memory-budget=0' -o /dev/null 2>&1 | FileCheck %s --check-prefix=B000
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=report policy=recompute-all' -o /dev/null 2>&1 | FileCheck %s --check-prefix=B000
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition' | FileCheck %s --check-prefix=CSE
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=cse=false' | FileCheck %s --check-prefix=NOCSE

// Tests the memory budget on two matmul+tanh layers sharing a weight: the
// min-cut (budget 1) saves both matmul results (M = 640 bytes with the
// primals), recompute-all saves only the primals (R = 384 bytes). Budget
// 0.5 allows 512 bytes: the knapsack keeps one 128-byte matmul result saved
// and the other is recomputed; budget 0.25 (448 bytes) fits none of them,
// which gives the primals only; budget 0 is recompute-all.
// B100: remark: kiln-partition: @mm2_joint: policy=mincut saved 4 values (640 bytes, 256 of activations), recomputed 0 ops
// B050: remark: kiln-partition: @mm2_joint: policy=mincut budget=0.5 saved 3 values (512 bytes, 128 of activations), recomputed 2 ops: kt.matmul, kt.tanh
// B025: remark: kiln-partition: @mm2_joint: policy=mincut budget=0.25 saved 2 values (384 bytes, 0 of activations), recomputed 4 ops: kt.matmul, kt.tanh, kt.matmul, kt.tanh
// B000: remark: kiln-partition: @mm2_joint: policy={{.*}} saved 2 values (384 bytes, 0 of activations), recomputed 4 ops: kt.matmul, kt.tanh, kt.matmul, kt.tanh
func.func @mm2(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {kg.differentiate} {
  %0 = kt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = kt.tanh %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = kt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = kt.tanh %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// Tests that the joint is CSE'd first (AOTAutograd's fx_graph_cse): the rule
// of x * x emits `ct * x` twice, which becomes one op (cse=false keeps both).
// CSE-LABEL: func.func @square_bwd(
// CSE-SAME: %[[X:[^:]+]]: tensor<2x3xf64>, %[[CT:[^:]+]]: tensor<2x3xf64>)
// CSE-NEXT: %[[G:.+]] = kt.mul %[[CT]], %[[X]]
// CSE-NEXT: %[[S:.+]] = kt.add %[[G]], %[[G]]
// CSE-NEXT: return %[[S]]
// NOCSE-LABEL: func.func @square_bwd(
// NOCSE-NEXT: kt.mul
// NOCSE-NEXT: kt.mul
// NOCSE-NEXT: kt.add
func.func @square(%x: tensor<2x3xf64>) -> tensor<2x3xf64> attributes {kg.differentiate} {
  %0 = kt.mul %x, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}
