# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.cumsum, kt.cumprod and kt.logcumsumexp against PyTorch (torch's
# CPU kernels in the operand dtype; f16, which torch 1.13 does not scan on
# CPU, against the f32 result rounded to f16): every dim (negative dims too),
# rank 0, empty dims, `?` dims, NaN/inf (logcumsumexp's equal infinities),
# integer wrap-around; the interpreter and the CPU backend.

import math

import numpy as np
import torch
from elementwise_helpers import FLOATS, INTS, TD, as_dtype, to_np, to_torch
from kiln_testing import Suite, func_text, ttype

s = Suite(__file__, cpu=True)
OPS = [("cumsum", torch.cumsum), ("cumprod", torch.cumprod),
       ("logcumsumexp", torch.logcumsumexp)]
SHAPES = [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -2), ((2, 3, 4), -1),
          ((4, 0, 3), 0), ((0, 3), 1), ((), 0), ((), -1), ((1, 9), -1),
          # A unit scan dim among other unit dims: the CPU lowering's
          # per-step slices were rank-reducing and ambiguous there, and the
          # program did not compile (found by kiln-fuzz-gen).
          ((1, 4, 1), 2), ((1, 2, 1), -1)]


def ref(fn, x, el, dim):
    t = to_torch(x, el)
    if el == "f16":
        return to_np(fn(t.float(), dim).half())
    return to_np(fn(t, dim) if el not in INTS else fn(t, dim, dtype=TD[el]))


def values(el, shape, op):
    n = int(np.prod(shape)) if shape else 1
    if el in INTS:
        v = s.randint(-4, 5, n) if op == "cumprod" else s.randint(-1000, 1000, n)
    else:
        v = s.randn(n) * (0.9 if op == "cumprod" else 2)
        if op == "cumprod" and n > 5:
            v[n // 2] = 0.0
    return as_dtype(np.asarray(v).reshape(shape), el)


for name, fn in OPS:
    for el in FLOATS + ([] if name == "logcumsumexp" else INTS):
        for shape, dim in SHAPES:
            x = values(el, shape, name)
            t = ttype(shape, el)
            mlir = func_text("main", [t], [t], [
                "%%r = kt.%s %%arg0 {dim = %d} : (%s) -> %s" % (name, dim, t, t),
                "return %%r : %s" % t])
            if not shape:  # kiln_testing passes rank-0 inputs as they are
                x = np.asarray(x)
            s.check("kt.%s %s %s dim=%d" % (name, el, shape, dim), mlir, [x],
                    ref(fn, x, el, dim), elem="bf16" if el == "bf16" else None)

# NaN and infinities: logcumsumexp's equal infinities keep the infinity,
# opposite ones give +inf, NaN propagates; cumsum/cumprod of inf and NaN.
sp = np.array([[-math.inf, -math.inf, 1.0, math.inf, math.inf, 2.0, math.nan, 3.0],
               [math.nan, 0.0, -math.inf, -1.0, math.inf, -math.inf, 5.0, 1e30],
               [1e30, 1e30, -1e30, 88.0, 89.0, -0.0, 0.0, 0.0]])
for name, fn in OPS:
    for el in ["f32", "f64", "bf16"]:
        x = as_dtype(sp, el)
        t = ttype(sp.shape, el)
        s.check("kt.%s specials %s" % (name, el),
                func_text("main", [t], [t], [
                    "%%r = kt.%s %%arg0 {dim = 1} : (%s) -> %s" % (name, t, t),
                    "return %%r : %s" % t]), [x], ref(fn, x, el, 1),
                elem="bf16" if el == "bf16" else None)

# Integer wrap-around.
for el, dt in (("i64", np.int64), ("i32", np.int32)):
    x = np.array([np.iinfo(dt).max, 1, np.iinfo(dt).max, 7, -3, 1 << 20, 1 << 20], dtype=dt)
    t = ttype(x.shape, el)
    for name, fn in OPS[:2]:
        s.check("kt.%s wrap %s" % (name, el),
                func_text("main", [t], [t], [
                    "%%r = kt.%s %%arg0 {dim = 0} : (%s) -> %s" % (name, t, t),
                    "return %%r : %s" % t]), [x], ref(fn, x, el, 0))

# ? dims.
x = s.randn(4, 6, dtype=np.float32)
for name, fn in OPS:
    for dim in (0, 1):
        s.check("kt.%s dynamic dim=%d" % (name, dim),
                func_text("main", ["tensor<?x?xf32>"], ["tensor<?x?xf32>"], [
                    "%%r = kt.%s %%arg0 {dim = %d} : (tensor<?x?xf32>) -> tensor<?x?xf32>"
                    % (name, dim), "return %r : tensor<?x?xf32>"]), [x],
                fn(torch.from_numpy(x), dim).numpy())
s.finish()
