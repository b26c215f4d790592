// RUN: kiln-opt %s -kiln-autodiff | FileCheck %s --check-prefix=JOINT
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition | FileCheck %s --check-prefix=SPLIT
// RUN: kiln-opt %s '-kiln-autodiff=expand-attention=false' | FileCheck %s --check-prefix=RULE
// RUN: kiln-opt %s '-kiln-autodiff=expand-attention=false' -kiln-partition | FileCheck %s --check-prefix=RULE-SPLIT
// RUN: kiln-opt %s -kiln-autodiff '-kiln-partition=memory-budget=0' | FileCheck %s --check-prefix=BUDGET0

// Self-attention over a projection, as nn.MultiheadAttention imports it.
// kiln-autodiff expands kt.scaled_dot_product_attention into its math ops
// first (expand-attention, the default): the joint has one q k^T product
// and one softmax, and the backward reads the forward's probabilities, so
// kiln-partition saves them (a product is never recomputed under the
// min-cut) and the backward neither multiplies q k^T again nor recomputes
// the softmax. With expand-attention=false the op stays and its rule
// recomputes both in the backward. With memory budget 0 the product and
// the softmax are recomputed from the saved q.

// JOINT-LABEL: func.func @attn_joint(
// JOINT-NOT: kt.scaled_dot_product_attention
// JOINT: kt.softmax
// JOINT-NOT: kt.softmax
// JOINT: return

// SPLIT-LABEL: func.func @attn_fwd(
// SPLIT: %[[P:.+]] = kt.softmax
// SPLIT: return {{.*}}%[[P]] :
// SPLIT-LABEL: func.func @attn_bwd(
// SPLIT-NOT: kt.softmax
// SPLIT-NOT: kt.exp
// SPLIT: return

// RULE-LABEL: func.func @attn_joint(
// RULE: kt.scaled_dot_product_attention
// RULE: kt.softmax
// RULE: return

// RULE-SPLIT-LABEL: func.func @attn_fwd(
// RULE-SPLIT: kt.scaled_dot_product_attention
// RULE-SPLIT-NOT: kt.softmax
// RULE-SPLIT-LABEL: func.func @attn_bwd(
// RULE-SPLIT: kt.softmax
// RULE-SPLIT: return

// BUDGET0-LABEL: func.func @attn_bwd(
// BUDGET0: kt.softmax
// BUDGET0: return

func.func @attn(%x: tensor<2x16x8xf32> {kg.requires_grad = false}, %w: tensor<8x8xf32>) -> tensor<2x16x8xf32> attributes {kg.differentiate} {
  %q = kt.matmul %x, %w : (tensor<2x16x8xf32>, tensor<8x8xf32>) -> tensor<2x16x8xf32>
  %o = kt.scaled_dot_product_attention %q, %q, %q : (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}
