# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of kt.avg_pool2d (padding,
# count_include_pad, divisor_override, ceil_mode), kt.max_pool2d (stride,
# padding, dilation, ceil_mode; ties go to the first position as in PyTorch's
# CPU kernel, checked against torch only), kt.conv2d and kt.conv_transpose2d
# (input, weight, bias; stride incl. strides that do not divide the input,
# padding, output_padding, dilation, groups incl. depthwise; unbatched)
# against finite differences and torch.autograd in f64.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import attr_entries, ttype

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


def t64(shape):
    return ttype(shape, "f64")


def attrs(**kw):
    parts = attr_entries(kw, " : i64")
    return " {" + parts + "}" if parts else ""


AVG = [
    ((1, 2, 4, 4), dict(kernel_size=[2, 2])),
    ((2, 1, 5, 5), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])),
    ((2, 1, 5, 5), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], count_include_pad=False)),
    ((1, 2, 5, 4), dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 0], divisor_override=5)),
    ((1, 1, 5, 5), dict(kernel_size=[2, 2], stride=[2, 2], ceil_mode=True)),
    ((1, 1, 6, 5), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=True, count_include_pad=False)),
    ((2, 4, 4), dict(kernel_size=[2, 2], stride=[1, 1])),
]
for xs, kw in AVG:
    x = rnd(*xs)
    tk = dict(kernel_size=kw["kernel_size"], stride=kw.get("stride"), padding=kw.get("padding", 0),
              ceil_mode=kw.get("ceil_mode", False), count_include_pad=kw.get("count_include_pad", True),
              divisor_override=kw.get("divisor_override"))
    r = F.avg_pool2d(torch.from_numpy(x), **tk)
    tr = t64(tuple(r.shape))
    s.gradcheck("avg_pool2d %s %s" % (xs, kw),
                ["%%0 = kt.avg_pool2d %%arg0%s : (%s) -> %s" % (attrs(**kw), t64(xs), tr),
                 "return %%0 : %s" % tr], [x], [tr],
                lambda t, tk=tk: F.avg_pool2d(t, **tk))

MAX = [
    ((1, 2, 4, 4), dict(kernel_size=[2, 2])),
    ((2, 1, 5, 5), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])),
    ((1, 2, 6, 5), dict(kernel_size=[2, 3], stride=[1, 2], dilation=[2, 1])),
    ((1, 1, 5, 5), dict(kernel_size=[2, 2], stride=[2, 2], ceil_mode=True)),
    ((1, 1, 6, 6), dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[2, 2], ceil_mode=True)),
    ((2, 4, 4), dict(kernel_size=[3, 3], stride=[1, 1], padding=[1, 1])),
]
for xs, kw in MAX:
    x = rnd(*xs)
    tk = dict(kernel_size=kw["kernel_size"], stride=kw.get("stride"), padding=kw.get("padding", 0),
              dilation=kw.get("dilation", 1), ceil_mode=kw.get("ceil_mode", False))
    r = F.max_pool2d(torch.from_numpy(x), **tk)
    tr = t64(tuple(r.shape))
    body = ["%%0 = kt.max_pool2d %%arg0%s : (%s) -> %s" % (attrs(**kw), t64(xs), tr),
            "return %%0 : %s" % tr]
    fn = lambda t, tk=tk: F.max_pool2d(t, **tk)
    s.gradcheck("max_pool2d %s %s" % (xs, kw), body, [x], [tr], fn)
    # ties: rounded values, many equal maxima; torch only
    xt = np.round(rnd(*xs) * 0.6)
    s.gradcheck("max_pool2d ties %s %s" % (xs, kw), body, [xt], [tr], fn, fd=False)
# all-equal input: every window ties everywhere
xt = np.ones((1, 1, 4, 4))
body = ["%0 = kt.max_pool2d %arg0 {kernel_size = [2, 2], stride = [1, 1]} : (tensor<1x1x4x4xf64>) -> tensor<1x1x3x3xf64>",
        "return %0 : tensor<1x1x3x3xf64>"]
s.gradcheck("max_pool2d all equal", body, [xt], ["tensor<1x1x3x3xf64>"],
            lambda t: F.max_pool2d(t, 2, 1), fd=False)

CONV = [
    # x, w, bias, attrs
    ((1, 2, 4, 4), (3, 2, 3, 3), True, dict()),
    ((2, 2, 5, 5), (3, 2, 3, 3), False, dict(stride=[2, 2], padding=[1, 1])),
    ((1, 3, 6, 5), (2, 3, 2, 3), True, dict(stride=[1, 2], padding=[2, 1], dilation=[2, 1])),
    ((1, 4, 5, 5), (6, 2, 3, 3), True, dict(groups=2, padding=[1, 1])),
    ((2, 4, 6, 6), (4, 1, 3, 2), False, dict(groups=4, stride=[2, 1], dilation=[1, 2])),
    ((2, 5, 5), (3, 2, 2, 2), True, dict(stride=[2, 2], padding=[1, 1])),
    ((1, 2, 3, 3), (2, 2, 1, 1), True, dict()),
    # strides that do not divide (output_padding of the input gradient),
    # stride 3, dilation with stride, groups with stride, depthwise
    ((1, 2, 7, 8), (3, 2, 3, 3), True, dict(stride=[2, 3])),
    ((2, 3, 9, 7), (2, 3, 2, 3), False, dict(stride=[3, 2], padding=[1, 2], dilation=[2, 1])),
    ((1, 6, 8, 7), (4, 3, 3, 2), True, dict(groups=2, stride=[3, 2], padding=[1, 0], dilation=[1, 2])),
    ((2, 3, 7, 6), (3, 1, 3, 3), True, dict(groups=3, stride=[2, 2], padding=[1, 1])),
    ((3, 6, 5), (6, 1, 2, 3), False, dict(groups=3, stride=[3, 1], dilation=[2, 1])),
    ((1, 2, 4, 9), (2, 2, 4, 1), True, dict(stride=[1, 4], padding=[1, 0])),
]
for xs, wsh, bias, kw in CONV:
    x, w = rnd(*xs), rnd(*wsh)
    ins = [x, w] + ([rnd(wsh[0])] if bias else [])
    tk = dict(stride=kw.get("stride", 1), padding=kw.get("padding", 0),
              dilation=kw.get("dilation", 1), groups=kw.get("groups", 1))
    r = F.conv2d(*[torch.from_numpy(a) for a in ins], **tk)
    tr = t64(tuple(r.shape))
    ops = ", ".join("%%arg%d" % i for i in range(len(ins)))
    types = ", ".join(t64(a.shape) for a in ins)
    s.gradcheck("conv2d x%s w%s bias=%s %s" % (xs, wsh, bias, kw),
                ["%%0 = kt.conv2d %s%s : (%s) -> %s" % (ops, attrs(**kw), types, tr),
                 "return %%0 : %s" % tr], ins, [tr],
                lambda *a, tk=tk: F.conv2d(*a, **tk))

# conv_transpose2d (input, weight, bias): its input gradient is a conv2d,
# cropped where output_padding >= stride (dilation > stride) adds a partial
# window.
CONVT = [
    # x, w [C_in, C_out/G, kH, kW], bias, attrs
    ((1, 2, 3, 3), (2, 3, 3, 3), True, dict()),
    ((2, 2, 3, 4), (2, 2, 3, 2), False, dict(stride=[2, 3], padding=[1, 0], output_padding=[1, 2])),
    ((1, 3, 3, 3), (3, 2, 2, 3), True, dict(stride=[1, 2], padding=[1, 1], dilation=[2, 1], output_padding=[1, 1])),
    ((1, 4, 3, 3), (4, 2, 3, 3), True, dict(groups=2, stride=[2, 2], padding=[1, 1], output_padding=[1, 0])),
    ((2, 3, 3, 2), (3, 1, 3, 2), False, dict(groups=3, stride=[3, 1], dilation=[1, 2])),
    ((2, 3, 3), (2, 2, 2, 2), True, dict(stride=[2, 2], padding=[1, 1])),
    ((1, 2, 6, 5), (2, 2, 3, 3), False, dict(padding=[3, 2])),
]
for xs, wsh, bias, kw in CONVT:
    x, w = rnd(*xs), rnd(*wsh)
    G = kw.get("groups", 1)
    ins = [x, w] + ([rnd(wsh[1] * G)] if bias else [])
    tk = dict(stride=kw.get("stride", 1), padding=kw.get("padding", 0),
              output_padding=kw.get("output_padding", 0),
              dilation=kw.get("dilation", 1), groups=G)
    r = F.conv_transpose2d(*[torch.from_numpy(a) for a in ins], **tk)
    tr = t64(tuple(r.shape))
    ops = ", ".join("%%arg%d" % i for i in range(len(ins)))
    types = ", ".join(t64(a.shape) for a in ins)
    s.gradcheck("conv_transpose2d x%s w%s bias=%s %s" % (xs, wsh, bias, kw),
                ["%%0 = kt.conv_transpose2d %s%s : (%s) -> %s" % (ops, attrs(**kw), types, tr),
                 "return %%0 : %s" % tr], ins, [tr],
                lambda *a, tk=tk: F.conv_transpose2d(*a, **tk))
s.finish()
