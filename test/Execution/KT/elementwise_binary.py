# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the broadcasting arithmetic kt ops (add sub mul div pow maximum
# minimum remainder fmod atan2) against PyTorch on every numeric dtype: same
# shapes, size-1 and missing dims, rank 0, empty; NaN/inf, integer
# wrap-around, div rounding modes, remainder and fmod signs, atan2 quadrants
# and signed zeros.

import numpy as np
import torch
from elementwise_helpers import (FLOATS, INTS, NPD, TD, as_dtype, check_multi,
                                 const_text, ref64, refnative, to_np, to_torch)
from kiln_testing import Suite, ttype, func_text, to_bf16

import math

s = Suite(__file__, cpu=True)
SHAPES = [((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((0, 3), (1, 3)),
          ((4,), ())]


def operands(el, shape, kind):
    n = int(np.prod(shape)) if shape else 1
    if el in FLOATS:
        if kind == "pow_exp":
            v = s.randint(-3, 4, n).astype(np.float64) + (s.randn(n) * 0.5 if n > 4 else 0)
        else:
            v = s.randn(n) * 3
            sp = [math.nan, math.inf, -math.inf, -0.0, 0.0, 2.0, -2.0]
            if n >= 12 and kind != "scalar":
                v[:len(sp)] = sp
        if not shape:
            v = np.array([1.75])
    else:
        lo, hi = {"pow_base": (-4, 5), "pow_exp": (-2, 7)}.get(kind, (-20, 21))
        v = s.randint(lo, hi, n)
        if kind == "divisor":
            v[v == 0] = 3
        if not shape:
            v = np.array([-3 if kind != "pow_exp" else 3])
    return as_dtype(v.reshape(shape), el)


def bshape(a, b):
    return np.broadcast_shapes(a, b)


OPS = [("add", "", torch.add), ("sub", "", torch.sub), ("mul", "", torch.mul),
       ("maximum", "", torch.maximum), ("minimum", "", torch.minimum),
       ("remainder", "", torch.remainder), ("fmod", "", torch.fmod),
       ("pow", "", torch.pow),
       ("div", "", torch.div),
       ("div", "rounding_mode = #kt.rounding_mode<trunc>",
        lambda a, b: torch.div(a, b, rounding_mode="trunc")),
       ("div", "rounding_mode = #kt.rounding_mode<floor>",
        lambda a, b: torch.div(a, b, rounding_mode="floor"))]

for el in FLOATS + INTS:
    for name, attrs, fn in OPS:
        if el in INTS and name == "div" and not attrs:
            continue
        groups, exp = [], []
        for sa, sb in SHAPES:
            ka = "pow_base" if name == "pow" else "x"
            kb = {"pow": "pow_exp", "div": "divisor", "remainder": "divisor",
                  "fmod": "divisor"}.get(name, "y")
            a, b = operands(el, sa, ka), operands(el, sb, kb)
            groups.append(([a, b], bshape(sa, sb)))
            # Rounding-mode division: torch computes it in the dtype itself
            # (trunc(a / b) with a / b rounded to bf16), so the reference is native.
            if name in ("add", "sub", "mul", "div", "pow") and el in FLOATS and not attrs:
                exp.append(ref64(fn, [a, b], el, el))
            else:
                exp.append(refnative(fn, [a, b], el))
        check_multi(s, "kt." + name, groups, el, el, exp, attrs=attrs)

# Integer wrap-around.
big = np.array([2**62, -2**63, 2**63 - 1], dtype=np.int64)
s.check_op("kt.mul", [big, np.array([4, -1, 2], dtype=np.int64)],
           np.array([0, -2**63, -2], dtype=np.int64), [ttype((3,), "i64")])
i32 = np.array([2**31 - 1, -2**31], dtype=np.int32)
s.check_op("kt.add", [i32, np.array([1, -1], dtype=np.int32)],
           np.array([-2**31, 2**31 - 1], dtype=np.int32), [ttype((2,), "i32")])
s.check_op("kt.sub", [i32, np.array([-1, 1], dtype=np.int32)],
           np.array([-2**31, 2**31 - 1], dtype=np.int32), [ttype((2,), "i32")])
s.check_op("kt.pow", [np.array([2, 3, -1, 1, 5, 0], dtype=np.int64),
                      np.array([70, 2, -3, -5, -1, 0], dtype=np.int64)],
           np.array([0, 9, -1, 1, 0, 1], dtype=np.int64), [ttype((6,), "i64")])
# Integer division: trunc vs floor, remainder takes the sign of the divisor.
a = np.array([-7, 7, -7, 7, 6, -6, 0], dtype=np.int64)
b = np.array([2, -2, -2, 2, -3, 3, -5], dtype=np.int64)
s.check_op("kt.div", [a, b], np.array([-3, -3, 3, 3, -2, -2, 0]), [ttype((7,), "i64")],
           attrs="rounding_mode = #kt.rounding_mode<trunc>")
s.check_op("kt.div", [a, b], np.array([-4, -4, 3, 3, -2, -2, 0]), [ttype((7,), "i64")],
           attrs="rounding_mode = #kt.rounding_mode<floor>")
s.check_op("kt.remainder", [a, b], np.array([1, -1, -1, 1, 0, 0, 0]), [ttype((7,), "i64")])
# fmod takes the sign of the dividend (PyTorch's fmod on ints), also at the
# int32/int64 extremes; INT_MIN fmod -1 is 0 (C's `%` overflows there and
# PyTorch's CPU kernel dies of SIGFPE; mathematically the remainder is 0).
s.check_op("kt.fmod", [a, b], torch.fmod(torch.from_numpy(a), torch.from_numpy(b)).numpy(),
           [ttype((7,), "i64")])


def c_fmod(x, y):
    q = abs(x) // abs(y)
    return x - y * (q if (x < 0) == (y < 0) else -q)


for dt, el in ((np.int64, "i64"), (np.int32, "i32")):
    lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    xs = [lo, lo, hi, lo, hi, -7, 7]
    ys = [-1, 1, -1, hi, lo, -1, -1]
    s.check_op("kt.fmod", [np.array(xs, dtype=dt), np.array(ys, dtype=dt)],
               np.array([c_fmod(x, y) for x, y in zip(xs, ys)], dtype=dt),
               [ttype((7,), el)], label="kt.fmod extremes %s" % el)
    s.check_op("kt.remainder", [np.array(xs, dtype=dt), np.array(ys, dtype=dt)],
               np.array([x % y for x, y in zip(xs, ys)], dtype=dt),
               [ttype((7,), el)], label="kt.remainder extremes %s" % el)
# atan2: every quadrant, the axes, signed zeros and infinities, NaN; every
# float dtype (PyTorch computes f16/bf16 in float).
zs = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 3.0, -2.5]
ya = np.array([y for y in zs for x in zs])
xa = np.array([x for y in zs for x in zs])
for el in FLOATS:
    ea, eb = as_dtype(ya, el), as_dtype(xa, el)
    exp = ref64(torch.atan2, [ea, eb], el, el)
    r = s.check_op("kt.atan2", [ea, eb], exp, [ttype(ya.shape, el)],
                   elems=[el, el], elem="bf16" if el == "bf16" else None,
                   label="kt.atan2 specials %s" % el)
    ok = ~np.isnan(exp)
    s.record("signbit kt.atan2 %s" % el,
             r is not None and np.array_equal(np.signbit(r[0])[ok], np.signbit(exp)[ok]),
             "%s vs %s" % (r, exp))
for name, attrs, fn in [("atan2", "", torch.atan2)]:
    for el in FLOATS:
        groups, exp = [], []
        for sa, sb in SHAPES:
            a, b = operands(el, sa, "x"), operands(el, sb, "y")
            groups.append(([a, b], bshape(sa, sb)))
            exp.append(ref64(fn, [a, b], el, el))
        check_multi(s, "kt." + name, groups, el, el, exp, attrs=attrs)
# Floats: x/0, remainder sign and by zero, NaN-propagating maximum/minimum.
fa = np.array([1.0, -1.0, 0.0, -7.0, 7.0, 5.0, -0.0, math.nan, 1.0])
fb = np.array([0.0, 0.0, 0.0, 2.0, -2.0, 0.0, 3.0, 1.0, math.nan])
for name, attrs, fn in OPS:
    if name in ("div", "remainder", "fmod", "maximum", "minimum"):
        exp = fn(torch.from_numpy(fa), torch.from_numpy(fb)).numpy()
        r = s.check_op("kt." + name, [fa, fb], exp, [ttype((9,), "f64")], attrs=attrs)
        s.record("signbit kt.%s %s" % (name, attrs),
                 r is not None and np.array_equal(np.signbit(r[0])[~np.isnan(exp)],
                                                  np.signbit(exp)[~np.isnan(exp)]),
                 "%s vs %s" % (r, exp))
# Dynamic dims broadcast at run time.
x, y = s.randn(2, 3, dtype=np.float64), s.randn(1, 3, dtype=np.float64)
mlir = func_text("main", ["tensor<?x?xf64>", "tensor<?x3xf64>"], ["tensor<?x3xf64>"],
                 ["%r = kt.sub %arg0, %arg1 : (tensor<?x?xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>",
                  "return %r : tensor<?x3xf64>"])
s.check("sub dynamic", mlir, [x, y], x - y)
s.check_error("sub dynamic mismatch", mlir, [s.randn(2, 3, dtype=np.float64),
                                            s.randn(3, 3, dtype=np.float64)],
              "not broadcast-compatible at run time: dim 0 is 2 vs 3")
# Integer division / remainder by zero is an error.
for attrs, op in [("rounding_mode = #kt.rounding_mode<trunc>", "kt.div"),
                  ("rounding_mode = #kt.rounding_mode<floor>", "kt.div"), ("", "kt.remainder"),
                  ("", "kt.fmod")]:
    for el in INTS:
        xa, xb = as_dtype(np.array([4, 5]), el), as_dtype(np.array([1, 0]), el)
        s.check_error("%s %s by zero %s" % (op, attrs, el),
                      
                      func_text("main", [ttype((2,), el)] * 2, [ttype((2,), el)],
                                ["%%r = %s %%arg0, %%arg1%s : (%s, %s) -> %s" % (
                                    op, " {%s}" % attrs if attrs else "", ttype((2,), el),
                                    ttype((2,), el), ttype((2,), el)),
                                 "return %%r : %s" % ttype((2,), el)]),
                      [xa, xb], "integer division by zero")
s.finish()
