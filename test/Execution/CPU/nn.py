# RUN: %python %s
# REQUIRES: numpy
# matmul (every rank case), linear, softmax and log_softmax through the CPU
# backend vs the interpreter.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)


def mm_shape(a, b):
    a1, b1 = len(a) == 1, len(b) == 1
    A = (1,) + a if a1 else a
    B = b + (1,) if b1 else b
    batch = np.broadcast_shapes(A[:-2], B[:-2])
    out = tuple(batch) + (A[-2], B[-1])
    if a1:
        out = out[:-2] + out[-1:]
    if b1:
        out = out[:-1]
    return out


CASES = [((5,), (5,)), ((3, 4), (4, 6)), ((4,), (4, 3)), ((3, 4), (4,)),
         ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (2, 4, 3)),
         ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (4,)), ((0, 3), (3, 2)),
         ((3, 0), (0, 2)), ((1, 7, 9), (3, 9, 5))]
for a, b in CASES:
    x, y = s.randn(*a), s.randn(*b)
    s.check_op("kt.matmul", [x, y], [ttype(mm_shape(a, b), "f32")])
for elem, dt in [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32),
                 ("i64", np.int64), ("i32", np.int32)]:
    if elem[0] == "i":
        x, y = s.randint(-9, 9, 2, 3, 5, dtype=dt), s.randint(-9, 9, 5, 4, dtype=dt)
    else:
        x, y = s.randn(2, 3, 5, dtype=dt), s.randn(5, 4, dtype=dt)
    s.check_op("kt.matmul", [x, y], [ttype((2, 3, 4), elem)],
               arg_types=[ttype((2, 3, 5), elem), ttype((5, 4), elem)])
# dynamic
x, y = s.randn(6, 5), s.randn(5, 3)
s.check_op("kt.matmul", [x, y], ["tensor<?x?xf32>"],
           arg_types=["tensor<?x?xf32>", "tensor<?x?xf32>"], label="matmul dynamic 2d")
x, y = s.randn(2, 6, 5), s.randn(2, 5, 3)
s.check_op("kt.matmul", [x, y], ["tensor<?x6x?xf32>"],
           arg_types=["tensor<?x6x5xf32>", "tensor<?x5x?xf32>"], label="matmul dynamic batch")

# linear
for xs, bias in [((3, 4), True), ((3, 4), False), ((4,), True), ((2, 3, 4), True), ((0, 4), True)]:
    x, w, b = s.randn(*xs), s.randn(5, 4), s.randn(5)
    out = xs[:-1] + (5,)
    ins = [x, w, b] if bias else [x, w]
    s.check_op("kt.linear", ins, [ttype(out, "f32")])
for elem, dt in [("f64", np.float64), ("bf16", np.float32), ("f16", np.float16)]:
    x, w, b = s.randn(3, 8, dtype=dt), s.randn(6, 8, dtype=dt), s.randn(6, dtype=dt)
    s.check_op("kt.linear", [x, w, b], [ttype((3, 6), elem)],
               arg_types=[ttype((3, 8), elem), ttype((6, 8), elem), ttype((6,), elem)])
x, w, b = s.randn(7, 4), s.randn(5, 4), s.randn(5)
s.check_op("kt.linear", [x, w, b], ["tensor<?x5xf32>"],
           arg_types=["tensor<?x4xf32>", "tensor<5x4xf32>", "tensor<5xf32>"],
           label="linear dynamic")

# softmax, log_softmax
for op in ["softmax", "log_softmax"]:
    for shape, dim in [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -2), ((), 0), ((7,), 0), ((0, 4), 1)]:
        x = s.randn(*shape)
        if shape == (3, 5):
            x[0, :] = -np.inf
            x[1, 2] = np.nan
            x[2, 1] = np.inf
        s.check_op("kt." + op, [x], [ttype(shape, "f32")], attrs="dim = %d" % dim)
    for elem, dt in [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]:
        x = s.randn(4, 9, dtype=dt) * 4
        s.check_op("kt." + op, [x.astype(dt)], [ttype((4, 9), elem)], attrs="dim = -1",
                   arg_types=[ttype((4, 9), elem)])
    x = s.randn(5, 6)
    s.check_op("kt." + op, [x], ["tensor<?x?xf32>"], attrs="dim = 1",
               arg_types=["tensor<?x?xf32>"], label="%s dynamic" % op)

s.finish()
