// A classifier's training step for scripts/gpu/run_checks.py: compiled by
// scripts/gpu/prepare.sh through kiln-autodiff + kiln-partition (the
// forward @clf_fwd returns the loss then the saved values; the backward
// @clf_bwd takes the saved values and the loss's cotangent and returns the
// gradients of x, w1, b1, w2, b2) into .gpu/checks/train.so.
func.func @clf(%x: tensor<?x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>, %w2: tensor<10x32xf32>, %b2: tensor<10xf32>, %t: tensor<?xi64> {kg.requires_grad = false}) -> tensor<f32> attributes {kg.differentiate} {
  %h = kt.linear %x, %w1, %b1 : (tensor<?x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %r = kt.relu %h : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %o = kt.linear %r, %w2, %b2 : (tensor<?x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %l = kt.cross_entropy %o, %t {label_smoothing = 0.1 : f64} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
