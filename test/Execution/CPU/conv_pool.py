# RUN: %python %s
# REQUIRES: numpy, torch
# kt.conv2d, kt.max_pool2d and kt.avg_pool2d through the CPU backend, against
# torch.nn.functional in float64 (independent reference) and against the
# interpreter: stride / padding / dilation / groups (incl. depthwise) / bias,
# ceil_mode (incl. windows past the padded input), count_include_pad,
# divisor_override, odd sizes, unbatched input, NaN/inf propagation, every
# float dtype and dynamic dims.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_compare import CPUSuite
from kiln_testing import ttype, to_bf16
from kiln_testing import attr_entries

s = CPUSuite(__file__)
NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32}


def rand(shape, elem, special=False):
    x = s.randn(*shape, dtype=np.float64)
    if special and x.size >= 6:
        f = x.reshape(-1)
        f[1], f[4], f[5] = np.nan, np.inf, -np.inf
    x = x.astype(NP[elem])
    return to_bf16(x) if elem == "bf16" else x


def attrs(**kw):
    return attr_entries(kw)


def pair(v, default):
    if v is None:
        return default
    return tuple(v) * 2 if len(v) == 1 else tuple(v)


def t64(x):
    return torch.from_numpy(np.asarray(x, np.float64))


def module(op, inputs, arg_types, result_type, attr):
    operands = ", ".join("%%arg%d" % i for i in range(len(inputs)))
    args = ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(arg_types))
    return ("func.func @main(%s) -> %s {\n  %%r = %s %s {%s} : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (args, result_type, op, operands, attr,
                                         ", ".join(arg_types), result_type, result_type)


def check(label, op, inputs, elem, want, attr, dyn=()):
    """Runs op on the CPU backend; compares with torch (`want`, f64) at the
    dtype's tolerance and with the interpreter (CPUSuite rules)."""
    arg_types = []
    for i, x in enumerate(inputs):
        shape = [(-1 if (i, d) in dyn else n) for d, n in enumerate(x.shape)]
        arg_types.append(ttype(shape, elem))
    rt = ttype(want.shape, elem)
    mlir = module(op, inputs, arg_types, rt, attr)
    s.check_reference(label, mlir, inputs, want, elem)


# conv2d: (x shape, w shape, bias, stride, padding, dilation, groups)
CONV = [
    ((1, 3, 8, 8), (6, 3, 3, 3), True, None, None, None, 1),
    ((2, 3, 9, 7), (5, 3, 3, 2), True, [2], [1], None, 1),
    ((2, 4, 11, 10), (6, 2, 3, 3), True, [2, 1], [1, 2], [2, 1], 2),
    ((1, 6, 7, 7), (6, 1, 3, 3), False, [1], [1], None, 6),    # depthwise
    ((3, 5, 5, 5), (4, 5, 1, 1), True, None, None, None, 1),    # 1x1
    ((1, 2, 4, 6), (3, 2, 4, 6), True, None, None, None, 1),    # kernel = input
    ((4, 9, 9), (8, 4, 3, 3), True, [3], [2], [2], 1),          # unbatched
    ((2, 8, 13, 5), (12, 2, 5, 3), True, [2, 3], [2, 1], [1, 2], 4),
]
for xs, ws, bias, st, pd, dl, g in CONV:
    for elem in ["f32", "f64", "f16", "bf16"]:
        if elem != "f32" and xs != (2, 4, 11, 10) and xs != (4, 9, 9):
            continue
        x, w = rand(xs, elem), rand(ws, elem) * 0.5
        b = rand((ws[0],), elem) if bias else None
        want = F.conv2d(t64(x), t64(w), t64(b) if bias else None,
                        stride=pair(st, (1, 1)), padding=pair(pd, (0, 0)),
                        dilation=pair(dl, (1, 1)), groups=g).numpy()
        ins = [x, w] + ([b] if bias else [])
        a = attrs(stride=st, padding=pd, dilation=dl, groups=g if g != 1 else None)
        check("conv2d %s %s %s %s" % (elem, xs, ws, a), "kt.conv2d", ins, elem, want, a)
# dynamic batch and spatial dims
x, w, b = rand((2, 3, 10, 9), "f32"), rand((4, 3, 3, 3), "f32"), rand((4,), "f32")
want = F.conv2d(t64(x), t64(w), t64(b), stride=2, padding=1).numpy()
check("conv2d dynamic", "kt.conv2d", [x, w, b], "f32", want, "stride = [2], padding = [1]",
      dyn={(0, 0), (0, 2), (0, 3)})
x, w = rand((1, 4, 6, 6), "f32"), rand((4, 2, 3, 3), "f32")
want = F.conv2d(t64(x), t64(w), groups=2).numpy()
check("conv2d dynamic groups", "kt.conv2d", [x, w], "f32", want, "groups = 2",
      dyn={(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)})
# NaN / inf in the input propagate
x, w = rand((1, 2, 5, 5), "f32", special=True), rand((3, 2, 2, 2), "f32")
want = F.conv2d(t64(x), t64(w)).numpy()
check("conv2d nan", "kt.conv2d", [x, w], "f32", want, "")

# max_pool2d / avg_pool2d: (x shape, kernel, stride, padding, dilation, ceil)
POOL = [
    ((1, 2, 8, 8), [2], None, None, None, None),
    ((2, 3, 7, 9), [3], [2], [1], None, True),
    ((2, 3, 7, 9), [3, 2], [2, 3], [1, 1], [2, 1], None),
    ((1, 1, 5, 5), [2], [2], [1], None, True),      # last window past the padding
    ((3, 6, 6), [3], [1], [1], None, False),        # unbatched
    ((1, 2, 10, 11), [4, 3], [3, 2], [2, 1], [1, 3], True),
    ((2, 2, 3, 3), [3], [], None, None, None),      # empty stride = kernel
]
for xs, k, st, pd, dl, ceil in POOL:
    for elem in ["f32", "f64", "f16", "bf16"]:
        if elem != "f32" and xs not in [(2, 3, 7, 9), (3, 6, 6)]:
            continue
        x = rand(xs, elem, special=True)
        kw = dict(kernel_size=pair(k, None), stride=pair(st, None) if st else None,
                  padding=pair(pd, (0, 0)), dilation=pair(dl, (1, 1)), ceil_mode=bool(ceil))
        want = F.max_pool2d(t64(x), **kw).numpy()
        a = attrs(kernel_size=k, stride=st, padding=pd, dilation=dl, ceil_mode=ceil)
        check("max_pool2d %s %s %s" % (elem, xs, a), "kt.max_pool2d", [x], elem, want, a)
        if dl is not None:
            continue
        for cip, dov in [(None, None), (False, None), (True, 3)]:
            x = rand(xs, elem)
            want = F.avg_pool2d(t64(x), kernel_size=kw["kernel_size"], stride=kw["stride"],
                                padding=kw["padding"], ceil_mode=kw["ceil_mode"],
                                count_include_pad=cip is not False, divisor_override=dov).numpy()
            a = attrs(kernel_size=k, stride=st, padding=pd, ceil_mode=ceil,
                      count_include_pad=cip, divisor_override=dov)
            check("avg_pool2d %s %s %s" % (elem, xs, a), "kt.avg_pool2d", [x], elem, want, a)
# NaN everywhere in a window, -inf windows
x = np.full((1, 1, 4, 4), -np.inf, np.float32)
x[0, 0, 0, 0] = np.nan
x[0, 0, 3, 3] = 1.0
check("max_pool2d -inf/nan", "kt.max_pool2d", [x], "f32",
      F.max_pool2d(t64(x), 2).numpy(), "kernel_size = [2]")
# dynamic dims
x = rand((2, 3, 9, 8), "f32")
for ceil in [False, True]:
    want = F.max_pool2d(t64(x), 3, 2, 1, ceil_mode=ceil).numpy()
    a = attrs(kernel_size=[3], stride=[2], padding=[1], ceil_mode=ceil)
    check("max_pool2d dynamic ceil=%s" % ceil, "kt.max_pool2d", [x], "f32", want, a,
          dyn={(0, 0), (0, 1), (0, 2), (0, 3)})
    want = F.avg_pool2d(t64(x), 3, 2, 1, ceil_mode=ceil, count_include_pad=False).numpy()
    a = attrs(kernel_size=[3], stride=[2], padding=[1], ceil_mode=ceil, count_include_pad=False)
    check("avg_pool2d dynamic ceil=%s" % ceil, "kt.avg_pool2d", [x], "f32", want, a,
          dyn={(0, 0), (0, 2), (0, 3)})
# avg_pool2d on int64 (issue 16): PyTorch's CPU kernel sums with wrap-around
# and divides with truncation toward zero; exact on both backends.
from kiln_testing import KilnRunError, run
I64_MAX = np.iinfo(np.int64).max
for xs, k, st, pd, ceil, cip, dov in [
        ((2, 3, 7, 9), [3], [2], [1], False, None, None),
        ((2, 3, 7, 9), [3], [2], [1], True, False, None),
        ((3, 5, 5), [2, 3], [1, 2], [1, 0], True, None, None),
        ((1, 2, 6, 6), [2], None, None, False, None, -3),
        ((1, 1, 4, 4), [2], None, None, False, None, -1),
        ((1, 1, 4, 4), [2], None, None, False, None, None)]:
    x = s.randint(-50, 50, *xs)
    if xs == (1, 1, 4, 4):  # a window whose sum wraps
        x[0, 0, 0, :2] = I64_MAX
    kw = dict(kernel_size=k if len(k) == 2 else k * 2,
              stride=pair(st, tuple(k) * (2 // len(k))),
              padding=pair(pd, (0, 0)), ceil_mode=ceil,
              count_include_pad=cip is not False, divisor_override=dov)
    want = F.avg_pool2d(torch.from_numpy(x), **kw).numpy()
    a = attrs(kernel_size=k, stride=st, padding=pd, ceil_mode=ceil,
              count_include_pad=cip, divisor_override=dov)
    mlir = module("kt.avg_pool2d", [x], [ttype(x.shape, "i64")],
                  ttype(want.shape, "i64"), a)
    for backend in ([], ["--backend=cpu"]):
        label = "avg_pool2d i64 %s %s %s" % (xs, a, backend)
        try:
            got = run(mlir, [x], extra_args=backend)[0]
        except KilnRunError as e:
            s.record(label, False, str(e))
            continue
        s.record(label, got.dtype == np.int64 and np.array_equal(got, want),
                 "got %s, want %s" % (got.ravel()[:8], want.ravel()[:8]))
s.finish()
