// RUN: kiln-opt %s -split-input-file -kiln-fuse | FileCheck %s

// Tests that a chain of 10 pointwise ops of one shape becomes one group: the
// group reads %x and %y once and writes only the last value.
// CHECK-LABEL: func.func @chain10
// CHECK: %[[R:.*]] = kt.fusion "fused_add_neg_exp_mul_tanh_etc_0"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-COUNT-10: kt.
// CHECK-NEXT: kt.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @chain10(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kt.neg %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = kt.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = kt.mul %2, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = kt.tanh %3 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = kt.sigmoid %4 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = kt.relu %5 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = kt.sin %6 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = kt.abs %7 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = kt.sub %8, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %9 : tensor<4x8xf32>
}

// -----

// Tests that an intermediate value used after the group is a second result.
// CHECK-LABEL: func.func @two_outputs
// CHECK: %[[R:.*]]:2 = kt.fusion "fused_exp_neg_0"(%arg0) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @two_outputs(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = kt.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kt.neg %0 : (tensor<8xf32>) -> tensor<8xf32>
  return %1, %0 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a merge creating a cycle is refused: exp and add are linked
// directly and through the transpose (a shape op, not fused); a group of
// exp and add would feed the transpose and read it.
// CHECK-LABEL: func.func @diamond_cycle
// CHECK-NOT: kt.fusion
// CHECK: kt.exp
// CHECK: kt.transpose
// CHECK: kt.add
func.func @diamond_cycle(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kt.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kt.transpose %0 {dim0 = 0, dim1 = 1} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kt.add %0, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// Tests that a diamond of pointwise ops (no outside op on the path) is one
// group.
// CHECK-LABEL: func.func @diamond
// CHECK: kt.fusion "fused_exp_sin_cos_mul_0"(%arg0)
// CHECK-NOT: kt.fusion
func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = kt.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %1 = kt.sin %0 : (tensor<16xf32>) -> tensor<16xf32>
  %2 = kt.cos %0 : (tensor<16xf32>) -> tensor<16xf32>
  %3 = kt.mul %1, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %3 : tensor<16xf32>
}

// -----

// Tests a reduction with its pointwise prologue (x * y) and epilogue over
// the kept rows (mean, then scale): one group.
// CHECK-LABEL: func.func @reduction_prologue_epilogue
// CHECK: %[[R:.*]] = kt.fusion "fused_mul_sum_div_0"(%arg0, %arg1, %{{.*}}) : (tensor<6x10xf32>, tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
// CHECK: kt.mul
// CHECK: kt.sum
// CHECK: kt.div
// CHECK: kt.yield
// CHECK: return %[[R]]
func.func @reduction_prologue_epilogue(%x: tensor<6x10xf32>, %y: tensor<6x10xf32>) -> tensor<6xf32> {
  %n = kt.constant {value = dense<10.0> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.mul %x, %y : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
  %1 = kt.sum %0 {dim = [1]} : (tensor<6x10xf32>) -> tensor<6xf32>
  %2 = kt.div %1, %n : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
  return %2 : tensor<6xf32>
}

// -----

// Tests softmax written out (amax, sub, exp, sum, div over the same rows):
// the two reductions and the pointwise ops are one group.
// CHECK-LABEL: func.func @softmax_written_out
// CHECK: kt.fusion "fused_amax_sub_exp_sum_div_0"(%arg0) : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NOT: kt.fusion
func.func @softmax_written_out(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = kt.amax %x {dim = [1], keepdim = true} : (tensor<5x7xf32>) -> tensor<5x1xf32>
  %1 = kt.sub %x, %0 : (tensor<5x7xf32>, tensor<5x1xf32>) -> tensor<5x7xf32>
  %2 = kt.exp %1 : (tensor<5x7xf32>) -> tensor<5x7xf32>
  %3 = kt.sum %2 {dim = [1], keepdim = true} : (tensor<5x7xf32>) -> tensor<5x1xf32>
  %4 = kt.div %2, %3 : (tensor<5x7xf32>, tensor<5x1xf32>) -> tensor<5x7xf32>
  return %4 : tensor<5x7xf32>
}

// -----

// Tests that reductions over different dims of one tensor are not one
// group (their rows do not line up), while each keeps its epilogue.
// CHECK-LABEL: func.func @reductions_different_dims
// CHECK: kt.fusion "fused_sum_exp_0"
// CHECK: kt.fusion "fused_sum_exp_1"
func.func @reductions_different_dims(%x: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  %0 = kt.sum %x {dim = [1]} : (tensor<4x6xf32>) -> tensor<4xf32>
  %1 = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = kt.sum %x {dim = [0]} : (tensor<4x6xf32>) -> tensor<6xf32>
  %3 = kt.exp %2 : (tensor<6xf32>) -> tensor<6xf32>
  return %1, %3 : tensor<4xf32>, tensor<6xf32>
}

// -----

// Tests horizontal fusion: independent ops reading the same input over the
// same domain become one group with two results (the input is read once).
// CHECK-LABEL: func.func @horizontal
// CHECK: %[[R:.*]]:2 = kt.fusion "fused_exp_sin_0"(%arg0) : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>)
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @horizontal(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = kt.exp %x : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = kt.sin %x : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// Tests that a pointwise op of another shape (a broadcast consumer) is not
// fused with its producer.
// CHECK-LABEL: func.func @broadcast_not_fused
// CHECK-NOT: kt.fusion
func.func @broadcast_not_fused(%x: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = kt.exp %b : (tensor<5xf32>) -> tensor<5xf32>
  %1 = kt.add %x, %0 : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}

// -----

// Tests a contraction with its epilogue: linear, gelu and a residual add.
// CHECK-LABEL: func.func @linear_gelu_residual
// CHECK: %[[R:.*]] = kt.fusion "fused_linear_gelu_add_0"(%arg0, %arg1, %arg2, %arg3) : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK: kt.linear
// CHECK: kt.gelu
// CHECK: kt.add
// CHECK: return %[[R]]
func.func @linear_gelu_residual(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>, %res: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %1 = kt.gelu %0 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = kt.add %1, %res : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// -----

// Tests a pointwise prologue of a matmul's first operand, and that two
// contractions never share a group.
// CHECK-LABEL: func.func @two_matmuls
// CHECK: kt.fusion "fused_relu_matmul_0"
// CHECK: kt.fusion "fused_matmul_tanh_1"
func.func @two_matmuls(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kt.matmul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = kt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = kt.tanh %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Tests that a composite that lowers to several loops (softmax) is a group
// by itself, with its epilogue.
// CHECK-LABEL: func.func @softmax_alone
// CHECK: kt.fusion "fused_softmax_0"(%arg0)
// CHECK: kt.fusion "fused_log_softmax_mul_1"(%arg0, %{{.*}})
func.func @softmax_alone(%x: tensor<4x9xf32>) -> (tensor<4x9xf32>, tensor<4x9xf32>) {
  %c = kt.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.softmax %x {dim = 1} : (tensor<4x9xf32>) -> tensor<4x9xf32>
  %1 = kt.log_softmax %x {dim = 0} : (tensor<4x9xf32>) -> tensor<4x9xf32>
  %2 = kt.mul %1, %c : (tensor<4x9xf32>, tensor<f32>) -> tensor<4x9xf32>
  return %0, %2 : tensor<4x9xf32>, tensor<4x9xf32>
}

// -----

// Tests that cross_entropy is a group by itself (its per-row loops become
// one kernel) and joins nothing: its producer (the logits' scale) and its
// consumer (the loss times 2) stay out of it.
// CHECK-LABEL: func.func @cross_entropy_alone
// CHECK: %[[S:.+]] = kt.mul %arg0
// CHECK-NEXT: %[[L:.+]] = kt.fusion "fused_cross_entropy_0"(%[[S]], %arg1) : (tensor<4x9xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<4x9xf32>, %{{.+}}: tensor<4xi64>):
// CHECK-NEXT: kt.cross_entropy
// CHECK-NEXT: kt.yield
// CHECK: kt.mul %[[L]]
func.func @cross_entropy_alone(%x: tensor<4x9xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %c = kt.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.mul %x, %c : (tensor<4x9xf32>, tensor<f32>) -> tensor<4x9xf32>
  %1 = kt.cross_entropy %0, %t : (tensor<4x9xf32>, tensor<4xi64>) -> tensor<f32>
  %2 = kt.mul %1, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Tests that ? dims fuse when they are the same chain's dims.
// CHECK-LABEL: func.func @dynamic
// CHECK: kt.fusion "fused_exp_mean_0"(%arg0) : (tensor<?x?xf32>) -> tensor<?xf32>
func.func @dynamic(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = kt.exp %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = kt.mean %0 {dim = [-1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}


// -----

// Tests that repeated ops of a group (x.int() written twice, a chain computed
// twice) are merged: the group yields each value once, so its kernel never
// returns one buffer as two results (an in-place kt.slice_scatter or
// kt.scatter of one would change the other).
// CHECK-LABEL: func.func @repeated_ops
// CHECK: %[[R:.*]] = kt.fusion "fused_cast_tanh_0"(%arg0) : (tensor<4xi64>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kt.cast
// CHECK-NEXT: kt.tanh
// CHECK-NEXT: kt.yield
// CHECK: kt.slice_scatter %[[R]]
// CHECK: return %{{.*}}, %[[R]]
func.func @repeated_ops(%x: tensor<4xi64>, %s: tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kt.cast %x {dtype = f32} : (tensor<4xi64>) -> tensor<4xf32>
  %1 = kt.tanh %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = kt.cast %x {dtype = f32} : (tensor<4xi64>) -> tensor<4xf32>
  %3 = kt.tanh %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = kt.slice_scatter %1, %s {dim = 0 : i64, start = 0 : i64, end = 2 : i64} : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %4, %3 : tensor<4xf32>, tensor<4xf32>
}
