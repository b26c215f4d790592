// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu | FileCheck %s --check-prefix=LOWERED

// Tests that a kernel returns only the used results of its op: a
// kt.batch_norm_train whose normalization is dead (the partition left it to
// pointwise ops, docs/partition.md) returns its statistics only, and its
// lowering then has no loop writing the normalized tensor.
// CHECK-LABEL: func.func @stats(
// CHECK: %[[S:.+]]:2 = call @kernel_batch_norm_train(%{{.*}}) : (tensor<2x3x4x5xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: return %[[S]]#0, %[[S]]#1
// CHECK: func.func private @kernel_batch_norm_train(%[[X:.+]]: tensor<2x3x4x5xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %{{[^,]+}}, %[[M:[^,]+]], %[[R:[^ ]+]] = kt.batch_norm_train %[[X]]
// CHECK-NEXT: return %[[M]], %[[R]]
// LOWERED-LABEL: llvm.func @kernel_batch_norm_train(
// LOWERED-SAME: -> !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>)>
// No 2x3x4x5 buffer is allocated: the normalized result is not computed.
// LOWERED-NOT: llvm.mlir.constant(120 : index)
// LOWERED: llvm.return
func.func @stats(%x: tensor<2x3x4x5xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y:3 = kt.batch_norm_train %x : (tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y#1, %y#2 : tensor<3xf32>, tensor<3xf32>
}

// -----

// A kernel returns the used results in order (here the first and third);
// one whose results are all unused (kept for what it checks) returns them
// all.
// CHECK-LABEL: func.func @all(
// CHECK: call @kernel_batch_norm_train(%{{.+}}) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[A:.+]]:2 = call @kernel_batch_norm_train_0(%{{.+}}) : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>)
// CHECK: return %[[A]]#0, %[[A]]#1
// CHECK: func.func private @kernel_batch_norm_train_0(
// CHECK-NEXT: %[[Y:[^,]+]], %{{[^,]+}}, %[[R:[^ ]+]] = kt.batch_norm_train
// CHECK-NEXT: return %[[Y]], %[[R]]
func.func @all(%x: tensor<2x3x4xf32>, %z: tensor<2x3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>) {
  %u:3 = kt.batch_norm_train %z : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %y:3 = kt.batch_norm_train %x : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y#0, %y#2 : tensor<2x3x4xf32>, tensor<3xf32>
}
