// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-to-linalg -kiln-form-kernels | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu | FileCheck %s --check-prefix=LLVM

// Kernel formation when results of a group fold away during the lowering
// (the folders of kt.neg, kt.cast, ... run in the dialect conversion): a
// result that folds to a group input is that input after the kt.fusion is
// inlined (it used to be the erased block argument: a crash).

// Tests that neg(neg(x)) beside neg(x) yields the group input %arg0 and one
// kernel for neg(x).
// CHECK-LABEL: func.func @double_neg
// CHECK: %[[K:.*]] = scf.forall
// CHECK: arith.negf
// CHECK-NOT: arith.negf
// CHECK: } {kiln.kernel = "fused_neg_0"}
// CHECK: return %arg0, %[[K]]
// LLVM-LABEL: llvm.func @double_neg
func.func @double_neg(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests an identity kt.cast (f32 -> f32) of a group input beside another
// result of the group.
// CHECK-LABEL: func.func @identity_cast
// CHECK: %[[K:.*]] = scf.forall
// CHECK: math.exp
// CHECK: } {kiln.kernel =
// CHECK: return %[[K]], %arg0
// LLVM-LABEL: llvm.func @identity_cast
func.func @identity_cast(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = kt.exp %x : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = kt.cast %x {dtype = f32} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %2 = kt.add %0, %1 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %2, %1 : tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// Tests a group whose ops all fold away: no kernel, the input is returned.
// CHECK-LABEL: func.func @all_fold
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.
// CHECK: return %arg0, %arg0
// LLVM-LABEL: llvm.func @all_fold
func.func @all_fold(%x: tensor<?x7xf32>) -> (tensor<?x7xf32>, tensor<?x7xf32>) {
  %0 = kt.neg %x : (tensor<?x7xf32>) -> tensor<?x7xf32>
  %1 = kt.neg %0 : (tensor<?x7xf32>) -> tensor<?x7xf32>
  %2 = kt.cast %1 {dtype = f32} : (tensor<?x7xf32>) -> tensor<?x7xf32>
  return %1, %2 : tensor<?x7xf32>, tensor<?x7xf32>
}

// -----

// Tests a hand-written kt.fusion whose results fold to an input (twice, in
// two result positions), to a constant and to another result.
// CHECK-LABEL: func.func @handwritten
// CHECK-DAG: %[[C:.*]] = arith.constant dense<5.000000e+00> : tensor<2xf32>
// CHECK-DAG: %[[K:.*]] = scf.forall
// CHECK: return %arg1, %[[C]], %[[K]], %[[K]], %arg1
// LLVM-LABEL: llvm.func @handwritten
func.func @handwritten(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r:5 = kt.fusion "hand"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    %0 = kt.neg %b : (tensor<2xf32>) -> tensor<2xf32>
    %1 = kt.neg %0 : (tensor<2xf32>) -> tensor<2xf32>
    %c = kt.constant {value = dense<-5.0> : tensor<2xf32>} : () -> tensor<2xf32>
    %2 = kt.neg %c : (tensor<2xf32>) -> tensor<2xf32>
    %3 = kt.exp %a : (tensor<2xf32>) -> tensor<2xf32>
    %4 = kt.cast %3 {dtype = f32} : (tensor<2xf32>) -> tensor<2xf32>
    kt.yield %1, %2, %3, %4, %1 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
