# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.argsort (and torch.sort's values as kt.gather of the operand at the
# permutation) against torch.sort(stable=True): every dtype (f16/bf16 against
# torch on the f32/f64 upcast, which sorts alike; i1 against its int64
# values), ascending and descending, every dim (negative dims too), rank 0,
# empty dims, `?` dims, many ties (the stable order: equal elements keep
# their input order, also descending), NaN (the largest value), +-0 and
# infinities; the interpreter and the CPU backend. Slices longer than 2, 4,
# 16 and not a power of two exercise every merge pass of the lowering.

import math

import numpy as np
import torch
from elementwise_helpers import FLOATS, INTS, as_dtype, to_torch
from kiln_testing import Suite, func_text, ttype

s = Suite(__file__, cpu=True)
SHAPES = [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -2), ((2, 3, 4), -1),
          ((2, 3, 4), 0), ((4, 0, 3), 0), ((4, 0, 3), -1), ((0,), 0), ((), 0),
          ((), -1), ((1, 33), -1), ((17, 2), 0), ((1,), 0), ((2, 2), 1)]


def ref(x, el, dim, desc):
    t = to_torch(x, el)
    if el in ("f16", "bf16"):
        t = t.to(torch.float64)
    if el == "i1":
        t = t.to(torch.int64)
    v, i = torch.sort(t, dim=dim, descending=desc, stable=True)
    return i.numpy()


def values(el, shape):
    n = int(np.prod(shape)) if shape else 1
    if el == "i1":
        v = s.randint(0, 2, n).astype(bool)
    elif el in INTS:
        v = s.randint(-4, 5, n)  # many ties
    else:
        v = s.randint(-3, 4, n).astype(np.float64) * 0.5
        if n > 3:
            v[1] = math.nan
            v[n - 1] = math.nan
            v[n // 2] = -0.0
    return as_dtype(np.asarray(v).reshape(shape), el)


def argsort_text(t, it, dim, desc):
    return func_text("main", [t], [it], [
        "%%r = kt.argsort %%arg0 {dim = %d, descending = %s} : (%s) -> %s"
        % (dim, "true" if desc else "false", t, it), "return %%r : %s" % it])


for el in FLOATS + INTS + ["i1"]:
    for shape, dim in SHAPES:
        for desc in (False, True):
            x = values(el, shape)
            t, it = ttype(shape, el), ttype(shape, "i64")
            if not shape:
                x = np.asarray(x)
            s.check("kt.argsort %s %s dim=%d desc=%s" % (el, shape, dim, desc),
                    argsort_text(t, it, dim, desc), [x], ref(x, el, dim, desc))

# Specials: NaN (largest), infinities, signed zeros and the lowest/highest
# finite values, with ties among NaNs and zeros.
sp = np.array([[math.nan, -math.inf, 0.0, -0.0, math.inf, 1.0, math.nan, -1.0,
                3.0e38, -3.0e38, 0.0, math.inf, -math.inf, 1.0]])
for el in ["f32", "f64", "f16", "bf16"]:
    x = as_dtype(sp if el in ("f32", "f64") else np.nan_to_num(
        sp, nan=math.nan, posinf=math.inf, neginf=-math.inf).clip(-6e4, 6e4), el)
    for desc in (False, True):
        t, it = ttype(x.shape, el), ttype(x.shape, "i64")
        s.check("kt.argsort specials %s desc=%s" % (el, desc),
                argsort_text(t, it, 1, desc), [x], ref(x, el, 1, desc))

# Integer extremes (uint8 sorts unsigned: 200 after 100).
for el, dt in (("i64", np.int64), ("i32", np.int32), ("i16", np.int16),
               ("i8", np.int8), ("ui8", np.uint8)):
    info = np.iinfo(dt)
    x = np.array([info.max, info.min, 0, -1, info.max, 1, info.min], dtype=dt)
    for desc in (False, True):
        t, it = ttype(x.shape, el), ttype(x.shape, "i64")
        s.check("kt.argsort extremes %s desc=%s" % (el, desc),
                argsort_text(t, it, 0, desc), [x], ref(x, el, 0, desc))

# torch.sort's values: the operand gathered at the permutation (NaN kept).
for el in ["f32", "f64"]:
    x = values(el, (3, 9))
    t, it = ttype(x.shape, el), ttype(x.shape, "i64")
    for desc in (False, True):
        exp = torch.sort(to_torch(x, el), dim=1, descending=desc, stable=True)
        s.check("sort values %s desc=%s" % (el, desc),
                func_text("main", [t], [t, it], [
                    "%%i = kt.argsort %%arg0 {dim = 1, descending = %s} : (%s) -> %s"
                    % ("true" if desc else "false", t, it),
                    "%%v = kt.gather %%arg0, %%i {dim = 1} : (%s, %s) -> %s" % (t, it, t),
                    "return %%v, %%i : %s, %s" % (t, it)]), [x],
                [exp.values.numpy(), exp.indices.numpy()])

# ? dims.
x = values("f32", (5, 6))
for dim in (0, 1):
    for desc in (False, True):
        s.check("kt.argsort dynamic dim=%d desc=%s" % (dim, desc),
                argsort_text("tensor<?x?xf32>", "tensor<?x?xi64>", dim, desc),
                [x], ref(x, "f32", dim, desc))
s.finish()
