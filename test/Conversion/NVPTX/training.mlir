// REQUIRES: ptxas
// RUN: kiln-opt %s -split-input-file -kiln-autodiff -kiln-partition -o %t.kt.mlir
// RUN: FileCheck %s --check-prefix=KT < %t.kt.mlir
// RUN: kiln-opt %t.kt.mlir -split-input-file -kiln-nvptx='emit=isa' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: rm -rf %t.ptx && %python %S/../../../scripts/extract_ptx.py %t.mlir %t.ptx
// RUN: for f in %t.ptx/*.ptx; do ptxas -arch=sm_90a $f -o /dev/null || exit 1; done

// A small classifier's training step (kiln-autodiff + kiln-partition:
// forward and backward graphs) compiles through kiln-nvptx end to end, and
// ptxas assembles every kernel. Before gpu28 both graphs were refused: "the
// host uses a value this op computes from device memory" (the loss's mean,
// the 0-d reads of its target check).

// KT-LABEL: func.func @clf_fwd(
// KT: kt.dropout
// KT: kt.cross_entropy
// KT-LABEL: func.func @clf_bwd(
// KT: kt.dropout
// CHECK-LABEL: llvm.func @clf_fwd(
// CHECK: gpu.launch_func
// CHECK: llvm.call @kiln_cpu_runtime_error
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @clf_bwd(
// CHECK: gpu.launch_func
// CHECK: llvm.return
func.func @clf(%x: tensor<8x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>, %w2: tensor<10x32xf32>, %b2: tensor<10xf32>, %t: tensor<8xi64> {kg.requires_grad = false}, %seed: tensor<i64> {kg.requires_grad = false}) -> tensor<f32> attributes {kg.differentiate} {
  %h = kt.linear %x, %w1, %b1 : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = kt.relu %h : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %d = kt.dropout %r, %seed {p = 0.25} : (tensor<8x32xf32>, tensor<i64>) -> tensor<8x32xf32>
  %o = kt.linear %d, %w2, %b2 : (tensor<8x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %l = kt.cross_entropy %o, %t {label_smoothing = 0.1 : f64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Dynamic batch, a class weight and ignore_index, log_softmax + nll_loss.
// KT-LABEL: func.func @clf_nll_fwd(
// KT: kt.nll_loss
// CHECK-LABEL: llvm.func @clf_nll_fwd(
// CHECK: llvm.call @kiln_cpu_runtime_error
// CHECK-LABEL: llvm.func @clf_nll_bwd(
// CHECK: gpu.launch_func
func.func @clf_nll(%x: tensor<?x16xf32>, %w: tensor<16x10xf32>, %t: tensor<?xi64> {kg.requires_grad = false}, %cw: tensor<10xf32> {kg.requires_grad = false}) -> tensor<f32> attributes {kg.differentiate} {
  %o = kt.matmul %x, %w : (tensor<?x16xf32>, tensor<16x10xf32>) -> tensor<?x10xf32>
  %lp = kt.log_softmax %o {dim = 1} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %l = kt.nll_loss %lp, %t, %cw {ignore_index = 3} : (tensor<?x10xf32>, tensor<?xi64>, tensor<10xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
