# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.neg/abs/relu/floor/ceil/round/sign (floats and ints),
# logical_not/isnan (every dtype, i1 result) and kt.clamp against
# PyTorch: rank-0 / empty / 2-D shapes, NaN, +-inf, -0.0, INT_MIN.

import numpy as np
import torch
from elementwise_helpers import (FLOATS, INTS, NPD, TD, as_dtype, check_multi,
                                 const_text, ref64, refnative, to_np, to_torch)
from kiln_testing import Suite, ttype, func_text, to_bf16

import math

s = Suite(__file__, cpu=True)
OPS = {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu,
       "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
       "sign": torch.sign}
fspecials = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1.5, 2.5,
             -2.5, 3.5, -1.0, 7.0]
for el in FLOATS + INTS:
    if el in FLOATS:
        x = as_dtype(np.concatenate([s.randn(15) * 4, fspecials]).reshape(4, 7), el)
    else:
        info = np.iinfo(NPD[el])
        x = as_dtype(np.concatenate([s.randint(-100, 100, 18),
                                     [info.min, info.max, 0, -1, 1, -7, 7, 3, -3, 100]]).reshape(4, 7), el)
    x0 = as_dtype(np.array(-3), el)
    xe = as_dtype(np.zeros((2, 0)), el)
    for name, fn in OPS.items():
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [refnative(fn, [g[0][0]], el) for g in groups]
        check_multi(s, "kt." + name, groups, el, el, exp)

# Sign of zero is observable: relu(-0.0) = -0.0, abs(-0.0) = 0.0, round(-0.5) = -0.0.
z = np.array([-0.0, -0.5, 0.5], dtype=np.float64)
for name, fn in [("relu", torch.relu), ("abs", torch.abs), ("round", torch.round),
                 ("neg", torch.neg)]:
    r = s.check_op("kt." + name, [z], fn(torch.from_numpy(z)).numpy(), [ttype((3,), "f64")])
    e = fn(torch.from_numpy(z)).numpy()
    s.record("signbit kt." + name, r is not None and np.array_equal(np.signbit(r[0]), np.signbit(e)),
             "%s vs %s" % (r, e))

# logical_not / isnan on every dtype.
for el in FLOATS + INTS + ["i1"]:
    if el in FLOATS:
        x = as_dtype(np.array([[0.0, -0.0, math.nan, 1.5], [math.inf, -2.0, 0.0, math.nan]]), el)
    elif el == "i1":
        x = np.array([[True, False, True, False]])
    else:
        x = as_dtype(np.array([[0, -1, 5, 0]]), el)
    xe = as_dtype(np.zeros((0,)), el)
    x0 = as_dtype(np.array(0), el)
    for name, fn in [("logical_not", torch.logical_not), ("isnan", torch.isnan)]:
        groups = [([x], x.shape), ([xe], xe.shape), ([x0], ())]
        exp = [refnative(fn, [g[0][0]], el) for g in groups]
        check_multi(s, "kt." + name, groups, el, "i1", exp)

# clamp
def tclamp(lo, hi):
    return lambda t: torch.clamp(t, min=lo, max=hi)

for el in FLOATS + INTS:
    if el in FLOATS:
        x = as_dtype(np.concatenate([s.randn(9) * 3, [math.nan, math.inf, -math.inf]]).reshape(3, 4), el)
    else:
        x = as_dtype(s.randint(-10, 10, 3, 4), el)
    x0 = as_dtype(np.array(5), el)
    xe = as_dtype(np.zeros((0, 2)), el)
    for lo, hi in [(-1.0, 2.0), (None, 0.0), (-2.0, None), (3.0, -1.0), (0.0, 0.0)]:
        if el in FLOATS and lo is not None:
            lo += 0.25
        attrs = ", ".join(k + " = %r : f64" % float(v) for k, v in [("min", lo), ("max", hi)]
                          if v is not None)
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [refnative(tclamp(lo, hi), [g[0][0]], el) for g in groups]
        check_multi(s, "kt.clamp", groups, el, el, exp, attrs=attrs)

s.finish()
