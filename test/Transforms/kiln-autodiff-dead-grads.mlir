// RUN: kiln-opt %s -kiln-autodiff | FileCheck %s --check-prefix=JOINT
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition | FileCheck %s --check-prefix=SPLIT
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=report verify-optimal' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Masked, scaled attention written as explicit ops (the GPT-2 block's
// `(q @ k^T) * c`, `masked_fill`, softmax, `@ v`). The rules of kt.mul and
// kt.where also build the gradients of their constant operands (the scale
// `c`, the fill value), `sum(g * s)` and `sum(where(m, g, 0))`, which no
// primal needs: kiln-autodiff erases them. Before, that dead `kt.mul` read
// the scores `s` in the backward, so the min-cut saved `s` and recomputed
// the scale, the mask and the softmax in the backward instead of saving the
// probabilities `p` that the backward reads anyway.

// JOINT-LABEL: func.func @attn_joint(
// JOINT-SAME: %[[Q:[^:]+]]: tensor<2x3x8x4xf32>, %[[K:[^:]+]]: tensor<2x3x8x4xf32>, %[[V:[^:]+]]: tensor<2x3x8x4xf32>, %[[M:[^:]+]]: tensor<1x1x8x8xi1>, %[[CT:[^:]+]]: tensor<2x3x8x4xf32>)
// JOINT: %[[S:.+]] = kt.matmul %[[Q]]
// JOINT: %[[P:.+]] = kt.softmax
// The backward reads the scores nowhere, and reduces nothing to a scalar.
// JOINT-NOT: %[[S]]
// JOINT-NOT: kt.sum %{{[0-9]+}} {dim = [0, 1, 2, 3]}
// JOINT: return

// SPLIT-LABEL: func.func @attn_fwd(
// SPLIT: %[[S:.+]] = kt.matmul
// SPLIT: %[[P:.+]] = kt.softmax
// SPLIT: %[[O:.+]] = kt.matmul %[[P]]
// SPLIT: return %[[O]], {{.*}}%[[P]] :
// SPLIT-LABEL: func.func @attn_bwd(
// SPLIT-NOT: kt.softmax
// SPLIT-NOT: 0xFF800000
// SPLIT: return

// REPORT: policy=mincut saved 5 values (3904 bytes, 2304 of activations), recomputed 1 ops: kt.constant
// REPORT: @attn_joint: cut value {{[0-9]+}} equals the exhaustive optimum

func.func @attn(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %m: tensor<1x1x8x8xi1>) -> tensor<2x3x8x4xf32> attributes {kg.differentiate} {
  %c = kt.constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %ninf = kt.constant {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %kt = kt.transpose %k {dim0 = 2 : i64, dim1 = 3 : i64} : (tensor<2x3x8x4xf32>) -> tensor<2x3x4x8xf32>
  %s = kt.matmul %q, %kt : (tensor<2x3x8x4xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x8x8xf32>
  %s2 = kt.mul %s, %c : (tensor<2x3x8x8xf32>, tensor<f32>) -> tensor<2x3x8x8xf32>
  %s3 = kt.where %m, %ninf, %s2 : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %p = kt.softmax %s3 {dim = -1 : i64} : (tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %o = kt.matmul %p, %v : (tensor<2x3x8x8xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x8x4xf32>
  return %o : tensor<2x3x8x4xf32>
}
