// RUN: kiln-opt %s -kiln-cpu-conv-to-onednn=threads=2 -verify-diagnostics -split-input-file
// REQUIRES: onednn

// kiln.conv_clamp changes what a conv computes (conv, then clamp): a conv
// that carries it and cannot become a kiln_onednn_conv2d_post_f32 call (here
// f64, which kiln-cpu-conv-im2col never marks) is an error, never lowered
// as a plain conv that would drop the clamp.
func.func @f64(%x: memref<1x3x8x8xf64>, %w: memref<4x3x3x3xf64>, %y: memref<1x4x6x6xf64>) {
  // expected-error @below {{kiln-cpu-conv-to-onednn: internal error: a convolution with a folded clamp (kiln.conv_clamp) could not become a oneDNN call}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.conv_impl = "onednn", kiln.conv_clamp = array<f32: 0.0, 6.0>} ins(%x, %w : memref<1x3x8x8xf64>, memref<4x3x3x3xf64>) outs(%y : memref<1x4x6x6xf64>)
  return
}

// -----

// On tensors (not bufferized yet): the same.
func.func @tensors(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %y: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{could not become a oneDNN call}}
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.conv_impl = "onednn", kiln.conv_clamp = array<f32: 0.0, 6.0>} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%y : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// The input's clamp (kiln.conv_input_clamp) likewise.
func.func @input_f64(%x: memref<1x3x8x8xf64>, %w: memref<3x1x3x3xf64>, %y: memref<1x3x6x6xf64>) {
  %xe = memref.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 3, 1, 8, 8] : memref<1x3x8x8xf64> into memref<1x3x1x8x8xf64>
  %we = memref.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [3, 1, 1, 3, 3] : memref<3x1x3x3xf64> into memref<3x1x1x3x3xf64>
  %ye = memref.expand_shape %y [[0], [1, 2], [3], [4]] output_shape [1, 3, 1, 6, 6] : memref<1x3x6x6xf64> into memref<1x3x1x6x6xf64>
  // expected-error @below {{a convolution with a folded clamp (kiln.conv_input_clamp) could not become a oneDNN call}}
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.conv_impl = "onednn", kiln.conv_input_clamp = array<f32: 0.0, 6.0>} ins(%xe, %we : memref<1x3x1x8x8xf64>, memref<3x1x1x3x3xf64>) outs(%ye : memref<1x3x1x6x6xf64>)
  return
}
