# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.conv_transpose2d against torch.nn.functional.conv_transpose2d in
# float64, on the interpreter and the CPU backend: stride 2/3, padding
# (also larger than dilation * (k - 1), which crops), output_padding,
# dilation, groups (incl. depthwise), bias / no bias, unbatched input,
# non-square everything, every float dtype, empty batch, dynamic dims and
# run-time errors.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)


def t(v):
    return None if v is None else torch.from_numpy(v.astype(np.float64))


def two(v):
    return tuple(v) * (2 // len(v))


def attr_text(stride, padding, output_padding, dilation, groups):
    parts = []
    for name, v in (("stride", stride), ("padding", padding),
                    ("output_padding", output_padding),
                    ("dilation", dilation)):
        if v is not None:
            parts.append("%s = %s" % (name, list(v)))
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


def check(xs, ws, bias, stride=None, padding=None, output_padding=None,
          dilation=None, groups=None, elem="f32"):
    x, w = rand(xs, elem), rand(ws, elem)
    G = groups or 1
    b = rand((ws[1] * G,), elem) if bias else None
    kw = {}
    for name, v in (("stride", stride), ("padding", padding),
                    ("output_padding", output_padding),
                    ("dilation", dilation)):
        if v is not None:
            kw[name] = two(v)
    if groups is not None:
        kw["groups"] = groups
    exp = F.conv_transpose2d(t(x), t(w), t(b), **kw).numpy()
    ins = [x, w] + ([b] if bias else [])
    tol = {}
    if elem == "bf16":
        tol = dict(rtol=2e-2, atol=3e-2)
    elif elem == "f16":
        tol = dict(rtol=3e-3, atol=3e-3)
    attrs = attr_text(stride, padding, output_padding, dilation, groups)
    s.check_op("kt.conv_transpose2d", ins, exp, [ttype(exp.shape, elem)],
               attrs=attrs, elems=[elem] * len(ins), elem=elem,
               label="conv_transpose2d %s x%s w%s bias=%s %s" % (
                   elem, xs, ws, bias, attrs), **tol)


CASES = [
    # (input, weight [C_in, C_out/G, kH, kW], bias, stride, padding,
    #  output_padding, dilation, groups)
    ((1, 3, 4, 4), (3, 2, 3, 3), True, None, None, None, None, None),
    ((2, 4, 5, 3), (4, 3, 3, 2), False, [2, 3], None, None, None, None),
    ((2, 3, 4, 5), (3, 5, 3, 3), True, [2], [1], [1], None, None),
    ((1, 2, 3, 4), (2, 3, 4, 3), True, [3, 2], [2, 1], [2, 1], None, None),
    ((1, 2, 5, 4), (2, 2, 3, 3), True, [1, 2], [0, 1], [1, 0], [2, 1], None),
    ((2, 4, 4, 5), (4, 3, 3, 3), True, [2, 1], [1], None, [1, 2], 2),
    ((1, 6, 5, 5), (6, 1, 3, 3), True, [2], [1], [1], None, 6),  # depthwise
    ((1, 4, 3, 4), (4, 2, 2, 3), False, [3], None, [2, 1], None, 4),  # depthwise x2
    ((3, 4, 5), (3, 2, 3, 3), True, [2], [1], None, None, None),  # unbatched
    ((4, 3, 3), (4, 1, 2, 2), False, [2, 3], None, [1, 2], [2, 1], 2),
    ((1, 2, 6, 6), (2, 3, 3, 3), True, [1], [3, 2], None, None, None),  # crop
    ((1, 2, 6, 7), (2, 2, 3, 2), False, [2], [3, 2], [1], [1], None),
    ((1, 3, 4, 4), (3, 2, 1, 1), True, [2], None, [1], None, None),  # 1x1
    ((1, 2, 3, 3), (2, 2, 3, 3), True, [1], None, [1], [2], None),  # op >= s
    ((2, 3, 4, 3), (3, 2, 3, 3), True, [1], [1], [0], [1], 1),  # defaults
]
for c in CASES:
    check(*c)
for elem in ["f64", "f16", "bf16"]:
    check((2, 4, 3, 4), (4, 3, 3, 3), True, [2, 1], [1], [1, 0], None, 2, elem=elem)
    check((3, 4, 4), (3, 2, 2, 2), False, None, None, None, [2], None, elem=elem)

# A ResNet-ish upsampling layer.
check((1, 16, 14, 14), (16, 8, 4, 4), True, [2], [1])

# NaN / inf propagate through the sums.
x = s.randn(1, 1, 3, 3)
x[0, 0, 1, 1] = np.nan
x[0, 0, 2, 2] = np.inf
w = s.randn(1, 1, 2, 2)
s.check_op("kt.conv_transpose2d", [x, w],
           F.conv_transpose2d(t(x), t(w)).numpy(),
           [ttype((1, 1, 4, 4), "f32")], label="conv_transpose2d nan/inf")

# Empty batch.
x, w = s.randn(0, 3, 4, 4), s.randn(3, 2, 3, 3)
s.check_op("kt.conv_transpose2d", [x, w],
           F.conv_transpose2d(t(x), t(w)).numpy(),
           [ttype((0, 2, 6, 6), "f32")], label="conv_transpose2d empty batch")

# Dynamic dims.
x, w, b = s.randn(2, 3, 5, 4), s.randn(3, 4, 3, 3), s.randn(4)
ty = ("(tensor<?x3x?x?xf32>, tensor<3x4x3x3xf32>, tensor<4xf32>) -> "
      "tensor<?x4x?x?xf32>")
mlir = func_text(
    "main", ["tensor<?x3x?x?xf32>", "tensor<3x4x3x3xf32>", "tensor<4xf32>"],
    ["tensor<?x4x?x?xf32>"],
    ["%0 = kt.conv_transpose2d %arg0, %arg1, %arg2 {stride = [2, 1], "
     "padding = [1], output_padding = [1, 0]} : " + ty,
     "return %0 : tensor<?x4x?x?xf32>"])
s.check("conv_transpose2d dynamic", mlir, [x, w, b],
        F.conv_transpose2d(t(x), t(w), t(b), stride=(2, 1), padding=1,
                           output_padding=(1, 0)).numpy())
# Run-time errors: an empty output, a channel mismatch.
mlir = func_text(
    "main", ["tensor<?x3x?x?xf32>", "tensor<3x4x3x3xf32>"],
    ["tensor<?x4x?x?xf32>"],
    ["%0 = kt.conv_transpose2d %arg0, %arg1 {padding = [3]} : "
     "(tensor<?x3x?x?xf32>, tensor<3x4x3x3xf32>) -> tensor<?x4x?x?xf32>",
     "return %0 : tensor<?x4x?x?xf32>"])
s.check_error("conv_transpose2d ? too small", mlir,
              [s.randn(1, 3, 1, 4), s.randn(3, 4, 3, 3)],
              "output size is too small")
ty = "(tensor<1x?x3x3xf32>, tensor<3x4x3x3xf32>) -> tensor<1x4x5x5xf32>"
mlir = func_text("main", ["tensor<1x?x3x3xf32>", "tensor<3x4x3x3xf32>"],
                 ["tensor<1x4x5x5xf32>"],
                 ["%0 = kt.conv_transpose2d %arg0, %arg1 : " + ty,
                  "return %0 : tensor<1x4x5x5xf32>"])
s.check_error("conv_transpose2d ? channels", mlir,
              [s.randn(1, 2, 3, 3), s.randn(3, 4, 3, 3)],
              "input has 2 channels")
s.finish()
