# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.nonzero (a result whose first dim is only known when it runs)
# against np.argwhere in the interpreter and the CPU backend: all zeros (0 rows), all non-zero,
# 1-D, 3-D, rank 0, bool, ints, floats with NaN (non-zero) and -0.0 (zero),
# empty operands, `?` operand dims, and ops downstream of the data-dependent
# size (a sum of the indices).
# Every case also runs on the CPU backend (compared with the interpreter).

import math

import numpy as np
from elementwise_helpers import FLOATS, INTS, as_dtype
from kiln_testing import Suite, func_text, ttype

s = Suite(__file__, cpu=True)


def ref(x):
    return np.argwhere(np.asarray(x)).astype(np.int64)


def case(label, x, el, dynamic=False):
    xt = ttype(x.shape, el)
    if dynamic and x.ndim:
        xt = "tensor<%s>" % "x".join(["?"] * x.ndim + [el])
    rt = "tensor<?x%dxi64>" % x.ndim
    s.check("kt.nonzero %s %s" % (label, el),
            func_text("main", [xt], [rt], [
                "%%r = kt.nonzero %%arg0 : (%s) -> %s" % (xt, rt),
                "return %%r : %s" % rt]), [x], ref(x))


for el in FLOATS + INTS:
    case("1-D", as_dtype(np.array([0, 3, 0, 0, 1, 2, 0]), el), el)
    case("all zeros", as_dtype(np.zeros((3, 4)), el), el)
    case("all non-zero", as_dtype(np.arange(1, 13).reshape(3, 4), el), el)
    x3 = as_dtype(s.randint(-1, 2, 2, 3, 4), el)
    case("3-D", x3, el)
    case("3-D ?", x3, el, dynamic=True)
    case("empty", as_dtype(np.zeros((2, 0, 3)), el), el)
    case("rank 0 zero", np.asarray(as_dtype(np.array(0), el)), el)
    case("rank 0 non-zero", np.asarray(as_dtype(np.array(5), el)), el)

for el in ("f32", "f64", "f16"):
    x = as_dtype(np.array([[0.0, -0.0, math.nan], [1e-30, -math.inf, 0.0]]), el)
    case("NaN and -0.0", x, el)
for el in INTS:
    case("negative", as_dtype(np.array([-1, 0, -128 if el != "ui8" else 200]), el), el)

b = s.randint(0, 2, 3, 5).astype(bool)
case("bool", b, "i1")
case("bool all false", np.zeros((4,), dtype=bool), "i1")
case("bool rank 0", np.asarray(True), "i1")

# Downstream ops on the data-dependent size: the sum of the indices and
# masked_select (a gather of the flattened operand by the flat positions).
x = s.randn(4, 6)
x[x < 0.3] = 0.0
s.check("kt.nonzero downstream sum",
        func_text("main", ["tensor<4x6xf32>"], ["tensor<i64>"], [
            "%n = kt.nonzero %arg0 : (tensor<4x6xf32>) -> tensor<?x2xi64>",
            "%r = kt.sum %n : (tensor<?x2xi64>) -> tensor<i64>",
            "return %r : tensor<i64>"]), [x],
        np.asarray(ref(x).sum(), dtype=np.int64))
s.finish()
