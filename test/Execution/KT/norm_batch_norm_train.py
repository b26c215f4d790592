# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.batch_norm_train (result, save_mean, save_invstd) against
# torch.native_batch_norm(training=True) in float64, and
# kt.batch_norm_backward (grad_input, grad_weight, grad_bias) against
# torch.autograd of F.batch_norm(training=True) in float64, on the
# interpreter and the CPU backend: rank 2, 3, 4, 5; N = 1 with spatial
# dims; weight and bias absent (grad_weight is then the gradient of a weight
# of ones); eps; f32/f64/f16/bf16 (statistics in f32, f64 for f64); a large
# mean (the variance is not E[x^2] - E[x]^2); dynamic N, spatial dims and C;
# the run-time shape checks.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)

TOL = {"f32": dict(rtol=2e-5, atol=2e-5), "f64": dict(rtol=1e-10, atol=1e-10),
       "f16": dict(rtol=4e-3, atol=4e-3), "bf16": dict(rtol=3e-2, atol=3e-2)}


def cast(a, elem):
    if elem == "f16":
        return a.astype(np.float16)
    if elem == "bf16":
        return to_bf16(a.astype(np.float32))
    return a.astype(np.float64 if elem == "f64" else np.float32)


def stat_elem(elem):
    return "f64" if elem == "f64" else "f32"


def t(v):
    return torch.from_numpy(np.asarray(v, dtype=np.float64))


def forward_ref(x, w, b, eps):
    y, m, r = torch.native_batch_norm(t(x), None if w is None else t(w),
                                      None if b is None else t(b), None, None,
                                      True, 0.1, eps)
    return [y.numpy(), m.numpy(), r.numpy()]


def operand_text(w, b, first):
    text, i = first, first.count("%")
    if w is not None:
        text += " weight %%arg%d" % i
        i += 1
    if b is not None:
        text += " bias %%arg%d" % i
    return text


def check_forward(shape, elem="f32", weight=True, bias=True, eps=1e-5,
                  x=None, label=""):
    c = shape[1]
    x = cast(s.randn(*shape, dtype=np.float64) * 2 + 0.5 if x is None else x,
             elem)
    w = cast(s.randn(c, dtype=np.float64), elem) if weight else None
    b = cast(s.randn(c, dtype=np.float64), elem) if bias else None
    f64 = [v.astype(np.float64) if v is not None else None for v in (x, w, b)]
    exp = forward_ref(*f64, eps)
    inputs = [v for v in (x, w, b) if v is not None]
    se = stat_elem(elem)
    s.check_op("kt.batch_norm_train", inputs, exp,
               [ttype(shape, elem), ttype((c,), se), ttype((c,), se)],
               attrs="eps = %.17e : f64" % eps, elems=[elem] * len(inputs),
               operands=operand_text(w, b, "%arg0"),
               label="batch_norm_train %s %s %s w=%s b=%s eps=%g" % (
                   label, elem, shape, weight, bias, eps), **TOL[elem])


def backward_ref(g, x, w, eps):
    """gx, gw, gb of F.batch_norm(training=True) by torch.autograd (weight of
    ones when absent: its gradient is what grad_weight returns)."""
    xt = t(x).requires_grad_(True)
    wt = (t(w) if w is not None else torch.ones(x.shape[1],
                                                  dtype=torch.float64))
    wt.requires_grad_(True)
    bt = torch.zeros(x.shape[1], dtype=torch.float64, requires_grad=True)
    y = F.batch_norm(xt, None, None, wt, bt, True, 0.1, eps)
    gx, gw, gb = torch.autograd.grad(y, (xt, wt, bt), t(g))
    return [gx.numpy(), gw.numpy(), gb.numpy()]


def check_backward(shape, elem="f32", weight=True, eps=1e-5, label=""):
    c = shape[1]
    x = cast(s.randn(*shape, dtype=np.float64) * 1.5 - 0.7, elem)
    g = cast(s.randn(*shape, dtype=np.float64), elem)
    w = cast(s.randn(c, dtype=np.float64), elem) if weight else None
    x64 = x.astype(np.float64)
    # save_mean / save_invstd as the forward stores them (statistics type).
    _, m, r = forward_ref(x64, None, None, eps)
    se = stat_elem(elem)
    m, r = cast(m, se), cast(r, se)
    exp = backward_ref(g.astype(np.float64), x64,
                       None if w is None else w.astype(np.float64), eps)
    inputs = [g, x, m, r] + ([w] if weight else [])
    tol = dict(TOL[elem])
    if elem in ("f16", "bf16"):
        # grad_input of a half input is a difference of terms of size ~1.
        tol = {k: v * 2 for k, v in tol.items()}
    s.check_op("kt.batch_norm_backward", inputs, exp,
               [ttype(shape, elem), ttype((c,), elem), ttype((c,), elem)],
               elems=[elem, elem, se, se] + ([elem] if weight else []),
               operands="%arg0, %arg1, %arg2, %arg3" +
               (" weight %arg4" if weight else ""),
               label="batch_norm_backward %s %s %s w=%s" % (
                   label, elem, shape, weight), **tol)


SHAPES = [(4, 3), (3, 2, 5), (2, 3, 4, 5), (2, 2, 3, 2, 3), (1, 3, 4, 4),
          (1, 2, 7), (5, 1, 2, 2)]
for shape in SHAPES:
    check_forward(shape)
    check_backward(shape)
for weight, bias in [(False, False), (True, False), (False, True)]:
    check_forward((3, 4, 5), weight=weight, bias=bias)
check_backward((3, 4, 5), weight=False)
check_forward((2, 3, 4), eps=0.5)
check_forward((2, 3, 4), eps=1e-3, weight=False)
for elem in ["f64", "f16", "bf16"]:
    check_forward((2, 3, 4, 5), elem=elem)
    check_forward((4, 3), elem=elem, weight=False)
    check_backward((2, 3, 4, 5), elem=elem)
    check_backward((3, 2, 6), elem=elem, weight=False)
# A large mean and a small spread: E[x^2] - E[x]^2 would lose every digit
# in f32 (the variance of 1e4 + N(0, 0.01) is 1e-4).
big = 1e4 + s.randn(4, 2, 8, dtype=np.float64) * 0.01
check_forward((4, 2, 8), x=big, elem="f64", label="large mean")
# In f32 only the statistics: the result is normalized with save_mean
# rounded to f32 (as PyTorch's kernel), whose rounding (~5e-4 at 1e4) is a
# shift of the result relative to a spread of 0.01.
xb = big.astype(np.float32)
_, mb, rb = forward_ref(xb, None, None, 1e-8)
s.check("batch_norm_train large mean f32 statistics", func_text(
    "main", ["tensor<4x2x8xf32>"], ["tensor<2xf32>", "tensor<2xf32>"],
    ["%0:3 = kt.batch_norm_train %arg0 {eps = 1.0e-08 : f64} : "
     "(tensor<4x2x8xf32>) -> (tensor<4x2x8xf32>, tensor<2xf32>, "
     "tensor<2xf32>)",
     "return %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>"]),
    [xb], [mb, rb], **TOL["f32"])

# The variance's shift is each channel's first element x[0, c, 0]: an
# outlier there (far from the mean relative to the spread), a first element
# equal to the rest but one (a near-constant channel), a large mean with
# the first element 6 deviations off.
for elem in ["f32", "f64"]:
    xo = s.randn(4, 3, 8, dtype=np.float64)
    xo[0, 0, 0] = 1e3
    xo[0, 1, 0] = -1e6 if elem == "f64" else -1e4
    xo[:, 2] = 0.25
    xo[3, 2, 7] = 0.5
    check_forward((4, 3, 8), x=xo, elem=elem, label="outlier shift")
    check_forward((1, 3, 1), x=np.array([[[2.0], [-1.0], [1e3]]]), elem=elem,
                  label="one value per channel")
    xl = 100 + s.randn(5, 2, 7, dtype=np.float64) * 0.01
    xl[0, :, 0] = 100 + 0.06
    if elem == "f64":
        check_forward((5, 2, 7), x=xl, elem=elem,
                      label="large mean, shift off")
        continue
    # f32: the statistics only (the result's rounding of save_mean, as in
    # "large mean f32 statistics" above).
    xl = xl.astype(np.float32)
    s.check("batch_norm_train large mean, shift off f32 statistics",
            func_text("main", ["tensor<5x2x7xf32>"],
                      ["tensor<2xf32>", "tensor<2xf32>"],
                      ["%0:3 = kt.batch_norm_train %arg0 {eps = 1.0e-08 : "
                       "f64} : (tensor<5x2x7xf32>) -> (tensor<5x2x7xf32>, "
                       "tensor<2xf32>, tensor<2xf32>)",
                       "return %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>"]),
            [xl], forward_ref(xl, None, None, 1e-8)[1:], **TOL["f32"])
check_backward((1, 3, 5), elem="f64", label="batch 1")

# Dynamic N, spatial dims and C.
x = s.randn(3, 4, 5)
w, b = s.randn(4), s.randn(4)
mlir = func_text(
    "main", ["tensor<?x?x?xf32>", "tensor<?xf32>", "tensor<4xf32>"],
    ["tensor<?x?x?xf32>", "tensor<?xf32>", "tensor<?xf32>"],
    ["%0:3 = kt.batch_norm_train %arg0 weight %arg1 bias %arg2 "
     ": (tensor<?x?x?xf32>, tensor<?xf32>, tensor<4xf32>) -> "
     "(tensor<?x?x?xf32>, tensor<4xf32>, tensor<4xf32>)",
     "%1 = tensor.cast %0#1 : tensor<4xf32> to tensor<?xf32>",
     "%2 = tensor.cast %0#2 : tensor<4xf32> to tensor<?xf32>",
     "return %0#0, %1, %2 : tensor<?x?x?xf32>, tensor<?xf32>, tensor<?xf32>"])
s.check("batch_norm_train dynamic", mlir, [x, w, b],
        forward_ref(x, w, b, 1e-5), **TOL["f32"])
for n in (1, 7):
    xn = s.randn(n, 4, 3)
    s.check("batch_norm_train dynamic N=%d" % n, mlir, [xn, w, b],
            forward_ref(xn, w, b, 1e-5), **TOL["f32"])
s.check_error("batch_norm_train ? weight shape", mlir,
              [x, s.randn(3), b], "weight shape [3] does not match the 4 "
              "channels of input at run time")

g = s.randn(3, 4, 5)
_, m, r = forward_ref(x, None, None, 1e-5)
m, r = m.astype(np.float32), r.astype(np.float32)
bmlir = func_text(
    "main", ["tensor<?x4x?xf32>", "tensor<?x4x?xf32>", "tensor<4xf32>",
             "tensor<?xf32>", "tensor<4xf32>"],
    ["tensor<?x4x?xf32>", "tensor<4xf32>", "tensor<4xf32>"],
    ["%0:3 = kt.batch_norm_backward %arg0, %arg1, %arg2, %arg3 weight %arg4 "
     ": (tensor<?x4x?xf32>, tensor<?x4x?xf32>, tensor<4xf32>, "
     "tensor<?xf32>, tensor<4xf32>) -> "
     "(tensor<?x4x?xf32>, tensor<4xf32>, tensor<4xf32>)",
     "return %0#0, %0#1, %0#2 : tensor<?x4x?xf32>, tensor<4xf32>, "
     "tensor<4xf32>"])
s.check("batch_norm_backward dynamic", bmlir, [g, x, m, r, w],
        backward_ref(g, x, w, 1e-5), **TOL["f32"])
s.check_error("batch_norm_backward ? grad_output shape", bmlir,
              [s.randn(3, 4, 6), x, m, r, w],
              "grad_output shape [3, 4, 6] does not equal input shape "
              "[3, 4, 5] at run time")
s.check_error("batch_norm_backward ? save_invstd shape", bmlir,
              [g, x, m, r[:3], w], "save_invstd shape [3] does not match "
              "the 4 channels of input at run time")
s.finish()
