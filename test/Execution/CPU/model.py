# RUN: %python %s
# REQUIRES: numpy
# A model-like function (hand-written layer norm from mean/var/rsqrt,
# single-head causal attention from matmul/softmax/where, GELU MLP, residual
# adds) through the CPU backend vs the interpreter, static and dynamic
# sequence length.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite

s = CPUSuite(__file__)

BLOCK = """
func.func @block(%x: tensor<S x16xf32>, %wqkv: tensor<48x16xf32>, %w1: tensor<32x16xf32>,
                 %b1: tensor<32xf32>, %w2: tensor<16x32xf32>, %b2: tensor<16xf32>,
                 %mask: tensor<S xSxi1>) -> tensor<S x16xf32> {
  %sc = kt.constant {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %eps = kt.constant {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %ninf = kt.constant {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  // layer norm (no affine)
  %mu = kt.mean %x {dim = [-1], keepdim = true} : (tensor<S x16xf32>) -> tensor<S x1xf32>
  %var = kt.var %x {dim = [-1], keepdim = true, correction = 0.0} : (tensor<S x16xf32>) -> tensor<S x1xf32>
  %xc = kt.sub %x, %mu : (tensor<S x16xf32>, tensor<S x1xf32>) -> tensor<S x16xf32>
  %ve = kt.add %var, %eps : (tensor<S x1xf32>, tensor<f32>) -> tensor<S x1xf32>
  %rs = kt.rsqrt %ve : (tensor<S x1xf32>) -> tensor<S x1xf32>
  %n = kt.mul %xc, %rs : (tensor<S x16xf32>, tensor<S x1xf32>) -> tensor<S x16xf32>
  // attention
  %wq = kt.mul %wqkv, %sc : (tensor<48x16xf32>, tensor<f32>) -> tensor<48x16xf32>
  %qkv = kt.linear %n, %wq : (tensor<S x16xf32>, tensor<48x16xf32>) -> tensor<S x48xf32>
  %q = kt.slice %qkv {dim = 1, start = 0, end = 16} : (tensor<S x48xf32>) -> tensor<S x16xf32>
  %k = kt.slice %qkv {dim = 1, start = 16, end = 32} : (tensor<S x48xf32>) -> tensor<S x16xf32>
  %v = kt.slice %qkv {dim = 1, start = 32, end = 48} : (tensor<S x48xf32>) -> tensor<S x16xf32>
  %kt = kt.transpose %k {dim0 = 0, dim1 = 1} : (tensor<S x16xf32>) -> tensor<16xSxf32>
  %s0 = kt.matmul %q, %kt : (tensor<S x16xf32>, tensor<16xSxf32>) -> tensor<S xSxf32>
  %s1 = kt.mul %s0, %sc : (tensor<S xSxf32>, tensor<f32>) -> tensor<S xSxf32>
  %s2 = kt.where %mask, %s1, %ninf : (tensor<S xSxi1>, tensor<S xSxf32>, tensor<f32>) -> tensor<S xSxf32>
  %p = kt.softmax %s2 {dim = -1} : (tensor<S xSxf32>) -> tensor<S xSxf32>
  %a = kt.matmul %p, %v : (tensor<S xSxf32>, tensor<S x16xf32>) -> tensor<S x16xf32>
  %h = kt.add %x, %a : (tensor<S x16xf32>, tensor<S x16xf32>) -> tensor<S x16xf32>
  // MLP
  %w1s = kt.mul %w1, %sc : (tensor<32x16xf32>, tensor<f32>) -> tensor<32x16xf32>
  %w2s = kt.mul %w2, %sc : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  %up = kt.linear %h, %w1s, %b1 : (tensor<S x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<S x32xf32>
  %act = kt.gelu %up {approximate = #kt.approximate<tanh>} : (tensor<S x32xf32>) -> tensor<S x32xf32>
  %down = kt.linear %act, %w2s, %b2 : (tensor<S x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<S x16xf32>
  %y = kt.add %h, %down : (tensor<S x16xf32>, tensor<S x16xf32>) -> tensor<S x16xf32>
  return %y : tensor<S x16xf32>
}
"""

for seq, dyn in [(8, False), (5, False), (11, True), (1, True)]:
    text = BLOCK.replace("S x", ("?x" if dyn else "%dx" % seq)).replace("xSx", "x?x" if dyn else "x%dx" % seq)
    inputs = [s.randn(seq, 16), s.randn(48, 16), s.randn(32, 16), s.randn(32),
              s.randn(16, 32), s.randn(16), np.tril(np.ones((seq, seq), dtype=np.bool_))]
    s.check("block seq=%d dynamic=%s" % (seq, dyn), text, inputs, entry="block")

s.finish()
