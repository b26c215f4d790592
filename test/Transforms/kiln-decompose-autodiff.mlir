// kiln-decompose followed by kiln-autodiff gives the same outputs and
// gradients (the `_joint` functions) as kiln-autodiff alone, which
// differentiates the composites with their own rules: checked with
// test/lib/pass_semantics.py on 3 seeds.
// The composite rules give no gradient to batch_norm's running statistics
// and to the class weights of the losses (non-differentiable in PyTorch's
// derivatives.yaml), while the primitives of a decomposition differentiate
// them: those arguments are marked kg.requires_grad = false.
// RUN: kiln-opt %s -kiln-autodiff -o %t.ad.mlir
// RUN: %python -m pass_semantics %t.ad.mlir --after-file=%s --pipeline='builtin.module(kiln-decompose,kiln-autodiff)' --int-range=0,4 --entry=norms_joint --entry=losses_joint --entry=prob_loss_joint --entry=attention_joint --entry=misc_joint --entry=f64_joint | FileCheck %s
// CHECK: 18 passed, 0 failed
// Dynamic dims (`?` sizes 4, 6, 4, 6, ...).
// RUN: %python -m pass_semantics %t.ad.mlir --after-file=%s --pipeline='builtin.module(kiln-decompose,kiln-autodiff)' --input-dims=4,6 --entry=dynamic_joint | FileCheck %s --check-prefix=DYN
// DYN: 3 passed, 0 failed

func.func @norms(%x: tensor<4x6xf32>, %w: tensor<6xf32>, %b: tensor<6xf32>, %m: tensor<6xf32> {kg.requires_grad = false}, %lv: tensor<6xf32> {kg.requires_grad = false}) -> (tensor<f32>, tensor<4x6xf32>) attributes {kg.differentiate} {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [6]} : (tensor<4x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %1 = kt.softmax %0 {dim = 1} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %2 = kt.log_softmax %0 {dim = 0} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %3 = kt.mul %1, %2 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %4 = kt.sum %3 : (tensor<4x6xf32>) -> tensor<f32>
  %v = kt.exp %lv : (tensor<6xf32>) -> tensor<6xf32>
  %5 = kt.batch_norm %0, %m, %v : (tensor<4x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %4, %5 : tensor<f32>, tensor<4x6xf32>
}

func.func @losses(%x: tensor<5x4xf32>, %t: tensor<5xi64>, %w: tensor<4xf32> {kg.requires_grad = false}) -> (tensor<f32>, tensor<f32>, tensor<5xf32>) attributes {kg.differentiate} {
  %0 = kt.cross_entropy %x, %t, %w {label_smoothing = 0.1 : f64, ignore_index = 2} : (tensor<5x4xf32>, tensor<5xi64>, tensor<4xf32>) -> tensor<f32>
  %lp = kt.log_softmax %x {dim = 1} : (tensor<5x4xf32>) -> tensor<5x4xf32>
  %1 = kt.nll_loss %lp, %t, %w {reduction = #kt.reduction<sum>} : (tensor<5x4xf32>, tensor<5xi64>, tensor<4xf32>) -> tensor<f32>
  %2 = kt.cross_entropy %x, %t {reduction = #kt.reduction<none>, ignore_index = 0} : (tensor<5x4xf32>, tensor<5xi64>) -> tensor<5xf32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<5xf32>
}

func.func @prob_loss(%x: tensor<3x4x2xf32>, %p: tensor<3x4x2xf32>) -> tensor<f32> attributes {kg.differentiate} {
  %sp = kt.softmax %p {dim = 1} : (tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  %0 = kt.cross_entropy %x, %sp {label_smoothing = 0.2 : f64} : (tensor<3x4x2xf32>, tensor<3x4x2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %m: tensor<4x6xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>) attributes {kg.differentiate} {
  %0 = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  %1 = kt.scaled_dot_product_attention %q, %k, %v, %m {scale = 0.3 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>, tensor<4x6xf32>) -> tensor<2x4x5xf32>
  return %0, %1 : tensor<2x4x5xf32>, tensor<2x4x5xf32>
}

func.func @misc(%x: tensor<3x5xf32>, %w: tensor<4x5xf32>, %b: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<4xf32>) attributes {kg.differentiate} {
  %0 = kt.linear %x, %w, %b : (tensor<3x5xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %1 = kt.gelu %0 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = kt.gelu %0 {approximate = #kt.approximate<tanh>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %3 = kt.silu %0 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %4 = kt.var %1 {dim = [1]} : (tensor<3x4xf32>) -> tensor<3xf32>
  %5 = kt.logsumexp %2 {dim = [0]} : (tensor<3x4xf32>) -> tensor<4xf32>
  return %1, %2, %3, %4, %5 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<4xf32>
}

func.func @f64(%x: tensor<4x6xf64>, %w: tensor<6xf64>) -> tensor<f64> attributes {kg.differentiate} {
  %0 = kt.layer_norm %x weight %w {normalized_shape = [6]} : (tensor<4x6xf64>, tensor<6xf64>) -> tensor<4x6xf64>
  %1 = kt.logsumexp %0 : (tensor<4x6xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}

func.func @dynamic(%x: tensor<?x?xf32>, %k: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32>) attributes {kg.differentiate} {
  %0 = kt.softmax %x {dim = 1} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = kt.logsumexp %x : (tensor<?x?xf32>) -> tensor<f32>
  %2 = kt.scaled_dot_product_attention %x, %k, %k {scale = 0.4 : f64} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32>
}
