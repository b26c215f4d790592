# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kiln-autodiff on a small MLP (linear -> gelu -> linear ->
# cross_entropy): the loss and the gradients of every parameter and of the
# input, from the joint function run by kiln-run, against torch.autograd on
# the same f64 inputs and against finite differences.

import numpy as np
import torch
from autodiff_helpers import GradSuite

s = GradSuite(__file__)
F = torch.nn.functional

N, D, H, C = 4, 3, 5, 3
x = s.randn(N, D, dtype=np.float64)
w1, b1 = s.randn(H, D, dtype=np.float64), s.randn(H, dtype=np.float64)
w2, b2 = s.randn(C, H, dtype=np.float64), s.randn(C, dtype=np.float64)
t = s.randint(0, C, N)

body = [
    "%0 = kt.linear %arg0, %arg1, %arg2 : (tensor<4x3xf64>, tensor<5x3xf64>, tensor<5xf64>) -> tensor<4x5xf64>",
    "%1 = kt.gelu %0 : (tensor<4x5xf64>) -> tensor<4x5xf64>",
    "%2 = kt.linear %1, %arg3, %arg4 : (tensor<4x5xf64>, tensor<3x5xf64>, tensor<3xf64>) -> tensor<4x3xf64>",
    "%3 = kt.cross_entropy %2, %arg5 : (tensor<4x3xf64>, tensor<4xi64>) -> tensor<f64>",
    "return %3 : tensor<f64>",
]


def torch_mlp(x_, w1_, b1_, w2_, b2_, t_):
    h = F.gelu(F.linear(x_, w1_, b1_))
    return F.cross_entropy(F.linear(h, w2_, b2_), t_)


s.gradcheck("mlp", body, [x, w1, b1, w2, b2, t], ["tensor<f64>"], torch_mlp)
# Parameters only (the input does not require grad).
s.gradcheck("mlp params only", body, [x, w1, b1, w2, b2, t], ["tensor<f64>"],
            torch_mlp, requires=[False, True, True, True, True, False])
s.finish()
