// A pre-norm transformer block (seq 8, d_model 16, 2 heads, MLP 16->32->16):
//
//   h = x + attn(layer_norm(x))          # causal self-attention
//   y = h + W2 gelu(W1 layer_norm(h))    # tanh-approximated GELU
//
// Run it: kiln-run examples/block.mlir --entry=block --random-inputs --seed=0 --print
func.func @block(%x: tensor<8x16xf32>, %ln1_w: tensor<16xf32>, %ln1_b: tensor<16xf32>,
                 %wqkv: tensor<48x16xf32>, %wo: tensor<16x16xf32>,
                 %ln2_w: tensor<16xf32>, %ln2_b: tensor<16xf32>,
                 %w1: tensor<32x16xf32>, %b1: tensor<32xf32>,
                 %w2: tensor<16x32xf32>, %b2: tensor<16xf32>) -> tensor<8x16xf32> {
  // Weights arrive ~N(0, 1); scale them like an initialized layer.
  %s = kt.constant {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %wqkv_s = kt.mul %wqkv, %s : (tensor<48x16xf32>, tensor<f32>) -> tensor<48x16xf32>
  %wo_s = kt.mul %wo, %s : (tensor<16x16xf32>, tensor<f32>) -> tensor<16x16xf32>
  %w1_s = kt.mul %w1, %s : (tensor<32x16xf32>, tensor<f32>) -> tensor<32x16xf32>
  %w2_s = kt.mul %w2, %s : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>

  // Attention.
  %n1 = kt.layer_norm %x weight %ln1_w bias %ln1_b {normalized_shape = [16]}
      : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %qkv = kt.linear %n1, %wqkv_s : (tensor<8x16xf32>, tensor<48x16xf32>) -> tensor<8x48xf32>
  %qkv4 = kt.reshape %qkv {shape = [8, 3, 2, 8]} : (tensor<8x48xf32>) -> tensor<8x3x2x8xf32>
  %heads = kt.permute %qkv4 {dims = [1, 2, 0, 3]} : (tensor<8x3x2x8xf32>) -> tensor<3x2x8x8xf32>
  %q = kt.select %heads {dim = 0, index = 0} : (tensor<3x2x8x8xf32>) -> tensor<2x8x8xf32>
  %k = kt.select %heads {dim = 0, index = 1} : (tensor<3x2x8x8xf32>) -> tensor<2x8x8xf32>
  %v = kt.select %heads {dim = 0, index = 2} : (tensor<3x2x8x8xf32>) -> tensor<2x8x8xf32>
  %att = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true}
      : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %att_t = kt.transpose %att {dim0 = 0, dim1 = 1} : (tensor<2x8x8xf32>) -> tensor<8x2x8xf32>
  %att2 = kt.reshape %att_t {shape = [8, 16]} : (tensor<8x2x8xf32>) -> tensor<8x16xf32>
  %proj = kt.linear %att2, %wo_s : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %h = kt.add %x, %proj : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

  // MLP.
  %n2 = kt.layer_norm %h weight %ln2_w bias %ln2_b {normalized_shape = [16]}
      : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %up = kt.linear %n2, %w1_s, %b1 : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %act = kt.gelu %up {approximate = #kt.approximate<tanh>} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %down = kt.linear %act, %w2_s, %b2 : (tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = kt.add %h, %down : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
