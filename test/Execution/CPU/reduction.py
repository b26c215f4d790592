# RUN: %python %s
# REQUIRES: numpy
# Reductions through the CPU backend vs the interpreter: dim lists, keepdim,
# all dims, rank 0, empty reductions, NaN/inf, dynamic dims, dtypes.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)


def out_shape(shape, dims, keepdim):
    rank = len(shape)
    if dims is None or dims == []:
        red = set(range(rank))
    else:
        red = {d % rank for d in dims} if rank else set()
    return tuple((1 if keepdim else None) if i in red else n
                 for i, n in enumerate(shape) if keepdim or i not in red)


def attrs(dims, keepdim, extra=""):
    parts = []
    if dims is not None:
        parts.append("dim = [%s]" % ", ".join(map(str, dims)))
    if keepdim:
        parts.append("keepdim = true")
    if extra:
        parts.append(extra)
    return ", ".join(parts)


CASES = [((3, 5), [1], False), ((3, 5), [0], True), ((2, 3, 4), [0, 2], False),
         ((2, 3, 4), None, False), ((2, 3, 4), None, True), ((4, 7), [-1], True),
         ((), None, False), ((0, 3), [0], False), ((5, 1), [1], False)]

ELEM_RULE = {"sum": "int64", "prod": "int64", "mean": "same", "amax": "same",
             "amin": "same", "any": "i1", "all": "i1", "var": "same",
             "logsumexp": "same"}

for op, rule in ELEM_RULE.items():
    for shape, dims, keep in CASES:
        if op in ("amax", "amin") and 0 in shape:
            continue  # a run-time error in the interpreter
        x = s.randn(*shape, special=(op not in ("var",)))
        oshape = out_shape(shape, dims, keep)
        oel = "i1" if rule == "i1" else "f32"
        extra = "correction = 0.0" if op == "var" and shape == (4, 7) else ""
        s.check_op("kt." + op, [x], [ttype(oshape, oel)], attrs=attrs(dims, keep, extra))
    if op in ("mean", "var", "logsumexp"):
        dtypes = [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]
    else:
        dtypes = [("f64", np.float64), ("bf16", np.float32), ("i64", np.int64),
                  ("i32", np.int32), ("i1", np.bool_)]
    for elem, dt in dtypes:
        if dt == np.bool_:
            x = s.randbool(4, 6)
        elif np.issubdtype(dt, np.integer):
            x = s.randint(-5, 6, 4, 6, dtype=dt)
        else:
            x = s.randn(4, 6, dtype=dt)
        if rule == "i1":
            oel = "i1"
        elif rule == "int64" and elem in ("i64", "i32", "i1"):
            oel = "i64"
        else:
            oel = elem
        s.check_op("kt." + op, [x], [ttype((4,), oel)], attrs="dim = [1]",
                   arg_types=[ttype((4, 6), elem)])
    # dynamic
    x = s.randn(5, 6)
    s.check_op("kt." + op, [x], ["tensor<?x1xf32>" if rule != "i1" else "tensor<?x1xi1>"],
               attrs="dim = [1], keepdim = true", arg_types=["tensor<?x?xf32>"],
               label="kt.%s dynamic" % op)

for op in ["argmax", "argmin"]:
    for shape, dim, keep in [((3, 5), 1, False), ((3, 5), 0, True), ((2, 3, 4), None, False),
                             ((2, 3, 4), None, True), ((7,), 0, False), ((2, 4), -1, True)]:
        x = s.randn(*shape)
        x.reshape(-1)[1] = x.reshape(-1)[2]  # a tie
        if shape == (2, 3, 4):
            x[1, 1, 1] = np.nan
            x[1, 2, 2] = np.nan
        a = "dim = %d" % dim if dim is not None else ""
        if keep:
            a = (a + ", " if a else "") + "keepdim = true"
        if dim is None:
            oshape = (1,) * len(shape) if keep else ()
        else:
            oshape = tuple(1 if i == dim % len(shape) else n for i, n in enumerate(shape)
                           if keep or i != dim % len(shape))
        s.check_op("kt." + op, [x], [ttype(oshape, "i64")], attrs=a)
    for elem, dt in [("i32", np.int32), ("i64", np.int64), ("f64", np.float64)]:
        x = s.randint(-3, 3, 5, 4, dtype=dt) if elem[0] == "i" else s.randn(5, 4, dtype=dt)
        s.check_op("kt." + op, [x], ["tensor<5xi64>"], attrs="dim = 1",
                   arg_types=[ttype((5, 4), elem)])
    x = s.randn(6, 3)
    s.check_op("kt." + op, [x], ["tensor<?xi64>"], attrs="dim = 1",
               arg_types=["tensor<?x3xf32>"], label="kt.%s dynamic" % op)
    x = s.randn(6, 3)
    s.check_op("kt." + op, [x], ["tensor<i64>"], arg_types=["tensor<?x3xf32>"],
               label="kt.%s dynamic all" % op)

s.finish()
