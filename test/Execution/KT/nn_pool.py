# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.max_pool2d and kt.avg_pool2d against torch.nn.functional in
# float64: stride, padding, dilation, ceil_mode (incl. windows that run past
# the padded input), count_include_pad, divisor_override, odd sizes,
# unbatched input, NaN propagation, every float dtype and dynamic dims.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text, to_bf16
from kiln_testing import attr_entries

s = Suite(__file__, cpu=True)


def t(v):
    return torch.from_numpy(v.astype(np.float64))


def exp2(v):
    v = list(v)
    return tuple(v * 2) if len(v) == 1 else tuple(v)


def rand(shape, elem):
    x = s.randn(*shape, dtype=np.float64 if elem == "f64" else np.float32)
    if elem == "f16":
        x = x.astype(np.float16)
    if elem == "bf16":
        x = to_bf16(x)
    return x


def attrs(**kw):
    return attr_entries(kw)


def check_max(x, elem, kernel, stride=None, padding=None, dilation=None,
              ceil_mode=None, label=""):
    kw = dict(kernel_size=exp2(kernel))
    if stride:
        kw["stride"] = exp2(stride)
    if padding is not None:
        kw["padding"] = exp2(padding)
    if dilation is not None:
        kw["dilation"] = exp2(dilation)
    if ceil_mode is not None:
        kw["ceil_mode"] = ceil_mode
    exp = F.max_pool2d(t(x), **kw).numpy()
    a = attrs(kernel_size=kernel, stride=stride, padding=padding,
              dilation=dilation, ceil_mode=ceil_mode)
    s.check_op("kt.max_pool2d", [x], exp, [ttype(exp.shape, elem)], attrs=a,
               elems=[elem], elem=elem,
               label="max_pool2d %s %s {%s} %s" % (elem, x.shape, a, label))


def check_avg(x, elem, kernel, stride=None, padding=None, ceil_mode=None,
              count_include_pad=None, divisor_override=None, label=""):
    kw = dict(kernel_size=exp2(kernel))
    if stride:
        kw["stride"] = exp2(stride)
    if padding is not None:
        kw["padding"] = exp2(padding)
    if ceil_mode is not None:
        kw["ceil_mode"] = ceil_mode
    if count_include_pad is not None:
        kw["count_include_pad"] = count_include_pad
    if divisor_override is not None:
        kw["divisor_override"] = divisor_override
    exp = F.avg_pool2d(t(x), **kw).numpy()
    a = attrs(kernel_size=kernel, stride=stride, padding=padding,
              ceil_mode=ceil_mode, count_include_pad=count_include_pad,
              divisor_override=divisor_override)
    s.check_op("kt.avg_pool2d", [x], exp, [ttype(exp.shape, elem)], attrs=a,
               elems=[elem], elem=elem,
               label="avg_pool2d %s %s {%s} %s" % (elem, x.shape, a, label))


MAX_CASES = [
    # (shape, kernel, stride, padding, dilation, ceil_mode)
    ((1, 2, 8, 8), [2, 2], None, None, None, None),
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], None, None),
    ((2, 3, 7, 9), [3, 2], [2, 2], [1, 1], None, True),
    ((1, 2, 6, 6), [2], None, None, None, True),      # stride=kernel, ceil
    ((1, 2, 5, 5), [2], [2], [1], None, True),        # last window dropped
    ((1, 2, 10, 11), [3, 2], [1, 2], [1, 0], [2, 3], None),
    ((1, 2, 10, 11), [3, 3], [2, 3], [1, 1], [2, 2], True),
    ((3, 7, 7), [3], [2], [0], None, True),           # unbatched
    ((3, 5, 9), [2, 3], [], None, None, None),        # stride = [] -> kernel
    ((1, 1, 1, 1), [1], None, None, None, None),
    ((2, 2, 4, 4), [4], [3], [2], None, True),
]
for shape, k, st, pd, dl, ceil in MAX_CASES:
    check_max(rand(shape, "f32"), "f32", k, st, pd, dl, ceil)
for elem in ["f64", "f16", "bf16"]:
    check_max(rand((2, 3, 9, 8), elem), elem, [3, 2], [2, 1], [1, 1], [1, 2], True)

# Negative values with padding (padding is -inf, not 0) and NaN propagation.
check_max(-np.abs(rand((1, 1, 5, 5), "f32")) - 1, "f32", [3], [2], [1], None,
          None, label="all negative")
x = rand((1, 2, 6, 6), "f32")
x[0, 0, 1, 1] = np.nan
x[0, 1, 5, 5] = np.nan
x[0, 1, 0, 0] = np.inf
check_max(x, "f32", [3], [2], [1], None, True, label="nan")
x = rand((1, 1, 4, 4), "f32")
x[0, 0, 0, 0] = np.nan
x[0, 0, 0, 1] = 100.0
check_max(x, "f32", [2], None, None, None, None, label="nan then larger")
# Ties / -inf only.
x = np.full((1, 1, 4, 4), -np.inf, dtype=np.float32)
check_max(x, "f32", [2], None, None, None, None, label="-inf")

AVG_CASES = [
    # (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    ((1, 2, 8, 8), [2, 2], None, None, None, None, None),
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], None, None, None),
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], None, False, None),
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], True, True, None),
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], True, False, None),
    ((1, 2, 5, 5), [2], [2], [1], True, True, None),
    ((1, 2, 6, 7), [3, 2], [3, 2], [1, 1], True, True, None),  # past padded input
    ((1, 2, 6, 7), [3, 2], [3, 2], [0, 0], True, True, None),
    ((1, 2, 6, 7), [3, 2], [3, 2], [1, 1], True, False, None),
    ((1, 2, 7, 7), [3], [2], [1], True, True, 4),
    ((1, 2, 7, 7), [3], [2], [1], True, False, -3),
    ((1, 2, 8, 8), [4, 2], [2, 3], [2, 1], None, None, 5),
    ((3, 7, 5), [2, 3], [], None, True, None, None),             # unbatched
    ((1, 1, 1, 1), [1], None, None, None, None, None),
]
for shape, k, st, pd, ceil, cip, div in AVG_CASES:
    check_avg(rand(shape, "f32"), "f32", k, st, pd, ceil, cip, div)
for elem in ["f64", "f16", "bf16"]:
    check_avg(rand((2, 3, 9, 8), elem), elem, [3, 2], [2, 1], [1, 1], True, False)
    check_avg(rand((2, 3, 9, 8), elem), elem, [3], [2], [1], True, True)
x = rand((1, 1, 4, 4), "f32")
x[0, 0, 0, 0] = np.nan
x[0, 0, 3, 3] = np.inf
check_avg(x, "f32", [2], None, None, None, None, None, label="nan/inf")

# Empty batch.
check_max(rand((0, 2, 4, 4), "f32"), "f32", [2], None, None, None, None)
check_avg(rand((0, 2, 4, 4), "f32"), "f32", [2], None, None, None, None, None)

# Dynamic dims and the run-time output-size check.
x = rand((2, 3, 9, 7), "f32")
mlir = func_text("main", ["tensor<?x3x?x?xf32>"], ["tensor<?x3x?x?xf32>"],
                 ["%0 = kt.max_pool2d %arg0 {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1], ceil_mode = true} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>",
                  "return %0 : tensor<?x3x?x?xf32>"])
s.check("max_pool2d dynamic", mlir, [x],
        F.max_pool2d(t(x), 3, 2, 1, ceil_mode=True).numpy())
mlir = func_text("main", ["tensor<?x3x?x?xf32>"], ["tensor<?x3x?x?xf32>"],
                 ["%0 = kt.avg_pool2d %arg0 {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1], count_include_pad = false} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>",
                  "return %0 : tensor<?x3x?x?xf32>"])
s.check("avg_pool2d dynamic", mlir, [x],
        F.avg_pool2d(t(x), 3, 2, 1, count_include_pad=False).numpy())
mlir = func_text("main", ["tensor<?x3x?x?xf32>"], ["tensor<?x3x?x?xf32>"],
                 ["%0 = kt.max_pool2d %arg0 {kernel_size = [3, 3]} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>",
                  "return %0 : tensor<?x3x?x?xf32>"])
# The CPU backend checks it too (docs/codegen.md).
s.check_error("max_pool2d ? too small", mlir, [rand((1, 3, 2, 5), "f32")],
              "output size is too small")
s.finish()
