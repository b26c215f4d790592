// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests each verifier rule of the NN ops (matmul, linear, conv2d,
// conv_transpose2d, max_pool2d, avg_pool2d, their backward ops, embedding).

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{'kt.matmul' op contracting dims differ: 3 vs 4}}
  // expected-error @+1 {{'kt.matmul' op failed to infer returned types}}
  %0 = kt.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_contracting_vec(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'kt.matmul' op contracting dims differ: 3 vs 4}}
  // expected-error @+1 {{'kt.matmul' op failed to infer returned types}}
  %0 = kt.matmul %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @matmul_rank0(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'kt.matmul' op both operands must have rank >= 1, got ranks 0 and 1}}
  // expected-error @+1 {{'kt.matmul' op failed to infer returned types}}
  %0 = kt.matmul %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<f32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x4xf32>) {
  // expected-error @+2 {{'kt.matmul' op operands #0 and #1 are not broadcast-compatible}}
  // expected-error @+1 {{'kt.matmul' op failed to infer returned types}}
  %0 = kt.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x4xf32>) -> tensor<2x2x4xf32>
  return
}

// -----

func.func @matmul_elem(%a: tensor<2x3xf32>, %b: tensor<3x4xf64>) {
  // expected-error @+2 {{'kt.matmul' op operand #1 has element type f64 but operand #0 has f32}}
  // expected-error @+1 {{'kt.matmul' op failed to infer returned types}}
  %0 = kt.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_bool(%a: tensor<2x3xi1>, %b: tensor<3x4xi1>) {
  // expected-error @+1 {{'kt.matmul' op operand #0 must be ranked tensor of}}
  %0 = kt.matmul %a, %b : (tensor<2x3xi1>, tensor<3x4xi1>) -> tensor<2x4xi1>
  return
}

// -----

func.func @matmul_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{'kt.matmul' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{'kt.matmul' op failed to infer returned types}}
  %0 = kt.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) {
  // expected-error @+2 {{'kt.linear' op `input` has 3 features but `weight` expects 5}}
  // expected-error @+1 {{'kt.linear' op failed to infer returned types}}
  %0 = kt.linear %x, %w : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x3xf32>, %w: tensor<3xf32>) {
  // expected-error @+2 {{'kt.linear' op `weight` must have rank 2}}
  // expected-error @+1 {{'kt.linear' op failed to infer returned types}}
  %0 = kt.linear %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<4x3xf32>) {
  // expected-error @+2 {{'kt.linear' op `input` must have rank >= 1}}
  // expected-error @+1 {{'kt.linear' op failed to infer returned types}}
  %0 = kt.linear %x, %w : (tensor<f32>, tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{'kt.linear' op `bias` has 5 elements but `weight` has 4 out_features}}
  // expected-error @+1 {{'kt.linear' op failed to infer returned types}}
  %0 = kt.linear %x, %w, %b : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<5xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_bias_rank(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+2 {{'kt.linear' op `bias` must have rank 1, got rank 2}}
  // expected-error @+1 {{'kt.linear' op failed to infer returned types}}
  %0 = kt.linear %x, %w, %b : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_int(%x: tensor<2x3xi64>, %w: tensor<4x3xi64>) {
  // expected-error @+1 {{'kt.linear' op operand #0 must be ranked tensor of}}
  %0 = kt.linear %x, %w : (tensor<2x3xi64>, tensor<4x3xi64>) -> tensor<2x4xi64>
  return
}

// -----

func.func @conv_input_rank(%x: tensor<8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op expects `input` of rank 3 (CHW) or 4 (NCHW), got rank 2}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w : (tensor<8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<6x6xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op expects `weight` of rank 4 ([O, C/groups, kH, kW]), got rank 3}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<6x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_groups_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op input channels 4 are not divisible by groups 3}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {groups = 3} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @convt_input_rank(%x: tensor<8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op expects `input` of rank 3 (CHW) or 4 (NCHW), got rank 2}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w : (tensor<8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<3x10x10xf32>
  return
}

// -----

func.func @convt_weight_rank(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op expects `weight` of rank 4 ([C_in, C_out/groups, kH, kW]), got rank 3}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w : (tensor<1x6x4x4xf32>, tensor<6x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_stride(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `stride` entries must be >= 1, got [0, 1]}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {stride = [0, 1]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_output_padding_entries(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `output_padding` must have 1 or 2 entries, got 3}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {output_padding = [0, 0, 0]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_output_padding_negative(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `output_padding` entries must be >= 0, got [-1, -1]}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {output_padding = [-1]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_output_padding_large(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `output_padding` must be smaller than `stride` or `dilation`, got output_padding 2, stride 2, dilation 1 in dim 1}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {stride = [2], output_padding = [1, 2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return
}

// -----

func.func @convt_groups(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `groups` must be >= 1, got 0}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {groups = 0} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_groups_channels(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op input channels 6 are not divisible by groups 4}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {groups = 4} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x12x6x6xf32>
  return
}

// -----

func.func @convt_channels(%x: tensor<1x4x4x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op input has 4 channels but `weight` expects 6 (weight is [C_in, C_out/groups, kH, kW])}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w : (tensor<1x4x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_bias(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `bias` has 6 elements but there are 9 output channels}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w, %b {groups = 3} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x9x6x6xf32>
  return
}

// -----

func.func @convt_bias_rank(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<3x1xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op `bias` must have rank 1, got rank 2}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w, %b : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>, tensor<3x1xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

func.func @convt_too_small(%x: tensor<1x6x1x4xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op output size is too small: input 1x6x1x4 gives output size -1 in dim 2}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w {padding = [2]} : (tensor<1x6x1x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x1x2xf32>
  return
}

// -----

func.func @conv_weight_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op input channels / groups = 2 but `weight` expects 4 channels per group}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {groups = 2} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_groups_out(%x: tensor<1x4x8x8xf32>, %w: tensor<5x2x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op output channels 5 are not divisible by groups 2}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {groups = 2} : (tensor<1x4x8x8xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x6x6xf32>
  return
}

// -----

func.func @conv_groups_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op `groups` must be >= 1, got 0}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {groups = 0} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{'kt.conv2d' op `bias` has 5 elements but there are 6 output channels}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<5xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_stride_entries(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op `stride` must have 1 or 2 entries, got 3}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {stride = [1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op `stride` entries must be >= 1, got [0, 1]}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {stride = [0, 1]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_padding_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op `padding` entries must be >= 0, got [-1, -1]}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {padding = [-1]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_dilation_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op `dilation` entries must be >= 1, got [1, 0]}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {dilation = [1, 0]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_too_small(%x: tensor<1x3x4x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{'kt.conv2d' op padded input size 4 in dim 2 is smaller than the dilated kernel size 5}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w {dilation = [2, 1]} : (tensor<1x3x4x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x1x6xf32>
  return
}

// -----

func.func @conv_elem(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf16>) {
  // expected-error @+2 {{'kt.conv2d' op operand #1 has element type f16 but operand #0 has f32}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf16>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @max_pool_rank(%x: tensor<8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op expects `self` of rank 3 (CHW) or 4 (NCHW), got rank 2}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = [2, 2]} : (tensor<8x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @max_pool_kernel_entries(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op `kernel_size` must have 1 or 2 entries, got 0}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = []} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @max_pool_kernel_zero(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op `kernel_size` entries must be >= 1, got [0, 2]}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = [0, 2]} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @max_pool_missing_kernel(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{requires attribute 'kernel_size'}}
  %0 = kt.max_pool2d %x : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @max_pool_stride_zero(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op `stride` entries must be >= 1, got [0, 0]}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = [2, 2], stride = [0]} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @max_pool_dilation_zero(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op `dilation` entries must be >= 1, got [0, 0]}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = [2, 2], dilation = [0]} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @max_pool_padding(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op `padding` must be at most half of `kernel_size`, got padding 2 for kernel size 3}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = [3, 3], padding = [1, 2]} : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  return
}

// -----

func.func @max_pool_too_small(%x: tensor<1x2x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d' op output size is too small: input 1x2x8 gives output size 0 in dim 1}}
  // expected-error @+1 {{'kt.max_pool2d' op failed to infer returned types}}
  %0 = kt.max_pool2d %x {kernel_size = [3, 3]} : (tensor<1x2x8xf32>) -> tensor<1x0x2xf32>
  return
}

// -----

func.func @max_pool_int(%x: tensor<1x8x8xi64>) {
  // expected-error @+1 {{'kt.max_pool2d' op operand #0 must be ranked tensor of}}
  %0 = kt.max_pool2d %x {kernel_size = [2, 2]} : (tensor<1x8x8xi64>) -> tensor<1x4x4xi64>
  return
}

// -----

func.func @avg_pool_divisor(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d' op `divisor_override` must not be 0}}
  // expected-error @+1 {{'kt.avg_pool2d' op failed to infer returned types}}
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2], divisor_override = 0} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @avg_pool_padding(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d' op `padding` must be at most half of `kernel_size`, got padding 2 for kernel size 2}}
  // expected-error @+1 {{'kt.avg_pool2d' op failed to infer returned types}}
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2], padding = [2, 0]} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

// PyTorch implements avg_pool2d for floats and int64 only.
func.func @avg_pool_i32(%x: tensor<1x8x8xi32>) {
  // expected-error @+1 {{'kt.avg_pool2d' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer values, but got 'tensor<1x8x8xi32>'}}
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2]} : (tensor<1x8x8xi32>) -> tensor<1x4x4xi32>
  return
}

// -----

func.func @avg_pool_rank(%x: tensor<2x1x1x8x8xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d' op expects `self` of rank 3 (CHW) or 4 (NCHW), got rank 5}}
  // expected-error @+1 {{'kt.avg_pool2d' op failed to infer returned types}}
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2]} : (tensor<2x1x1x8x8xf32>) -> tensor<2x1x1x4x4xf32>
  return
}

// -----

func.func @avg_pool_too_small(%x: tensor<1x8x1xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d' op output size is too small: input 1x8x1 gives output size 0 in dim 2}}
  // expected-error @+1 {{'kt.avg_pool2d' op failed to infer returned types}}
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2]} : (tensor<1x8x1xf32>) -> tensor<1x4x0xf32>
  return
}

// -----

func.func @avg_pool_kernel_entries(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d' op `kernel_size` must have 1 or 2 entries, got 3}}
  // expected-error @+1 {{'kt.avg_pool2d' op failed to infer returned types}}
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2, 2]} : (tensor<1x8x8xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @embedding_rank(%w: tensor<10xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{'kt.embedding' op `weight` must have rank 2 ([num_embeddings, embedding_dim]), got rank 1}}
  // expected-error @+1 {{'kt.embedding' op failed to infer returned types}}
  %0 = kt.embedding %w, %i : (tensor<10xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @embedding_index_type(%w: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'kt.embedding' op operand #1 must be ranked tensor of}}
  %0 = kt.embedding %w, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @maxbwd_shape(%g: tensor<1x4x3x4xf32>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d_backward' op `grad_output` has shape 1x4x3x4 but the pooling of `self` gives 1x4x4x4}}
  // expected-error @+1 {{'kt.max_pool2d_backward' op failed to infer returned types}}
  %0 = kt.max_pool2d_backward %g, %x {kernel_size = [2, 2]} : (tensor<1x4x3x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @maxbwd_rank(%g: tensor<4x4x4xf32>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d_backward' op `grad_output` must have rank 4 (as `self`), got rank 3}}
  // expected-error @+1 {{'kt.max_pool2d_backward' op failed to infer returned types}}
  %0 = kt.max_pool2d_backward %g, %x {kernel_size = [2, 2]} : (tensor<4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @maxbwd_padding(%g: tensor<1x4x4x4xf32>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d_backward' op `padding` must be at most half of `kernel_size`, got padding 2 for kernel size 2}}
  // expected-error @+1 {{'kt.max_pool2d_backward' op failed to infer returned types}}
  %0 = kt.max_pool2d_backward %g, %x {kernel_size = [2, 2], padding = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @maxbwd_elem(%g: tensor<1x4x4x4xf64>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'kt.max_pool2d_backward' op operand #1 has element type f32 but operand #0 has f64; operands must share an element type (insert kt.cast)}}
  // expected-error @+1 {{'kt.max_pool2d_backward' op failed to infer returned types}}
  %0 = kt.max_pool2d_backward %g, %x {kernel_size = [2, 2]} : (tensor<1x4x4x4xf64>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avgbwd_divisor(%g: tensor<1x4x4x4xf32>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d_backward' op `divisor_override` must not be 0}}
  // expected-error @+1 {{'kt.avg_pool2d_backward' op failed to infer returned types}}
  %0 = kt.avg_pool2d_backward %g, %x {kernel_size = [2, 2], divisor_override = 0} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avgbwd_shape(%g: tensor<1x4x4x4xf32>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'kt.avg_pool2d_backward' op `grad_output` has shape 1x4x4x4 but the pooling of `self` gives 1x4x5x5}}
  // expected-error @+1 {{'kt.avg_pool2d_backward' op failed to infer returned types}}
  %0 = kt.avg_pool2d_backward %g, %x {kernel_size = [2, 2], ceil_mode = true, stride = [2, 2], padding = [1, 1]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// An empty kernel (PyTorch: "kernel size should be greater than zero"); it
// used to verify, and kiln-autodiff's weight gradient then built a
// kt.conv2d that did not (LLVM ERROR: Failed to infer result type(s)).
func.func @conv2d_empty_kernel(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x0x2xf32>) {
  // expected-error @+2 {{'kt.conv2d' op kernel sizes must be >= 1, but `weight` has size 0 in dim 2}}
  // expected-error @+1 {{'kt.conv2d' op failed to infer returned types}}
  %0 = kt.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<3x2x0x2xf32>) -> tensor<1x3x9x7xf32>
  return
}

// -----

func.func @conv_transpose2d_empty_kernel(%x: tensor<1x2x8x8xf32>, %w: tensor<2x3x2x0xf32>) {
  // expected-error @+2 {{'kt.conv_transpose2d' op kernel sizes must be >= 1, but `weight` has size 0 in dim 3}}
  // expected-error @+1 {{'kt.conv_transpose2d' op failed to infer returned types}}
  %0 = kt.conv_transpose2d %x, %w : (tensor<1x2x8x8xf32>, tensor<2x3x2x0xf32>) -> tensor<1x3x9x7xf32>
  return
}
