# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.max_pool2d_backward and kt.avg_pool2d_backward against
# torch.autograd of F.max_pool2d / F.avg_pool2d in float64, on the
# interpreter and the CPU backend: stride, padding, dilation, ceil_mode
# (incl. windows past the input), count_include_pad, divisor_override,
# non-square everything, unbatched, f32/f16/bf16, ties (the first maximum),
# NaN (the last NaN of the window), all -inf windows, dynamic dims and the
# run-time shape check of grad_output.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text, to_bf16, attr_entries

s = Suite(__file__, cpu=True)


def t(v):
    return torch.from_numpy(np.asarray(v, dtype=np.float64))


def attrs(kw):
    return attr_entries(kw, " : i64")


def torch_kw(kw, avg):
    tk = dict(kernel_size=kw["kernel_size"], stride=kw.get("stride") or None,
              padding=kw.get("padding", 0), ceil_mode=kw.get("ceil_mode", False))
    if avg:
        tk.update(count_include_pad=kw.get("count_include_pad", True),
                  divisor_override=kw.get("divisor_override"))
    else:
        tk["dilation"] = kw.get("dilation", 1)
    return tk


def expected(x, g, kw, avg):
    xt = t(x).requires_grad_(True)
    y = (F.avg_pool2d if avg else F.max_pool2d)(xt, **torch_kw(kw, avg))
    (gx,) = torch.autograd.grad(y, xt, t(g))
    return gx.numpy()


def fwd_shape(x, kw, avg):
    return tuple((F.avg_pool2d if avg else F.max_pool2d)(
        t(x), **torch_kw(kw, avg)).shape)


def cast(a, elem):
    if elem == "f16":
        return a.astype(np.float16)
    if elem == "bf16":
        return to_bf16(a.astype(np.float32))
    return a.astype(np.float64 if elem == "f64" else np.float32)


def check(xs, kw, avg, elem="f32", x=None, label=""):
    x = cast(s.randn(*xs, dtype=np.float64) if x is None else x, elem)
    g = cast(s.randn(*fwd_shape(x.astype(np.float64), kw, avg),
                     dtype=np.float64), elem)
    exp = expected(x.astype(np.float64), g.astype(np.float64), kw, avg)
    tol = {}
    if elem == "bf16":
        tol = dict(rtol=2e-2, atol=3e-2)
    elif elem == "f16":
        tol = dict(rtol=3e-3, atol=3e-3)
    op = "kt.avg_pool2d_backward" if avg else "kt.max_pool2d_backward"
    s.check_op(op, [g, x], exp, [ttype(exp.shape, elem)], attrs=attrs(kw),
               elems=[elem, elem], elem=elem,
               label="%s %s %s x%s %s" % (op, label, elem, xs, kw), **tol)


MAX = [
    ((1, 2, 4, 4), dict(kernel_size=[2, 2])),
    ((2, 3, 7, 6), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])),
    ((1, 2, 7, 8), dict(kernel_size=[2, 3], stride=[1, 2], dilation=[2, 1])),
    ((1, 1, 5, 5), dict(kernel_size=[2, 2], stride=[2, 2], ceil_mode=True)),
    ((1, 2, 6, 7), dict(kernel_size=[3, 3], stride=[2, 3], padding=[1, 1],
                        dilation=[2, 2], ceil_mode=True)),
    ((2, 4, 5), dict(kernel_size=[3, 2], stride=[1, 1], padding=[1, 1])),
    ((1, 1, 9, 4), dict(kernel_size=[3, 1], stride=[3, 1])),
    # Static H and W take the stride-phase form on the CPU (windowed argmax,
    # one generic per phase): positions no window reaches (kernel 1, stride
    # 2), a stride larger than the kernel and the input, stride 3 with
    # padding, odd sizes (phases of unequal sizes), resnet's 3x3 s2 p1.
    ((2, 3, 7, 9), dict(kernel_size=[1, 1], stride=[2, 2])),
    ((1, 2, 2, 3), dict(kernel_size=[2, 1], stride=[3, 4], padding=[1, 0])),
    ((1, 2, 11, 10), dict(kernel_size=[4, 3], stride=[3, 3], padding=[2, 1],
                          ceil_mode=True)),
    ((3, 2, 13, 15), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])),
]
AVG = [
    ((1, 2, 4, 4), dict(kernel_size=[2, 2])),
    ((2, 1, 5, 6), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])),
    ((2, 1, 5, 6), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1],
                        count_include_pad=False)),
    ((1, 2, 5, 4), dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 0],
                        divisor_override=5)),
    ((1, 1, 5, 5), dict(kernel_size=[2, 2], stride=[2, 2], ceil_mode=True)),
    ((1, 1, 6, 5), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1],
                        ceil_mode=True, count_include_pad=False)),
    ((2, 4, 4), dict(kernel_size=[2, 2], stride=[1, 1])),
]
for xs, kw in MAX:
    check(xs, kw, avg=False)
    # ties: few distinct values, so many windows have several maxima
    check(xs, kw, avg=False, x=np.round(s.randn(*xs, dtype=np.float64) * 0.6),
          label="ties")
for xs, kw in AVG:
    check(xs, kw, avg=True)
for elem in ["f64", "f16", "bf16"]:
    check((1, 2, 6, 5), dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 1]),
          avg=False, elem=elem)
    check((2, 6, 5), dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 1],
                          count_include_pad=False), avg=True, elem=elem)

# NaN (PyTorch sends the gradient to the window's last NaN) and windows of
# -inf (the first in-bounds position).
x = s.randn(1, 1, 5, 6, dtype=np.float64)
x[0, 0, 0, 1] = np.nan
x[0, 0, 1, 0] = np.nan
x[0, 0, 3:, 3:] = -np.inf
check(x.shape, dict(kernel_size=[2, 2], stride=[1, 1], padding=[1, 1]),
      avg=False, x=x, label="nan/-inf")

# A `?` batch with static H and W (the stride-phase form with dynamic N).
kw = dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])
x = s.randn(2, 3, 9, 8)
g = s.randn(*fwd_shape(x, kw, False)).astype(np.float32)
mlir = func_text(
    "main", ["tensor<?x3x5x4xf32>", "tensor<?x3x9x8xf32>"],
    ["tensor<?x3x9x8xf32>"],
    ["%%0 = kt.max_pool2d_backward %%arg0, %%arg1 {%s} : (tensor<?x3x5x4xf32>, "
     "tensor<?x3x9x8xf32>) -> tensor<?x3x9x8xf32>" % attrs(kw),
     "return %0 : tensor<?x3x9x8xf32>"])
s.check("kt.max_pool2d_backward ? batch", mlir, [g, x],
        expected(x, g, kw, False))

# Dynamic dims and the run-time check of grad_output's shape.
for avg in (False, True):
    op = "kt.avg_pool2d_backward" if avg else "kt.max_pool2d_backward"
    kw = dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])
    x = s.randn(2, 3, 7, 6)
    g = s.randn(*fwd_shape(x, kw, avg)).astype(np.float32)
    mlir = func_text(
        "main", ["tensor<?x3x?x?xf32>", "tensor<?x3x?x?xf32>"],
        ["tensor<?x3x?x?xf32>"],
        ["%%0 = %s %%arg0, %%arg1 {%s} : (tensor<?x3x?x?xf32>, "
         "tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>" % (op, attrs(kw)),
         "return %0 : tensor<?x3x?x?xf32>"])
    s.check("%s dynamic" % op, mlir, [g, x], expected(x, g, kw, avg))
    s.check_error("%s ? grad_output shape" % op, mlir,
                  [s.randn(2, 3, 3, 3), x], "`grad_output` has shape")
s.finish()
