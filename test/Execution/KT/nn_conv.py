# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.conv2d against torch.nn.functional.conv2d in float64: stride,
# padding, dilation, groups (incl. depthwise), bias / no bias, unbatched input,
# 1-entry attributes, every float dtype, empty batch, dynamic dims and
# run-time errors.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)


def t(v):
    return None if v is None else torch.from_numpy(v.astype(np.float64))


def pair(v):
    return v if isinstance(v, (list, tuple)) else [v]


def attr_text(stride, padding, dilation, groups):
    parts = []
    if stride is not None:
        parts.append("stride = %s" % list(pair(stride)))
    if padding is not None:
        parts.append("padding = %s" % list(pair(padding)))
    if dilation is not None:
        parts.append("dilation = %s" % list(pair(dilation)))
    if groups is not None:
        parts.append("groups = %d" % groups)
    return ", ".join(parts)


def rand(shape, elem):
    x = s.randn(*shape, dtype=np.float64 if elem == "f64" else np.float32)
    if elem == "f16":
        x = x.astype(np.float16)
    if elem == "bf16":
        x = to_bf16(x)
    return x


def check_conv(xs, ws, bias, stride=None, padding=None, dilation=None,
               groups=None, elem="f32"):
    x, w = rand(xs, elem), rand(ws, elem)
    b = rand((ws[0],), elem) if bias else None
    kw = {}
    if stride is not None:
        kw["stride"] = tuple(pair(stride)) * (2 // len(pair(stride)))
    if padding is not None:
        kw["padding"] = tuple(pair(padding)) * (2 // len(pair(padding)))
    if dilation is not None:
        kw["dilation"] = tuple(pair(dilation)) * (2 // len(pair(dilation)))
    if groups is not None:
        kw["groups"] = groups
    exp = F.conv2d(t(x), t(w), t(b), **kw).numpy()
    ins = [x, w] + ([b] if bias else [])
    tol = {}
    if elem == "bf16":
        tol = dict(rtol=2e-2, atol=3e-2)
    elif elem == "f16":
        tol = dict(rtol=3e-3, atol=3e-3)
    s.check_op("kt.conv2d", ins, exp, [ttype(exp.shape, elem)],
               attrs=attr_text(stride, padding, dilation, groups),
               elems=[elem] * len(ins), elem=elem,
               label="conv2d %s x%s w%s bias=%s %s" % (
                   elem, xs, ws, bias, attr_text(stride, padding, dilation, groups)),
               **tol)


CASES = [
    # (input, weight, bias, stride, padding, dilation, groups)
    ((1, 3, 8, 8), (4, 3, 3, 3), True, None, None, None, None),
    ((2, 3, 7, 9), (5, 3, 3, 2), False, [2, 1], [1, 0], None, None),
    ((2, 3, 9, 8), (4, 3, 3, 3), True, [2], [2], [2], None),
    ((1, 4, 10, 11), (6, 2, 3, 3), True, [1, 2], [1, 1], [1, 2], 2),
    ((2, 6, 7, 7), (6, 1, 3, 3), True, None, [1], None, 6),   # depthwise
    ((1, 4, 6, 6), (8, 1, 2, 2), False, [2], None, None, 4),  # depthwise x2
    ((3, 8, 8), (4, 3, 3, 3), True, None, [1, 1], None, None),  # unbatched
    ((3, 8, 8), (6, 1, 3, 3), False, [3, 2], [1], [2, 1], 3),
    ((1, 2, 5, 5), (3, 2, 5, 5), True, None, None, None, None),  # 1x1 output
    ((1, 2, 4, 4), (3, 2, 1, 1), True, [3], None, None, None),   # 1x1 kernel
    ((2, 3, 6, 5), (2, 3, 3, 3), True, [1, 1], [1, 1], [1, 1], 1),  # explicit defaults
]
for xs, ws, bias, st, pd, dl, g in CASES:
    check_conv(xs, ws, bias, st, pd, dl, g)
for elem in ["f64", "f16", "bf16"]:
    check_conv((2, 4, 7, 6), (6, 2, 3, 3), True, [2, 1], [1], None, 2, elem=elem)
    check_conv((3, 6, 6), (3, 3, 2, 2), False, None, None, [2], None, elem=elem)

# A ResNet-ish layer (also a smoke test that the kernel is not slow).
check_conv((1, 16, 28, 28), (16, 16, 3, 3), True, None, [1], None, None)

# NaN / inf propagate through the sums.
x = s.randn(1, 1, 4, 4)
x[0, 0, 1, 1] = np.nan
x[0, 0, 3, 3] = np.inf
w = s.randn(1, 1, 2, 2)
s.check_op("kt.conv2d", [x, w], F.conv2d(t(x), t(w)).numpy(),
           [ttype((1, 1, 3, 3), "f32")], label="conv2d nan/inf")

# Empty batch.
x, w = s.randn(0, 3, 5, 5), s.randn(2, 3, 3, 3)
s.check_op("kt.conv2d", [x, w], F.conv2d(t(x), t(w)).numpy(),
           [ttype((0, 2, 3, 3), "f32")], label="conv2d empty batch")

# Dynamic dims.
x, w, b = s.randn(2, 3, 9, 7), s.randn(4, 3, 3, 3), s.randn(4)
ty = "(tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x?x?xf32>"
mlir = func_text("main", ["tensor<?x3x?x?xf32>", "tensor<4x3x3x3xf32>", "tensor<4xf32>"],
                 ["tensor<?x4x?x?xf32>"],
                 ["%0 = kt.conv2d %arg0, %arg1, %arg2 {stride = [2, 1], padding = [1]} : " + ty,
                  "return %0 : tensor<?x4x?x?xf32>"])
s.check("conv2d dynamic", mlir, [x, w, b],
        F.conv2d(t(x), t(w), t(b), stride=(2, 1), padding=1).numpy())
# Run-time errors: too small an input, channel mismatch (the CPU backend
# checks them too: docs/codegen.md, "Run-time errors in compiled code").
s.check_error("conv2d ? too small", mlir, [s.randn(1, 3, 0, 4), w, b],
              "smaller than the dilated kernel")
ty = "(tensor<1x?x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>"
mlir = func_text("main", ["tensor<1x?x5x5xf32>", "tensor<4x3x3x3xf32>"],
                 ["tensor<1x4x3x3xf32>"],
                 ["%0 = kt.conv2d %arg0, %arg1 : " + ty, "return %0 : tensor<1x4x3x3xf32>"])
s.check_error("conv2d ? channels", mlir, [s.randn(1, 2, 5, 5), w],
              "input has 2 channels")
s.finish()
