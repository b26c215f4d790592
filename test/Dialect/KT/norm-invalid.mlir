// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the Norm ops.

func.func @softmax_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.softmax' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.softmax' op failed to infer returned types}}
  %0 = kt.softmax %x {dim = 2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @log_softmax_dim(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{'kt.log_softmax' op dim -2 is out of range for rank 0}}
  // expected-error @+1 {{'kt.log_softmax' op failed to infer returned types}}
  %0 = kt.log_softmax %x {dim = -2} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @softmax_int(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  // expected-error @+1 {{'kt.softmax' op operand #0 must be ranked tensor of}}
  %0 = kt.softmax %x {dim = 1} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @softmax_result(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{'kt.softmax' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x2xf32>'}}
  // expected-error @+1 {{'kt.softmax' op failed to infer returned types}}
  %0 = kt.softmax %x {dim = 1} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @layer_norm_empty(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.layer_norm' op normalized_shape must not be empty}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %0 = kt.layer_norm %x {normalized_shape = []} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_rank(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.layer_norm' op normalized_shape has 2 dims but input has rank 1}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %0 = kt.layer_norm %x {normalized_shape = [1, 3]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @layer_norm_trailing(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.layer_norm' op normalized_shape 2 does not match the trailing dims of input shape 2x3}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %0 = kt.layer_norm %x {normalized_shape = [2]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_weight_shape(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.layer_norm' op weight shape 2x3 must equal normalized_shape 3}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %0 = kt.layer_norm %x weight %w {normalized_shape = [3]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_bias_type(%x: tensor<2x3xf32>, %b: tensor<3xf64>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.layer_norm' op bias has element type f64 but input has f32 (insert kt.cast)}}
  // expected-error @+1 {{'kt.layer_norm' op failed to infer returned types}}
  %0 = kt.layer_norm %x bias %b {normalized_shape = [3]} : (tensor<2x3xf32>, tensor<3xf64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_rank(%x: tensor<3xf32>, %m: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.batch_norm' op input must have rank >= 2 ([N, C, ...]) but has rank 1}}
  // expected-error @+1 {{'kt.batch_norm' op failed to infer returned types}}
  %0 = kt.batch_norm %x, %m, %m : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3xf32>, %m: tensor<3xf32>, %v: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.batch_norm' op running_var must have shape [3] but has shape 4}}
  // expected-error @+1 {{'kt.batch_norm' op failed to infer returned types}}
  %0 = kt.batch_norm %x, %m, %v : (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_type(%x: tensor<2x3xf32>, %m: tensor<3xf32>, %w: tensor<3xf16>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.batch_norm' op weight has element type f16 but input has f32}}
  // expected-error @+1 {{'kt.batch_norm' op failed to infer returned types}}
  %0 = kt.batch_norm %x, %m, %m weight %w : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bnt_rank(%x: tensor<3xf32>) {
  // expected-error @+2 {{'kt.batch_norm_train' op input must have rank >= 2 ([N, C, ...]) but has rank 1}}
  // expected-error @+1 {{'kt.batch_norm_train' op failed to infer returned types}}
  %0:3 = kt.batch_norm_train %x : (tensor<3xf32>) -> (tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @bnt_weight_shape(%x: tensor<2x3xf32>, %w: tensor<4xf32>) {
  // expected-error @+2 {{'kt.batch_norm_train' op weight must have shape [3] but has shape 4}}
  // expected-error @+1 {{'kt.batch_norm_train' op failed to infer returned types}}
  %0:3 = kt.batch_norm_train %x weight %w : (tensor<2x3xf32>, tensor<4xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnt_bias_type(%x: tensor<2x3xf32>, %b: tensor<3xf64>) {
  // expected-error @+2 {{'kt.batch_norm_train' op bias has element type f64 but input has f32}}
  // expected-error @+1 {{'kt.batch_norm_train' op failed to infer returned types}}
  %0:3 = kt.batch_norm_train %x bias %b : (tensor<2x3xf32>, tensor<3xf64>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnt_stat_type(%x: tensor<2x3xf16>) {
  // expected-error @+2 {{'kt.batch_norm_train' op failed to infer returned types}}
  // expected-error @+1 {{'kt.batch_norm_train' op inferred type(s) 'tensor<2x3xf16>', 'tensor<3xf32>', 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf16>', 'tensor<3xf16>', 'tensor<3xf16>'}}
  %0:3 = kt.batch_norm_train %x : (tensor<2x3xf16>) -> (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>)
  return
}

// -----

func.func @bnb_rank(%x: tensor<3xf32>, %m: tensor<3xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op input must have rank >= 2 ([N, C, ...]) but has rank 1}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_grad_shape(%g: tensor<2x3x5xf32>, %x: tensor<2x3x4xf32>, %m: tensor<3xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op grad_output shape 2x3x5 must equal input shape 2x3x4}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %g, %x, %m, %m : (tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_grad_type(%g: tensor<2x3xf64>, %x: tensor<2x3xf32>, %m: tensor<3xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op grad_output has element type f64 but input has f32}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %g, %x, %m, %m : (tensor<2x3xf64>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_bias_no_activation(%x: tensor<2x3xf32>, %m: tensor<3xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op bias is read only by an activation's mask but activation is none}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m bias %m : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_bias_shape(%x: tensor<2x3xf32>, %m: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op bias}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m bias %b {activation = #kt.activation<relu>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_bias_type(%x: tensor<2x3xf32>, %m: tensor<3xf32>, %b: tensor<3xf64>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op bias}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m bias %b {activation = #kt.activation<relu6>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_bad_activation(%x: tensor<2x3xf32>, %m: tensor<3xf32>) {
  // expected-error @+2 {{expected ::kiln::kt::NormActivation to be one of: none, relu, relu6}}
  // expected-error @+1 {{failed to parse KT_NormActivationAttr parameter 'value'}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m {activation = #kt.activation<gelu>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_stat_type(%x: tensor<2x3xf16>, %m: tensor<3xf16>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op save_mean has element type f16 but must have f32 (the statistics type of a f16 input)}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m : (tensor<2x3xf16>, tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>) -> (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>)
  return
}

// -----

func.func @bnb_invstd_shape(%x: tensor<2x3xf32>, %m: tensor<3xf32>, %r: tensor<2xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op save_invstd must have shape [3] but has shape 2}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %r : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @bnb_weight_type(%x: tensor<2x3xf64>, %m: tensor<3xf64>, %w: tensor<3xf32>) {
  // expected-error @+2 {{'kt.batch_norm_backward' op weight has element type f32 but input has f64}}
  // expected-error @+1 {{'kt.batch_norm_backward' op failed to infer returned types}}
  %0:3 = kt.batch_norm_backward %x, %x, %m, %m weight %w : (tensor<2x3xf64>, tensor<2x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf32>) -> (tensor<2x3xf64>, tensor<3xf64>, tensor<3xf64>)
  return
}

// -----

func.func @nll_loss_rank0(%x: tensor<f32>, %t: tensor<i64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.nll_loss' op input must have rank >= 1 but has rank 0}}
  // expected-error @+1 {{'kt.nll_loss' op failed to infer returned types}}
  %0 = kt.nll_loss %x, %t : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nll_loss_target_shape(%x: tensor<4x3x5xf32>, %t: tensor<4x3xi64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.nll_loss' op target shape 4x3 does not match input shape 4x3x5 (expected 4x5)}}
  // expected-error @+1 {{'kt.nll_loss' op failed to infer returned types}}
  %0 = kt.nll_loss %x, %t : (tensor<4x3x5xf32>, tensor<4x3xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nll_loss_float_target(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'kt.nll_loss' op operand #1 must be ranked tensor of}}
  %0 = kt.nll_loss %x, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nll_loss_weight(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+2 {{'kt.nll_loss' op weight must have shape [3] but has shape 4}}
  // expected-error @+1 {{'kt.nll_loss' op failed to infer returned types}}
  %0 = kt.nll_loss %x, %t, %w : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nll_loss_result_none(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.nll_loss' op inferred type(s) 'tensor<4xf32>' are incompatible}}
  // expected-error @+1 {{'kt.nll_loss' op failed to infer returned types}}
  %0 = kt.nll_loss %x, %t {reduction = #kt.reduction<none>} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_prob_shape(%x: tensor<4x3xf32>, %p: tensor<4x2xf32>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cross_entropy' op probability target shape 4x2 must equal input shape 4x3}}
  // expected-error @+1 {{'kt.cross_entropy' op failed to infer returned types}}
  %0 = kt.cross_entropy %x, %p : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_prob_type(%x: tensor<4x3xf32>, %p: tensor<4x3xf64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cross_entropy' op probability target has element type f64 but input has f32}}
  // expected-error @+1 {{'kt.cross_entropy' op failed to infer returned types}}
  %0 = kt.cross_entropy %x, %p : (tensor<4x3xf32>, tensor<4x3xf64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_prob_ignore(%x: tensor<4x3xf32>, %p: tensor<4x3xf32>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cross_entropy' op ignore_index (0) is not supported for probability targets}}
  // expected-error @+1 {{'kt.cross_entropy' op failed to infer returned types}}
  %0 = kt.cross_entropy %x, %p {ignore_index = 0} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_smoothing(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cross_entropy' op label_smoothing must be in [0, 1] but is 1.5}}
  // expected-error @+1 {{'kt.cross_entropy' op failed to infer returned types}}
  %0 = kt.cross_entropy %x, %t {label_smoothing = 1.5} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_target_shape(%x: tensor<3xf32>, %t: tensor<1xi64>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cross_entropy' op target shape 1 does not match input shape 3 (expected [] (rank 0))}}
  // expected-error @+1 {{'kt.cross_entropy' op failed to infer returned types}}
  %0 = kt.cross_entropy %x, %t : (tensor<3xf32>, tensor<1xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @sdpa_rank(%q: tensor<8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op query must have rank >= 2 but has rank 1}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<8xf32>, tensor<6x8xf32>, tensor<6x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @sdpa_type(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf64>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op value has element type f64 but input has f32}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf64>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @sdpa_embedding(%q: tensor<4x8xf32>, %k: tensor<6x7xf32>, %v: tensor<6x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op query and key embedding dims differ: 8 vs 7}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<4x8xf32>, tensor<6x7xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @sdpa_seq(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<5x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op key and value sequence lengths differ: 6 vs 5}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<5x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @sdpa_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x6x8xf32>, %v: tensor<6x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op operands #0 and #1 are not broadcast-compatible}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v : (tensor<2x4x8xf32>, tensor<3x6x8xf32>, tensor<6x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @sdpa_mask_type(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %m: tensor<4x6xi64>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op attn_mask must have element type i1 or f32 but has i64}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf32>, tensor<4x6xi64>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @sdpa_mask_shape(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %m: tensor<4x5xi1>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op attn_mask shape 4x5 does not broadcast to [..., L, S] = [..., 4, 6]}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf32>, tensor<4x5xi1>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @sdpa_causal_mask(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %m: tensor<4x6xi1>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op is_causal and attn_mask cannot both be given}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v, %m {is_causal = true} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf32>, tensor<4x6xi1>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @sdpa_dropout(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kt.scaled_dot_product_attention' op dropout_p must be 0 (dropout needs a seed: apply kt.dropout explicitly), got 1.000000e-01}}
  // expected-error @+1 {{'kt.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = kt.scaled_dot_product_attention %q, %k, %v {dropout_p = 0.1} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
