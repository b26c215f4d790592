// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=policy=save-all' | FileCheck %s --check-prefix=SAVE
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=policy=recompute-all' | FileCheck %s --check-prefix=RECOMP
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition' | FileCheck %s --check-prefix=MINCUT
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=policy=save-all report' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAVE-R
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=policy=recompute-all report' -o /dev/null 2>&1 | FileCheck %s --check-prefix=RECOMP-R
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=report verify-optimal' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINCUT-R
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=keep-joint' | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=print-report' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE

// Tests the contract on d sin = cos: the forward returns the output then the
// saved primal (kg.num_outputs / kg.num_saved), the backward takes the saved
// values then the cotangent and computes cos there, under every policy; the
// joint is erased unless keep-joint.
// SAVE-R: remark: kiln-partition: @sine_joint: policy=save-all saved 1 values (12 bytes, 0 of activations), recomputed 0 ops
// SAVE-LABEL: func.func @sine_fwd(
// SAVE-SAME: %[[X:.+]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64}
// SAVE-NEXT: %[[Y:.+]] = kt.sin %[[X]]
// SAVE-NEXT: return %[[Y]], %[[X]]
// SAVE-LABEL: func.func @sine_bwd(
// SAVE-SAME: %[[S:.+]]: tensor<3xf32>, %[[CT:.+]]: tensor<3xf32>) -> tensor<3xf32> attributes {kg.num_saved = 1 : i64}
// SAVE-NEXT: %[[C:.+]] = kt.cos %[[S]]
// SAVE-NEXT: %[[G:.+]] = kt.mul %[[CT]], %[[C]]
// SAVE-NEXT: return %[[G]]
// SAVE-NOT: sine_joint
// RECOMP-R: policy=recompute-all saved 1 values (12 bytes, 0 of activations), recomputed 0 ops
// MINCUT-R: policy=mincut saved 1 values (12 bytes, 0 of activations), recomputed 0 ops
// MINCUT-R: remark: kiln-partition: @sine_joint: cut value {{[0-9]+}} equals the exhaustive optimum over {{[0-9]+}} free nodes
// KEEP-LABEL: func.func @sine_joint(
// KEEP-SAME: kg.joint
// KEEP-LABEL: func.func @sine_fwd(
// KEEP-LABEL: func.func @sine_bwd(
// TABLE: joint policy budget saved primal saved-bytes activation-bytes recomp recomputed-ops
// TABLE-NEXT: sine_joint mincut 1.000 1 1 12 0 0 -
func.func @sine(%x: tensor<3xf32>) -> tensor<3xf32> attributes {kg.differentiate} {
  %0 = kt.sin %x : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests a chain of cheap pointwise ops: save-all (default_partition) saves
// every forward value the backward reads (exp, relu and the output tanh);
// recompute-all and mincut save only the input and recompute the chain (one
// 64-byte input is cheaper than three 64-byte activations).
// SAVE-R: remark: kiln-partition: @chain_joint: policy=save-all saved 3 values (192 bytes, 192 of activations), recomputed 0 ops
// SAVE-LABEL: func.func @chain_fwd(
// SAVE: return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
// RECOMP-R: remark: kiln-partition: @chain_joint: policy=recompute-all saved 1 values (64 bytes, 0 of activations), recomputed 3 ops: kt.exp, kt.relu, kt.tanh
// MINCUT-R: remark: kiln-partition: @chain_joint: policy=mincut saved 1 values (64 bytes, 0 of activations), recomputed 3 ops: kt.exp, kt.relu, kt.tanh
// MINCUT-R: remark: kiln-partition: @chain_joint: cut value {{[0-9]+}} equals the exhaustive optimum
// MINCUT-LABEL: func.func @chain_fwd(
// MINCUT-SAME: %[[X:.+]]: tensor<16xf32>)
// MINCUT: return %{{.+}}, %[[X]] : tensor<16xf32>, tensor<16xf32>
// MINCUT-LABEL: func.func @chain_bwd(
// MINCUT-SAME: %[[S:.+]]: tensor<16xf32>, %{{.+}}: tensor<16xf32>)
// MINCUT-NEXT: kt.exp %[[S]]
// MINCUT-NEXT: kt.relu
// MINCUT-NEXT: kt.tanh
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> attributes {kg.differentiate} {
  %0 = kt.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %1 = kt.relu %0 : (tensor<16xf32>) -> tensor<16xf32>
  %2 = kt.tanh %1 : (tensor<16xf32>) -> tensor<16xf32>
  return %2 : tensor<16xf32>
}

// -----

// Tests that mincut never recomputes a contraction: the matmul result is
// saved and the gelu after it recomputed, while recompute-all recomputes the
// matmul too (full checkpointing) and saves only the primals.
// SAVE-R: remark: kiln-partition: @mm_joint: policy=save-all saved 4 values (1152 bytes, 512 of activations), recomputed 0 ops
// RECOMP-R: remark: kiln-partition: @mm_joint: policy=recompute-all saved 2 values (640 bytes, 0 of activations), recomputed 2 ops: kt.matmul, kt.gelu
// RECOMP-LABEL: func.func @mm_bwd(
// RECOMP-NEXT: kt.matmul
// MINCUT-R: remark: kiln-partition: @mm_joint: policy=mincut saved 3 values (896 bytes, 256 of activations), recomputed 1 ops: kt.gelu
// MINCUT-LABEL: func.func @mm_fwd(
// MINCUT-SAME: %[[X:[^:]+]]: tensor<4x8xf32>, %[[W:[^:]+]]: tensor<8x16xf32>)
// MINCUT-NEXT: %[[M:.+]] = kt.matmul %[[X]], %[[W]]
// MINCUT: return %{{.+}}, %[[X]], %[[W]], %[[M]] :
// MINCUT-LABEL: func.func @mm_bwd(
// MINCUT-SAME: %{{[^:]+}}: tensor<4x8xf32>, %{{[^:]+}}: tensor<8x16xf32>, %[[SM:[^:]+]]: tensor<4x16xf32>, %{{[^:]+}}: tensor<4x16xf32>)
// MINCUT-NOT: kt.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x16xf32>)
// MINCUT: kt.gelu %[[SM]]
func.func @mm(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> attributes {kg.differentiate} {
  %0 = kt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = kt.gelu %0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kt.sin %1 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Tests that a forward random op (dropout) is never recomputed: even
// recompute-all saves its result (and the seed, 8 bytes); the mask the
// dropout gradient draws again from the seed is backward-only and runs once,
// in the backward. Bytes of `?` dims are counted with dynamic-dim-size
// (default 1024), and the report says so.
// RECOMP-R: remark: kiln-partition: @drop_joint: policy=recompute-all saved 3 values (32776 bytes, 16384 of activations) counting each ? dim as 1024, recomputed 1 ops: kt.exp
// MINCUT-R: remark: kiln-partition: @drop_joint: policy=mincut saved 3 values (32776 bytes, 16384 of activations) counting each ? dim as 1024, recomputed 1 ops: kt.exp
// MINCUT-LABEL: func.func @drop_fwd(
// MINCUT-SAME: %[[X:[^:]+]]: tensor<?x4xf32>, %[[SEED:[^:]+]]: tensor<i64>)
// MINCUT: %[[D:.+]] = kt.dropout
// MINCUT: return %{{.+}}, %[[X]], %[[SEED]], %[[D]] :
// MINCUT-LABEL: func.func @drop_bwd(
// MINCUT-SAME: %{{[^:]+}}: tensor<?x4xf32>, %[[BSEED:[^:]+]]: tensor<i64>
// MINCUT: %[[ONES:.+]] = kt.full
// MINCUT-NEXT: kt.dropout %[[ONES]], %[[BSEED]]
func.func @drop(%x: tensor<?x4xf32>, %seed: tensor<i64>) -> tensor<?x4xf32> attributes {kg.differentiate} {
  %0 = kt.exp %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = kt.dropout %0, %seed {p = 0.5 : f64} : (tensor<?x4xf32>, tensor<i64>) -> tensor<?x4xf32>
  %2 = kt.mul %1, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// Tests that a size (`tensor.dim`, an `index`) the backward needs is never
// a saved value: the backward recomputes it from the tensor it measures,
// which is saved instead (every saved value is a tensor; the CPU backend
// passes only tensors between @f_fwd and @f_bwd). Here the backward expands
// the cotangent of the sum to the linear's `?` batch.
// SAVE-LABEL: func.func @dimsize_fwd(
// SAVE-NOT: index
// SAVE: return %{{.+}} : tensor<f32>, tensor<?x3xf32>, tensor<?x2xf32>
// SAVE-LABEL: func.func @dimsize_bwd(
// SAVE-SAME: %{{[^:]+}}: tensor<?x3xf32>, %[[Y:[^:]+]]: tensor<?x2xf32>, %{{[^:]+}}: tensor<f32>)
// SAVE: tensor.dim %[[Y]], %c0
// MINCUT-LABEL: func.func @dimsize_fwd(
// MINCUT-NOT: index
// MINCUT: return %{{.+}} : tensor<f32>, tensor<?x3xf32>, tensor<?x2xf32>
// MINCUT-LABEL: func.func @dimsize_bwd(
// MINCUT-SAME: %{{[^:]+}}: tensor<?x3xf32>, %[[Y:[^:]+]]: tensor<?x2xf32>, %{{[^:]+}}: tensor<f32>)
// MINCUT: tensor.dim %[[Y]], %c0
func.func @dimsize(%x: tensor<?x3xf32> {kg.requires_grad = false}, %w: tensor<2x3xf32>) -> tensor<f32> attributes {kg.differentiate} {
  %0 = kt.linear %x, %w : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  %1 = kt.sum %0 : (tensor<?x2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
