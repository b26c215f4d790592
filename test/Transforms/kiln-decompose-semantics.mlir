// Semantic tests of kiln-decompose (test/lib/pass_semantics.py): every
// decomposable op, before and after the pass, gives the same interpreter
// results on the same random inputs (3 seeds), for several shapes and dtypes.
// The interpreter computes each composite in double; the decompositions
// compute in the input dtype (f32 for f16/bf16), hence the default per-dtype
// tolerances (bf16 results are compared as f32 with --rtol/--atol 2e-2).
//
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --entry=softmax_f32 --entry=softmax_f64 --entry=softmax_f16 --entry=softmax_rank0 --entry=softmax_nan --entry=log_softmax_f32 --entry=log_softmax_f64 --entry=log_softmax_f16 --entry=layer_norm_f32 --entry=layer_norm_f64 --entry=layer_norm_f16 --entry=layer_norm_nob --entry=layer_norm_now --entry=batch_norm_f32 --entry=batch_norm_f64 --entry=batch_norm_2d --entry=batch_norm_f16 | FileCheck %s --check-prefix=NORM
// NORM: 51 passed, 0 failed
//
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --entry=softmax_bf16 --entry=layer_norm_bf16 --entry=gelu_bf16 --rtol=2e-2 --atol=2e-2 | FileCheck %s --check-prefix=BF16
// BF16: 9 passed, 0 failed
//
// Losses: class indices in [0, 3) so that ignore_index = 1 is hit.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --int-range=0,3 --entry=nll_mean --entry=nll_sum --entry=nll_none --entry=nll_weight_mean --entry=nll_ignore_mean --entry=nll_vector --entry=nll_vector_none --entry=nll_spatial --entry=nll_f64_i32 --entry=nll_f16 --entry=ce_mean --entry=ce_weight_ignore --entry=ce_none --entry=ce_sum_ls --entry=ce_mean_ls --entry=ce_weight_ls --entry=ce_none_ls_ignore --entry=ce_spatial_ls --entry=ce_vector --entry=ce_f16 --entry=ce_prob --entry=ce_prob_ls_weight --entry=ce_prob_none --entry=ce_prob_sum | FileCheck %s --check-prefix=LOSS
// LOSS: 72 passed, 0 failed
//
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --entry=sdpa --entry=sdpa_scale --entry=sdpa_causal --entry=sdpa_causal_rect --entry=sdpa_bool_mask --entry=sdpa_float_mask --entry=sdpa_broadcast --entry=sdpa_f64 --entry=sdpa_f16 | FileCheck %s --check-prefix=SDPA
// SDPA: 27 passed, 0 failed
//
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --entry=gelu --entry=gelu_tanh --entry=gelu_f64 --entry=gelu_f16 --entry=silu --entry=silu_f16 --entry=var --entry=var_all --entry=var_keep --entry=var_corr0 --entry=var_corr_big --entry=var_f16 --entry=logsumexp --entry=logsumexp_keep --entry=logsumexp_all --entry=logsumexp_inf --entry=logsumexp_f16 --entry=linear --entry=linear_nobias --entry=linear_1d --entry=linear_f64 | FileCheck %s --check-prefix=MISC
// MISC: 63 passed, 0 failed
//
// Dynamic (`?`) dims: inputs made by the helper, the `?` dims taking 4, 6,
// 4, 6, ... in order.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --input-dims=4,6 --int-range=0,6 --entry=dyn_softmax --entry=dyn_layer_norm --entry=dyn_batch_norm --entry=dyn_var --entry=dyn_logsumexp --entry=dyn_sdpa --entry=dyn_ce_prob_ls --entry=dyn_ce_ls --entry=dyn_nll --entry=dyn_linear --entry=dyn_gelu | FileCheck %s --check-prefix=DYN
// DYN: 33 passed, 0 failed
//
// The decomposed functions compile with the CPU backend (through the
// primitives' lowerings only) and match the interpreter on the composites.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --backend-after=cpu --int-range=0,3 --seeds=1 --entry=nll_none --entry=nll_weight_mean --entry=nll_vector --entry=nll_spatial --entry=nll_f64_i32 --entry=nll_f16 --entry=ce_weight_ignore --entry=ce_weight_ls --entry=ce_none_ls_ignore --entry=ce_spatial_ls --entry=ce_vector --entry=ce_f16 --entry=ce_prob_ls_weight --entry=softmax_nan --entry=layer_norm_f16 --entry=batch_norm_f32 --entry=sdpa_causal --entry=sdpa_bool_mask --entry=sdpa_broadcast --entry=var_corr_big --entry=logsumexp_inf --entry=gelu_f16 --entry=linear_1d | FileCheck %s --check-prefix=CPU
// CPU: 23 passed, 0 failed
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(kiln-decompose)' --backend-after=cpu --input-dims=4,6 --int-range=0,6 --seeds=1 --entry=dyn_softmax --entry=dyn_layer_norm --entry=dyn_batch_norm --entry=dyn_var --entry=dyn_logsumexp --entry=dyn_sdpa --entry=dyn_ce_prob_ls --entry=dyn_ce_ls --entry=dyn_nll --entry=dyn_linear --entry=dyn_gelu | FileCheck %s --check-prefix=CPUDYN
// CPUDYN: 11 passed, 0 failed

//===----------------------------------------------------------------------===//
// softmax, log_softmax, layer_norm, batch_norm
//===----------------------------------------------------------------------===//

func.func @softmax_f32(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = kt.softmax %x {dim = -1} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = kt.softmax %x {dim = 0} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<3x5xf32>
}
func.func @softmax_f64(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %0 = kt.softmax %x {dim = 1} : (tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}
func.func @softmax_f16(%x: tensor<4x7xf16>) -> tensor<4x7xf16> {
  %0 = kt.softmax %x {dim = 1} : (tensor<4x7xf16>) -> tensor<4x7xf16>
  return %0 : tensor<4x7xf16>
}
func.func @softmax_bf16(%x: tensor<4x7xbf16>) -> tensor<4x7xbf16> {
  %0 = kt.softmax %x {dim = 1} : (tensor<4x7xbf16>) -> tensor<4x7xbf16>
  return %0 : tensor<4x7xbf16>
}
func.func @softmax_rank0(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = kt.softmax %x {dim = 0} : (tensor<f32>) -> tensor<f32>
  %1 = kt.log_softmax %x {dim = -1} : (tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
// Large values (no overflow: the max is subtracted), a -inf row (NaN) and a
// NaN (its row is NaN).
func.func @softmax_nan(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %big = kt.full {size = [], value = 100.0, dtype = f32} : () -> tensor<f32>
  %b = kt.mul %x, %big : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %c = kt.constant {value = dense<[[1.0, 1.0, 1.0, 1.0], [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [1.0, 0x7FC00000, 1.0, 1.0]]> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
  %y = kt.mul %b, %c : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %0 = kt.softmax %y {dim = 1} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = kt.log_softmax %y {dim = 1} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3x4xf32>
}
func.func @log_softmax_f32(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = kt.log_softmax %x {dim = 1} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = kt.log_softmax %x {dim = -2} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<3x5xf32>
}
func.func @log_softmax_f64(%x: tensor<6xf64>) -> tensor<6xf64> {
  %0 = kt.log_softmax %x {dim = 0} : (tensor<6xf64>) -> tensor<6xf64>
  return %0 : tensor<6xf64>
}
func.func @log_softmax_f16(%x: tensor<2x9xf16>) -> tensor<2x9xf16> {
  %0 = kt.log_softmax %x {dim = -1} : (tensor<2x9xf16>) -> tensor<2x9xf16>
  return %0 : tensor<2x9xf16>
}
func.func @layer_norm_f32(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [3, 4]} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %1 = kt.layer_norm %x {normalized_shape = [4], eps = 0.5 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
func.func @layer_norm_f64(%x: tensor<5x8xf64>, %w: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<5x8xf64> {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [8], eps = 1.0e-6 : f64} : (tensor<5x8xf64>, tensor<8xf64>, tensor<8xf64>) -> tensor<5x8xf64>
  return %0 : tensor<5x8xf64>
}
func.func @layer_norm_f16(%x: tensor<4x16xf16>, %w: tensor<16xf16>, %b: tensor<16xf16>) -> tensor<4x16xf16> {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [16]} : (tensor<4x16xf16>, tensor<16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}
func.func @layer_norm_bf16(%x: tensor<4x16xbf16>, %w: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = kt.layer_norm %x weight %w {normalized_shape = [16]} : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}
func.func @layer_norm_nob(%x: tensor<3x6xf32>, %w: tensor<6xf32>) -> tensor<3x6xf32> {
  %0 = kt.layer_norm %x weight %w {normalized_shape = [6]} : (tensor<3x6xf32>, tensor<6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}
func.func @layer_norm_now(%x: tensor<3x6xf32>, %b: tensor<6xf32>) -> tensor<3x6xf32> {
  %0 = kt.layer_norm %x bias %b {normalized_shape = [6]} : (tensor<3x6xf32>, tensor<6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}
// running_var must be positive: exp of a normal sample.
func.func @batch_norm_f32(%x: tensor<2x3x4x5xf32>, %m: tensor<3xf32>, %lv: tensor<3xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) {
  %v = kt.exp %lv : (tensor<3xf32>) -> tensor<3xf32>
  %0 = kt.batch_norm %x, %m, %v weight %w bias %b : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %1 = kt.batch_norm %x, %m, %v {eps = 1.0e-3 : f64} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  return %0, %1 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
}
func.func @batch_norm_f64(%x: tensor<2x3x4xf64>, %m: tensor<3xf64>, %lv: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<2x3x4xf64> {
  %v = kt.exp %lv : (tensor<3xf64>) -> tensor<3xf64>
  %0 = kt.batch_norm %x, %m, %v bias %b : (tensor<2x3x4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}
func.func @batch_norm_2d(%x: tensor<5x3xf32>, %m: tensor<3xf32>, %lv: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<5x3xf32> {
  %v = kt.exp %lv : (tensor<3xf32>) -> tensor<3xf32>
  %0 = kt.batch_norm %x, %m, %v weight %w : (tensor<5x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
func.func @batch_norm_f16(%x: tensor<2x3x4xf16>, %m: tensor<3xf16>, %lv: tensor<3xf16>, %w: tensor<3xf16>, %b: tensor<3xf16>) -> tensor<2x3x4xf16> {
  %v = kt.exp %lv : (tensor<3xf16>) -> tensor<3xf16>
  %0 = kt.batch_norm %x, %m, %v weight %w bias %b : (tensor<2x3x4xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3x4xf16>
  return %0 : tensor<2x3x4xf16>
}

//===----------------------------------------------------------------------===//
// nll_loss, cross_entropy
//===----------------------------------------------------------------------===//

func.func @nll_mean(%x: tensor<5x3xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @nll_sum(%x: tensor<5x3xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t {reduction = #kt.reduction<sum>} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @nll_none(%x: tensor<5x3xf32>, %t: tensor<5xi64>, %w: tensor<3xf32>) -> tensor<5xf32> {
  %0 = kt.nll_loss %x, %t, %w {reduction = #kt.reduction<none>, ignore_index = 1} : (tensor<5x3xf32>, tensor<5xi64>, tensor<3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @nll_weight_mean(%x: tensor<6x3xf32>, %t: tensor<6xi64>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t, %w : (tensor<6x3xf32>, tensor<6xi64>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @nll_ignore_mean(%x: tensor<6x3xf32>, %t: tensor<6xi64>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = kt.nll_loss %x, %t, %w {ignore_index = 1} : (tensor<6x3xf32>, tensor<6xi64>, tensor<3xf32>) -> tensor<f32>
  %1 = kt.nll_loss %x, %t {ignore_index = 2} : (tensor<6x3xf32>, tensor<6xi64>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func @nll_vector(%x: tensor<3xf32>, %t: tensor<i64>) -> (tensor<f32>, tensor<f32>) {
  %0 = kt.nll_loss %x, %t : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
  %1 = kt.nll_loss %x, %t {reduction = #kt.reduction<sum>, ignore_index = 0} : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func @nll_vector_none(%x: tensor<3xf32>, %t: tensor<i64>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t, %w {reduction = #kt.reduction<none>} : (tensor<3xf32>, tensor<i64>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @nll_spatial(%x: tensor<2x3x4x2xf32>, %t: tensor<2x4x2xi64>, %w: tensor<3xf32>) -> (tensor<2x4x2xf32>, tensor<f32>) {
  %0 = kt.nll_loss %x, %t, %w {reduction = #kt.reduction<none>, ignore_index = 2} : (tensor<2x3x4x2xf32>, tensor<2x4x2xi64>, tensor<3xf32>) -> tensor<2x4x2xf32>
  %1 = kt.nll_loss %x, %t, %w {ignore_index = 2} : (tensor<2x3x4x2xf32>, tensor<2x4x2xi64>, tensor<3xf32>) -> tensor<f32>
  return %0, %1 : tensor<2x4x2xf32>, tensor<f32>
}
func.func @nll_f64_i32(%x: tensor<4x3xf64>, %t: tensor<4xi32>) -> tensor<f64> {
  %0 = kt.nll_loss %x, %t {ignore_index = 0} : (tensor<4x3xf64>, tensor<4xi32>) -> tensor<f64>
  return %0 : tensor<f64>
}
func.func @nll_f16(%x: tensor<4x3xf16>, %t: tensor<4xi64>, %w: tensor<3xf16>) -> tensor<f16> {
  %0 = kt.nll_loss %x, %t, %w : (tensor<4x3xf16>, tensor<4xi64>, tensor<3xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}
func.func @ce_mean(%x: tensor<5x3xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %t : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @ce_weight_ignore(%x: tensor<5x3xf32>, %t: tensor<5xi64>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %t, %w {ignore_index = 1} : (tensor<5x3xf32>, tensor<5xi64>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @ce_none(%x: tensor<5x3xf32>, %t: tensor<5xi64>) -> tensor<5xf32> {
  %0 = kt.cross_entropy %x, %t {reduction = #kt.reduction<none>} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @ce_sum_ls(%x: tensor<5x3xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %t {reduction = #kt.reduction<sum>, label_smoothing = 0.2 : f64} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @ce_mean_ls(%x: tensor<5x3xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 0.1 : f64, ignore_index = 0} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @ce_weight_ls(%x: tensor<5x3xf32>, %t: tensor<5xi64>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = kt.cross_entropy %x, %t, %w {label_smoothing = 0.3 : f64, ignore_index = 1} : (tensor<5x3xf32>, tensor<5xi64>, tensor<3xf32>) -> tensor<f32>
  %1 = kt.cross_entropy %x, %t, %w {label_smoothing = 1.0 : f64, reduction = #kt.reduction<sum>} : (tensor<5x3xf32>, tensor<5xi64>, tensor<3xf32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func @ce_none_ls_ignore(%x: tensor<5x3xf32>, %t: tensor<5xi64>, %w: tensor<3xf32>) -> tensor<5xf32> {
  %0 = kt.cross_entropy %x, %t, %w {reduction = #kt.reduction<none>, label_smoothing = 0.25 : f64, ignore_index = 2} : (tensor<5x3xf32>, tensor<5xi64>, tensor<3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @ce_spatial_ls(%x: tensor<2x3x4xf32>, %t: tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>) {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 0.1 : f64} : (tensor<2x3x4xf32>, tensor<2x4xi64>) -> tensor<f32>
  %1 = kt.cross_entropy %x, %t {label_smoothing = 0.1 : f64, reduction = #kt.reduction<none>} : (tensor<2x3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return %0, %1 : tensor<f32>, tensor<2x4xf32>
}
func.func @ce_vector(%x: tensor<3xf32>, %t: tensor<i64>, %p: tensor<3xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = kt.cross_entropy %x, %t : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
  %1 = kt.cross_entropy %x, %t {label_smoothing = 0.1 : f64, reduction = #kt.reduction<none>} : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
  %sp = kt.softmax %p {dim = 0} : (tensor<3xf32>) -> tensor<3xf32>
  %2 = kt.cross_entropy %x, %sp {label_smoothing = 0.1 : f64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}
func.func @ce_f16(%x: tensor<4x3xf16>, %t: tensor<4xi64>) -> (tensor<f16>, tensor<f16>) {
  %0 = kt.cross_entropy %x, %t : (tensor<4x3xf16>, tensor<4xi64>) -> tensor<f16>
  %1 = kt.cross_entropy %x, %t {label_smoothing = 0.1 : f64} : (tensor<4x3xf16>, tensor<4xi64>) -> tensor<f16>
  return %0, %1 : tensor<f16>, tensor<f16>
}
func.func @ce_prob(%x: tensor<4x5xf32>, %p: tensor<4x5xf32>) -> tensor<f32> {
  %sp = kt.softmax %p {dim = 1} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %0 = kt.cross_entropy %x, %sp : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @ce_prob_ls_weight(%x: tensor<4x5x2xf64>, %p: tensor<4x5x2xf64>, %w: tensor<5xf64>) -> tensor<f64> {
  %sp = kt.softmax %p {dim = 1} : (tensor<4x5x2xf64>) -> tensor<4x5x2xf64>
  %0 = kt.cross_entropy %x, %sp, %w {label_smoothing = 0.2 : f64} : (tensor<4x5x2xf64>, tensor<4x5x2xf64>, tensor<5xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}
func.func @ce_prob_none(%x: tensor<4x5xf32>, %p: tensor<4x5xf32>) -> tensor<4xf32> {
  %0 = kt.cross_entropy %x, %p {reduction = #kt.reduction<none>, label_smoothing = 0.5 : f64} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @ce_prob_sum(%x: tensor<4x5xf32>, %p: tensor<4x5xf32>, %w: tensor<5xf32>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %p, %w {reduction = #kt.reduction<sum>} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// scaled_dot_product_attention
//===----------------------------------------------------------------------===//

func.func @sdpa(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}
func.func @sdpa_scale(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>) -> tensor<3x2xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v {scale = 0.3 : f64} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @sdpa_causal(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %0 : tensor<2x2x4x8xf32>
}
// L > S: the last rows keep every position; L < S: top-left alignment.
func.func @sdpa_causal_rect(%q: tensor<5x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x2xf32>, %q2: tensor<2x4xf32>) -> (tensor<5x2xf32>, tensor<2x2xf32>) {
  %0 = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<5x4xf32>, tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
  %1 = kt.scaled_dot_product_attention %q2, %k, %v {is_causal = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<5x2xf32>, tensor<2x2xf32>
}
// A boolean mask from random data; a row with every position masked is NaN.
func.func @sdpa_bool_mask(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x3xf32>, %m: tensor<3x5xi1>) -> tensor<2x3x3xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>, tensor<3x5xi1>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}
func.func @sdpa_float_mask(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x3xf32>, %m: tensor<2x1x5xf32>) -> tensor<2x3x3xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>, tensor<2x1x5xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}
// Batch dims broadcast, including the mask's.
func.func @sdpa_broadcast(%q: tensor<1x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<5x3xf32>, %m: tensor<2x2x3x5xf32>) -> tensor<2x2x3x3xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<1x3x4xf32>, tensor<2x5x4xf32>, tensor<5x3xf32>, tensor<2x2x3x5xf32>) -> tensor<2x2x3x3xf32>
  return %0 : tensor<2x2x3x3xf32>
}
func.func @sdpa_f64(%q: tensor<2x4x8xf64>, %k: tensor<2x6x8xf64>, %v: tensor<2x6x5xf64>) -> tensor<2x4x5xf64> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true, scale = 0.5 : f64} : (tensor<2x4x8xf64>, tensor<2x6x8xf64>, tensor<2x6x5xf64>) -> tensor<2x4x5xf64>
  return %0 : tensor<2x4x5xf64>
}
func.func @sdpa_f16(%q: tensor<2x4x8xf16>, %k: tensor<2x6x8xf16>, %v: tensor<2x6x5xf16>) -> tensor<2x4x5xf16> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<2x4x8xf16>, tensor<2x6x8xf16>, tensor<2x6x5xf16>) -> tensor<2x4x5xf16>
  return %0 : tensor<2x4x5xf16>
}

//===----------------------------------------------------------------------===//
// gelu, silu, var, logsumexp, linear
//===----------------------------------------------------------------------===//

func.func @gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.gelu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func @gelu_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.gelu %x {approximate = #kt.approximate<tanh>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func @gelu_f64(%x: tensor<16xf64>) -> (tensor<16xf64>, tensor<16xf64>) {
  %0 = kt.gelu %x : (tensor<16xf64>) -> tensor<16xf64>
  %1 = kt.gelu %x {approximate = #kt.approximate<tanh>} : (tensor<16xf64>) -> tensor<16xf64>
  return %0, %1 : tensor<16xf64>, tensor<16xf64>
}
func.func @gelu_f16(%x: tensor<16xf16>) -> (tensor<16xf16>, tensor<16xf16>) {
  %0 = kt.gelu %x : (tensor<16xf16>) -> tensor<16xf16>
  %1 = kt.gelu %x {approximate = #kt.approximate<tanh>} : (tensor<16xf16>) -> tensor<16xf16>
  return %0, %1 : tensor<16xf16>, tensor<16xf16>
}
func.func @gelu_bf16(%x: tensor<16xbf16>) -> tensor<16xbf16> {
  %0 = kt.gelu %x : (tensor<16xbf16>) -> tensor<16xbf16>
  return %0 : tensor<16xbf16>
}
func.func @silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kt.silu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func @silu_f16(%x: tensor<16xf16>) -> tensor<16xf16> {
  %0 = kt.silu %x : (tensor<16xf16>) -> tensor<16xf16>
  return %0 : tensor<16xf16>
}
func.func @var(%x: tensor<3x4x5xf32>) -> tensor<3x5xf32> {
  %0 = kt.var %x {dim = [1]} : (tensor<3x4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
func.func @var_all(%x: tensor<3x4xf64>) -> (tensor<f64>, tensor<f64>) {
  %0 = kt.var %x : (tensor<3x4xf64>) -> tensor<f64>
  %1 = kt.var %x {dim = []} : (tensor<3x4xf64>) -> tensor<f64>
  return %0, %1 : tensor<f64>, tensor<f64>
}
func.func @var_keep(%x: tensor<3x4x5xf32>) -> tensor<1x4x1xf32> {
  %0 = kt.var %x {dim = [0, -1], keepdim = true} : (tensor<3x4x5xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}
func.func @var_corr0(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = kt.var %x {dim = [1], correction = 0.0} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// N - correction <= 0 divides by 0: inf.
func.func @var_corr_big(%x: tensor<3x2xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = kt.var %x {dim = [1], correction = 2.0} : (tensor<3x2xf32>) -> tensor<3xf32>
  %1 = kt.var %x {dim = [1], correction = 5.0} : (tensor<3x2xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func @var_f16(%x: tensor<4x8xf16>) -> tensor<4xf16> {
  %0 = kt.var %x {dim = [1]} : (tensor<4x8xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
func.func @logsumexp(%x: tensor<3x4x5xf32>) -> tensor<3x5xf32> {
  %0 = kt.logsumexp %x {dim = [1]} : (tensor<3x4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
func.func @logsumexp_keep(%x: tensor<3x4x5xf32>) -> tensor<1x4x1xf32> {
  %0 = kt.logsumexp %x {dim = [0, -1], keepdim = true} : (tensor<3x4x5xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}
func.func @logsumexp_all(%x: tensor<1x4xf64>) -> tensor<f64> {
  %0 = kt.logsumexp %x : (tensor<1x4xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}
// Rows of -inf (-inf), with +inf (+inf), with NaN (NaN), and large values.
func.func @logsumexp_inf(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %c = kt.constant {value = dense<[[0xFF800000, 0xFF800000, 0xFF800000], [1.0, 0x7F800000, 1.0], [1.0, 0x7FC00000, 1.0], [100.0, 100.0, 100.0]]> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %y = kt.mul %x, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = kt.abs %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %z = kt.mul %a, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %0 = kt.logsumexp %z {dim = [1]} : (tensor<4x3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @logsumexp_f16(%x: tensor<4x8xf16>) -> tensor<4xf16> {
  %0 = kt.logsumexp %x {dim = [1]} : (tensor<4x8xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
func.func @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x5x4xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}
func.func @linear_nobias(%x: tensor<5x3xf32>, %w: tensor<4x3xf32>) -> tensor<5x4xf32> {
  %0 = kt.linear %x, %w : (tensor<5x3xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}
func.func @linear_1d(%x: tensor<3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @linear_f64(%x: tensor<5x3xf64>, %w: tensor<4x3xf64>, %b: tensor<4xf64>) -> tensor<5x4xf64> {
  %0 = kt.linear %x, %w, %b : (tensor<5x3xf64>, tensor<4x3xf64>, tensor<4xf64>) -> tensor<5x4xf64>
  return %0 : tensor<5x4xf64>
}

//===----------------------------------------------------------------------===//
// Dynamic dims
//===----------------------------------------------------------------------===//

func.func @dyn_softmax(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = kt.softmax %x {dim = 1} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = kt.log_softmax %x {dim = 0} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}
func.func @dyn_layer_norm(%x: tensor<?x?xf32>, %w: tensor<6xf32>) -> tensor<?x?xf32> {
  %0 = kt.layer_norm %x weight %w {normalized_shape = [6]} : (tensor<?x?xf32>, tensor<6xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @dyn_batch_norm(%x: tensor<?x?x3xf32>, %m: tensor<6xf32>, %lv: tensor<6xf32>) -> tensor<?x?x3xf32> {
  %v = kt.exp %lv : (tensor<6xf32>) -> tensor<6xf32>
  %0 = kt.batch_norm %x, %m, %v : (tensor<?x?x3xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<?x?x3xf32>
  return %0 : tensor<?x?x3xf32>
}
func.func @dyn_var(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<f32>) {
  %0 = kt.var %x {dim = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  %1 = kt.var %x {correction = 0.0} : (tensor<?x?xf32>) -> tensor<f32>
  return %0, %1 : tensor<?xf32>, tensor<f32>
}
func.func @dyn_logsumexp(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = kt.logsumexp %x {dim = [0]} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// A `?` embedding dim: the default scale 1/sqrt(E) is read at run time.
func.func @dyn_sdpa(%q: tensor<?x?xf32>, %k: tensor<?x?xf32>, %v: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// A `?` class count: label smoothing's 1/C is read at run time.
func.func @dyn_ce_prob_ls(%x: tensor<?x?xf32>, %p: tensor<?x?xf32>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %p {label_smoothing = 0.2 : f64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @dyn_ce_ls(%x: tensor<?x?xf32>, %t: tensor<?xi64>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 0.2 : f64, ignore_index = 3} : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @dyn_nll(%x: tensor<?x?xf32>, %t: tensor<?xi64>, %w: tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>) {
  %0 = kt.nll_loss %x, %t, %w {reduction = #kt.reduction<none>, ignore_index = 1} : (tensor<?x?xf32>, tensor<?xi64>, tensor<?xf32>) -> tensor<?xf32>
  %1 = kt.nll_loss %x, %t, %w {ignore_index = 1} : (tensor<?x?xf32>, tensor<?xi64>, tensor<?xf32>) -> tensor<f32>
  return %0, %1 : tensor<?xf32>, tensor<f32>
}
func.func @dyn_linear(%x: tensor<?x?xf32>, %w: tensor<3x6xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<?x?xf32>, tensor<3x6xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @dyn_gelu(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = kt.gelu %x : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
