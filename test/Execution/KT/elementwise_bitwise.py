# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the bitwise kt ops (bitwise_and/or/xor/not, on i32, i64 and i1) and
# kt.logical_xor (every dtype, NaN counts as true) against PyTorch: same
# shapes, size-1 and missing dims, rank 0, empty; negative integers and the
# integer extremes; the interpreter and the CPU backend.

import math

import numpy as np
import torch
from elementwise_helpers import (FLOATS, INTS, as_dtype, check_multi, refnative,
                                 to_torch, to_np)
from kiln_testing import Suite, ttype

s = Suite(__file__, cpu=True)
SHAPES = [((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((0, 3), (1, 3)),
          ((4,), ())]
BITS = ["i32", "i64", "i1"]


def operands(el, shape):
    n = int(np.prod(shape)) if shape else 1
    if el == "i1":
        v = s.randint(0, 2, n).astype(bool)
    elif el in INTS:
        info = np.iinfo(np.int32 if el == "i32" else np.int64)
        v = s.randint(-1000, 1000, n)
        if n >= 6:
            v[:4] = [int(info.min), int(info.max), -1, 0]
    else:
        v = s.randn(n) * 2
        sp = [math.nan, math.inf, -math.inf, -0.0, 0.0]
        if n >= 8:
            v[:len(sp)] = sp
            v[len(sp)] = 0.0
    if not shape:
        v = v[:1]
    return as_dtype(v.reshape(shape), el)


def bshape(a, b):
    return np.broadcast_shapes(a, b)


for name, fn in (("bitwise_and", torch.bitwise_and), ("bitwise_or", torch.bitwise_or),
                 ("bitwise_xor", torch.bitwise_xor)):
    for el in BITS:
        groups, exp = [], []
        for sa, sb in SHAPES:
            a, b = operands(el, sa), operands(el, sb)
            groups.append(([a, b], bshape(sa, sb)))
            exp.append(refnative(fn, [a, b], el))
        check_multi(s, "kt." + name, groups, el, el, exp)

for el in BITS:
    for shape in [(3, 5), (0, 2), (7,)]:
        x = operands(el, shape)
        s.check_op("kt.bitwise_not", [x], refnative(torch.bitwise_not, [x], el),
                   [ttype(shape, el)], elems=[el])

for el in FLOATS + INTS + ["i1"]:
    groups, exp = [], []
    for sa, sb in SHAPES:
        a, b = operands(el, sa), operands(el, sb)
        groups.append(([a, b], bshape(sa, sb)))
        exp.append(to_np(torch.logical_xor(to_torch(a, el), to_torch(b, el))))
    check_multi(s, "kt.logical_xor", groups, el, "i1", exp)

# Dynamic dims broadcast at run time.
x = np.array([[12, -3, 7]], dtype=np.int64)
y = np.array([[10], [-1], [0]], dtype=np.int64)
for name, fn in (("bitwise_and", np.bitwise_and), ("bitwise_xor", np.bitwise_xor)):
    s.check("%s dynamic" % name,
            "func.func @main(%%a: tensor<?x?xi64>, %%b: tensor<?x1xi64>) -> tensor<?x?xi64> {\n"
            "  %%r = kt.%s %%a, %%b : (tensor<?x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi64>\n"
            "  return %%r : tensor<?x?xi64>\n}\n" % name, [x, y], fn(x, y))
s.finish()
