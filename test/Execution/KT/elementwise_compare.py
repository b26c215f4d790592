# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the comparison and logical kt ops (eq ne lt le gt ge logical_and
# logical_or, i1 results) and kt.where against PyTorch on every dtype with
# broadcasting, rank 0, empty tensors, NaN, -0.0 == 0.0 and ties.

import numpy as np
import torch
from elementwise_helpers import (FLOATS, INTS, NPD, TD, as_dtype, check_multi,
                                 const_text, ref64, refnative, to_np, to_torch)
from kiln_testing import Suite, ttype, func_text, to_bf16

import math

s = Suite(__file__, cpu=True)
SHAPES = [((3, 5), (3, 5)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((0, 3), (1, 3)),
          ((4,), ())]


def operand(el, shape):
    n = int(np.prod(shape)) if shape else 1
    if el == "i1":
        v = s.randint(0, 2, n).astype(bool)
    elif el in FLOATS:
        v = s.randint(-2, 3, n).astype(np.float64)  # many ties
        sp = [math.nan, -0.0, 0.0, math.inf, -math.inf, 0.5]
        if n >= 15:
            v[:len(sp)] = sp
    else:
        v = s.randint(-2, 3, n)
    if not shape:
        v = np.array([True] if el == "i1" else [1])
    return as_dtype(v.reshape(shape), el)


OPS = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
       "gt": torch.gt, "ge": torch.ge, "logical_and": torch.logical_and,
       "logical_or": torch.logical_or}
for el in FLOATS + INTS + ["i1"]:
    for name, fn in OPS.items():
        groups, exp = [], []
        for sa, sb in SHAPES:
            a, b = operand(el, sa), operand(el, sb)
            groups.append(([a, b], np.broadcast_shapes(sa, sb)))
            exp.append(refnative(fn, [a, b], el))
        check_multi(s, "kt." + name, groups, el, "i1", exp)

# Explicit: NaN compares unequal, -0.0 == 0.0, NaN is true for logical ops.
a = np.array([math.nan, -0.0, 1.0, math.nan, 0.0])
b = np.array([math.nan, 0.0, math.nan, 0.0, 0.0])
for name, want in [("eq", [0, 1, 0, 0, 1]), ("ne", [1, 0, 1, 1, 0]), ("lt", [0, 0, 0, 0, 0]),
                   ("le", [0, 1, 0, 0, 1]), ("logical_and", [1, 0, 1, 0, 0]),
                   ("logical_or", [1, 0, 1, 1, 0])]:
    s.check_op("kt." + name, [a, b], np.array(want, dtype=bool), [ttype((5,), "i1")])

# where: three-way broadcasting, every dtype.
WSHAPES = [((3, 4), (3, 4), (3, 4)), ((2, 1, 1), (3, 1), (4,)), ((), (2, 3), ()),
           ((0, 1), (1, 3), (3,)), ((4,), (), (1,))]
for el in FLOATS + INTS + ["i1"]:
    groups, exp = [], []
    for sc, sa, sb in WSHAPES:
        c = operand("i1", sc)
        x, y = operand(el, sa), operand(el, sb)
        if not sb:
            y = as_dtype(np.array(False if el == "i1" else -5), el)
        groups.append(([c, x, y], np.broadcast_shapes(sc, sa, sb)))
        exp.append(to_np(torch.where(to_torch(c, "i1"), to_torch(x, el), to_torch(y, el))))
    # where has operands of two element types: build the module by hand.
    arg_types, inputs, lines, rtypes = [], [], [], []
    for k, (ops, rshape) in enumerate(groups):
        names, tys = [], []
        for j, (v, e) in enumerate(zip(ops, ["i1", el, el])):
            t = ttype(v.shape, e)
            tys.append(t)
            if v.ndim == 0:
                lines.append("%%c%d_%d = kt.constant {value = dense<%s> : %s} : () -> %s"
                             % (k, j, const_text(v, e), t, t))
                names.append("%%c%d_%d" % (k, j))
            else:
                names.append("%%arg%d" % len(inputs))
                arg_types.append(t)
                inputs.append(v)
        rt = ttype(rshape, el)
        rtypes.append(rt)
        lines.append("%%r%d = kt.where %s : (%s) -> %s" % (k, ", ".join(names), ", ".join(tys), rt))
    lines.append("return %s : %s" % (", ".join("%%r%d" % k for k in range(len(groups))),
                                     ", ".join(rtypes)))
    s.check("kt.where " + el, func_text("main", arg_types, rtypes, lines), inputs, exp,
            elem="bf16" if el == "bf16" else None)
# where keeps NaN / -0.0 of the selected operand.
c = np.array([True, False, True])
x = np.array([math.nan, 1.0, -0.0])
y = np.array([2.0, math.nan, 3.0])
r = s.check_op("kt.where", [c, x, y], np.array([math.nan, math.nan, -0.0]), [ttype((3,), "f64")])
s.record("where -0.0", r is not None and np.signbit(r[0][2]), str(r))
s.finish()
