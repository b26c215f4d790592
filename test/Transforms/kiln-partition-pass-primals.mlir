// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=pass-primals' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=pass-primals policy=save-all' | FileCheck %s --check-prefix=SAVE
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=pass-primals report' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition' | FileCheck %s --check-prefix=OFF

// Tests `pass-primals` (the Python training path): a saved primal is not a
// forward result; `kg.saved_primals` on the forward lists the arguments the
// caller passes as the backward's first saved arguments, and the forward's
// `kg.num_saved` counts only what it returns. Without the option the forward
// returns the primal (a copy per call once bufferized).
// CHECK-LABEL: func.func @sine_fwd(
// CHECK-SAME: %[[X:.+]]: tensor<3xf32>) -> tensor<3xf32> attributes {kg.num_outputs = 1 : i64, kg.num_saved = 0 : i64, kg.saved_primals = array<i64: 0>}
// CHECK-NEXT: %[[Y:.+]] = kt.sin %[[X]]
// CHECK-NEXT: return %[[Y]] : tensor<3xf32>
// CHECK-LABEL: func.func @sine_bwd(
// CHECK-SAME: %[[S:.+]]: tensor<3xf32>, %[[CT:.+]]: tensor<3xf32>) -> tensor<3xf32> attributes {kg.num_saved = 1 : i64}
// CHECK-NEXT: %[[C:.+]] = kt.cos %[[S]]
// CHECK-NEXT: %[[G:.+]] = kt.mul %[[CT]], %[[C]]
// CHECK-NEXT: return %[[G]]
// REPORT: remark: kiln-partition: @sine_joint: policy=mincut saved 1 values (12 bytes, 0 of activations) (1 primals passed by the caller, not returned), recomputed 0 ops
// OFF-LABEL: func.func @sine_fwd(
// OFF-SAME: -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64} {
// OFF-NOT: kg.saved_primals
// OFF: return
func.func @sine(%x: tensor<3xf32>) -> tensor<3xf32> attributes {kg.differentiate} {
  %0 = kt.sin %x : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests a matmul + gelu under mincut and save-all: both primals pass through (in
// argument order, before the saved activation), the matmul result is still
// returned; the backward reads them in the order saved_primals, then the
// forward's saved results.
// CHECK-LABEL: func.func @mm_fwd(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32> {kg.requires_grad = true}, %[[W:[^:]+]]: tensor<8x16xf32> {kg.requires_grad = true}) -> (tensor<4x16xf32>, tensor<4x16xf32>) attributes {kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64, kg.saved_primals = array<i64: 0, 1>}
// CHECK-NEXT: %[[M:.+]] = kt.matmul %[[X]], %[[W]]
// CHECK: return %{{.+}}, %[[M]] : tensor<4x16xf32>, tensor<4x16xf32>
// CHECK-LABEL: func.func @mm_bwd(
// CHECK-SAME: %[[SX:[^:]+]]: tensor<4x8xf32>, %[[SW:[^:]+]]: tensor<8x16xf32>, %[[SM:[^:]+]]: tensor<4x16xf32>, %{{.+}}: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>) attributes {kg.num_saved = 3 : i64}
// SAVE-LABEL: func.func @mm_fwd(
// SAVE-SAME: attributes {kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64, kg.saved_primals = array<i64: 0, 1>}
// SAVE-LABEL: func.func @mm_bwd(
// SAVE-SAME: attributes {kg.num_saved = 3 : i64}
// REPORT: remark: kiln-partition: @mm_joint: policy=mincut saved 3 values (896 bytes, 256 of activations) (2 primals passed by the caller, not returned), recomputed 0 ops
func.func @mm(%x: tensor<4x8xf32> {kg.requires_grad = true}, %w: tensor<8x16xf32> {kg.requires_grad = true}) -> tensor<4x16xf32> attributes {kg.differentiate} {
  %0 = kt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = kt.gelu %0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Tests an argument the caller overwrites after the forward (`kg.written`:
// BatchNorm's running statistics, an input the graph mutates): its saved
// value is still a forward result (the value before the write), while the
// other saved primal passes through; the backward takes the passed primal
// first, then the returned one.
// CHECK-LABEL: func.func @written_fwd(
// CHECK-SAME: %[[W:[^:]+]]: tensor<4xf32> {kg.requires_grad = true}, %[[S:[^:]+]]: tensor<4xf32> {kg.requires_grad = false, kg.written}) -> (tensor<f32>, tensor<4xf32>) attributes {kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64, kg.saved_primals = array<i64: 0>}
// CHECK: return %{{.+}}, %[[S]] : tensor<f32>, tensor<4xf32>
// CHECK-LABEL: func.func @written_bwd(
// CHECK-SAME: %[[PW:[^:]+]]: tensor<4xf32>, %[[PS:[^:]+]]: tensor<4xf32>, %{{.+}}: tensor<f32>) -> tensor<4xf32> attributes {kg.num_saved = 2 : i64}
// REPORT: remark: kiln-partition: @written_joint: policy=mincut saved 2 values (32 bytes, 0 of activations) (1 primals passed by the caller, not returned)
func.func @written(%w: tensor<4xf32> {kg.requires_grad = true}, %s: tensor<4xf32> {kg.requires_grad = false, kg.written}) -> tensor<f32> attributes {kg.differentiate} {
  %0 = kt.mul %w, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.mul %0, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = kt.sum %1 : (tensor<4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
