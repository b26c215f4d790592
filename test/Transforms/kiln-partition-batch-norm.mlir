// RUN: kiln-opt %s -split-input-file -kiln-autodiff -kiln-partition | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=report' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: kiln-opt %s -split-input-file -kiln-autodiff '-kiln-partition=policy=save-all' | FileCheck %s --check-prefix=SAVE

// Tests that under mincut kt.batch_norm_train is pinned (never recomputed):
// the forward saves its statistics, its normalization becomes pointwise ops
// of its input and statistics (in the op's order: ((x - mean) * invstd) *
// weight + bias), and the backward recomputes only those (with the ReLU6
// mask) from the saved conv output, not the whole batch norm.
// CHECK-LABEL: func.func @cbr_fwd(
// CHECK: %[[C:.+]] = kt.conv2d
// CHECK-NEXT: %{{[^,]+}}, %[[M:[^,]+]], %[[R:[^ ]+]] = kt.batch_norm_train %[[C]] weight %[[G:[^ ]+]] bias %[[B:[^ ]+]]
// CHECK-NEXT: %[[MV:.+]] = kt.reshape %[[M]] {shape = [6, 1, 1]}
// CHECK-NEXT: %[[D:.+]] = kt.sub %[[C]], %[[MV]]
// CHECK-NEXT: %[[RV:.+]] = kt.reshape %[[R]] {shape = [6, 1, 1]}
// CHECK-NEXT: %[[N:.+]] = kt.mul %[[D]], %[[RV]]
// CHECK-NEXT: %[[GV:.+]] = kt.reshape %[[G]] {shape = [6, 1, 1]}
// CHECK-NEXT: %[[S:.+]] = kt.mul %[[N]], %[[GV]]
// CHECK-NEXT: %[[BV:.+]] = kt.reshape %[[B]] {shape = [6, 1, 1]}
// CHECK-NEXT: %[[Y:.+]] = kt.add %[[S]], %[[BV]]
// CHECK-NEXT: kt.clamp %[[Y]]
// CHECK: return %{{.*}}, %[[C]], %[[M]], %[[R]] :
// CHECK-LABEL: func.func @cbr_bwd(
// CHECK-NOT: kt.batch_norm_train
// CHECK: kt.sub
// CHECK: kt.batch_norm_backward
// CHECK-NOT: kt.batch_norm_train
// CHECK: return
// REPORT: remark: kiln-partition: @cbr_joint: policy=mincut saved 8 values ({{.*}}), recomputed 9 ops: kt.reshape, kt.sub, kt.reshape, kt.mul, kt.reshape, kt.mul, kt.reshape, kt.add, kt.clamp
// save-all keeps the op whole (its result is saved).
// SAVE-LABEL: func.func @cbr_fwd(
// SAVE: %[[Y:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = kt.batch_norm_train
// SAVE-NEXT: kt.clamp %[[Y]]
// SAVE-NOT: kt.sub
// SAVE-LABEL: func.func @cbr_bwd(
// SAVE-NOT: kt.batch_norm_train
// SAVE: return
func.func @cbr(%x: tensor<2x3x5x7xf32>, %w1: tensor<6x3x3x3xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>, %w2: tensor<4x6x1x1xf32>) -> tensor<2x4x3x4xf32> attributes {kg.differentiate} {
  %c = kt.conv2d %x, %w1 {stride = [2, 2], padding = [1, 1]} : (tensor<2x3x5x7xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x3x4xf32>
  %y:3 = kt.batch_norm_train %c weight %g bias %b {eps = 1.0e-5} : (tensor<2x6x3x4xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x3x4xf32>, tensor<6xf32>, tensor<6xf32>)
  %r = kt.clamp %y#0 {min = 0.0, max = 6.0} : (tensor<2x6x3x4xf32>) -> tensor<2x6x3x4xf32>
  %o = kt.conv2d %r, %w2 : (tensor<2x6x3x4xf32>, tensor<4x6x1x1xf32>) -> tensor<2x4x3x4xf32>
  return %o : tensor<2x4x3x4xf32>
}

// -----

// Tests that an f16 batch norm (statistics in f32: the op's normalization
// rounds in f32) stays whole and, pinned, is not recomputed: the backward
// gets its result saved instead (tanh is recomputed from it). A dynamic
// batch splits like a static one.
// CHECK-LABEL: func.func @half_fwd(
// CHECK: %[[Y:[^,]+]], %[[M:[^,]+]], %[[R:[^ ]+]] = kt.batch_norm_train
// CHECK-NOT: kt.sub
// CHECK: return
// CHECK-LABEL: func.func @half_bwd(
// CHECK-NOT: kt.batch_norm_train
// CHECK: kt.batch_norm_backward
// REPORT: remark: kiln-partition: @half_joint: policy=mincut saved 4 values ({{.*}}), recomputed 1 ops: kt.tanh{{$}}
func.func @half(%x: tensor<4x3x5xf16>) -> tensor<4x3x5xf16> attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x : (tensor<4x3x5xf16>) -> (tensor<4x3x5xf16>, tensor<3xf32>, tensor<3xf32>)
  %t = kt.tanh %y#0 : (tensor<4x3x5xf16>) -> tensor<4x3x5xf16>
  return %t : tensor<4x3x5xf16>
}

// -----

// CHECK-LABEL: func.func @dyn_fwd(
// CHECK: kt.batch_norm_train
// CHECK: kt.sub %{{.*}} : (tensor<?x3x5xf64>, tensor<3x1xf64>) -> tensor<?x3x5xf64>
// CHECK-LABEL: func.func @dyn_bwd(
// CHECK-NOT: kt.batch_norm_train
// CHECK: kt.batch_norm_backward
func.func @dyn(%x: tensor<?x3x5xf64>) -> tensor<?x3x5xf64> attributes {kg.differentiate} {
  %y:3 = kt.batch_norm_train %x : (tensor<?x3x5xf64>) -> (tensor<?x3x5xf64>, tensor<3xf64>, tensor<3xf64>)
  %t = kt.tanh %y#0 : (tensor<?x3x5xf64>) -> tensor<?x3x5xf64>
  return %t : tensor<?x3x5xf64>
}
