# RUN: %python %s
# REQUIRES: numpy
# stack, gather, index_select and embedding through the CPU backend vs the
# interpreter: several shapes, odd sizes, every element type.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)
T = ttype
ELEMS = [("f32", np.float32), ("f64", np.float64), ("f16", np.float16),
         ("bf16", np.float32), ("i64", np.int64), ("i32", np.int32), ("i1", np.bool_)]


def data(shape, dt):
    if dt == np.bool_:
        return s.randbool(*shape)
    if np.dtype(dt).kind == "i":
        return s.randint(-50, 50, *shape, dtype=dt)
    return s.randn(*shape, dtype=dt)


# stack
for shape, n, dim in [((2, 3), 2, 0), ((2, 3), 3, 1), ((2, 3), 2, -1), ((), 3, 0),
                      ((5,), 1, 0), ((3, 0, 2), 2, 1), ((1, 7, 3), 4, 2)]:
    xs = [s.randn(*shape) for _ in range(n)]
    out = np.stack(xs, axis=dim).shape
    s.check_op("kt.stack", xs, [T(out, "f32")], attrs="dim = %d" % dim)
for elem, dt in ELEMS:
    xs = [data((3, 5), dt) for _ in range(3)]
    s.check_op("kt.stack", xs, [T((3, 3, 5), elem)], attrs="dim = 1",
               arg_types=[T((3, 5), elem)] * 3)
xs = [s.randn(4, 3) for _ in range(2)]
s.check_op("kt.stack", xs, ["tensor<?x2x3xf32>"], attrs="dim = 1",
           arg_types=["tensor<?x3xf32>"] * 2, label="stack dynamic")

# gather
for xs, ishape, dim in [((2, 3), (2, 5), 1), ((4, 3), (7, 2), 0), ((3, 4, 5), (2, 3, 6), -1),
                        ((3, 4, 5), (3, 1, 5), 1), ((5,), (9,), 0), ((5,), (), 0),
                        ((3, 3), (0, 3), 0)]:
    x = s.randn(*xs)
    d = dim % max(len(xs), 1)
    for idt, ie in [(np.int64, "i64"), (np.int32, "i32")]:
        i = s.randint(0, xs[d], *ishape, dtype=idt)
        s.check_op("kt.gather", [x, i], [T(ishape, "f32")], attrs="dim = %d" % dim)
for elem, dt in ELEMS:
    x, i = data((4, 5), dt), s.randint(0, 5, 4, 3)
    s.check_op("kt.gather", [x, i], [T((4, 3), elem)], attrs="dim = 1",
               arg_types=[T((4, 5), elem), T((4, 3), "i64")])
x, i = s.randn(4, 5), s.randint(0, 4, 3, 5)
s.check_op("kt.gather", [x, i], ["tensor<?x?xf32>"], attrs="dim = 0",
           arg_types=["tensor<?x?xf32>", "tensor<?x?xi64>"], label="gather dynamic")

# index_select
for xs, n, dim in [((4, 3), 5, 0), ((4, 3), 2, 1), ((2, 7, 3), 9, -2), ((5,), 3, 0),
                   ((3, 4), 0, 1), ((1, 1), 4, 0)]:
    x = s.randn(*xs)
    d = dim % len(xs)
    for idt in [np.int64, np.int32]:
        i = s.randint(0, xs[d], n, dtype=idt)
        out = list(xs)
        out[d] = n
        s.check_op("kt.index_select", [x, i], [T(tuple(out), "f32")], attrs="dim = %d" % dim)
x, i = s.randn(5, 3), np.array(2, dtype=np.int64)
s.check_op("kt.index_select", [x, i], [T((1, 3), "f32")], attrs="dim = 0")
for elem, dt in ELEMS:
    x, i = data((6, 5), dt), s.randint(0, 5, 7)
    s.check_op("kt.index_select", [x, i], [T((6, 7), elem)], attrs="dim = 1",
               arg_types=[T((6, 5), elem), T((7,), "i64")])
x, i = s.randn(6, 5), s.randint(0, 6, 4)
s.check_op("kt.index_select", [x, i], ["tensor<?x5xf32>"], attrs="dim = 0",
           arg_types=["tensor<?x5xf32>", "tensor<?xi64>"], label="index_select dynamic")

# embedding
for n, e, ishape in [(10, 4, (2, 3)), (7, 5, (9,)), (3, 1, ()), (11, 3, (2, 3, 4)), (5, 2, (0, 3))]:
    w = s.randn(n, e)
    for idt in [np.int64, np.int32]:
        i = s.randint(0, n, *ishape, dtype=idt)
        s.check_op("kt.embedding", [w, i], [T(ishape + (e,), "f32")])
for elem, dt in ELEMS:
    w, i = data((9, 5), dt), s.randint(0, 9, 3, 4)
    s.check_op("kt.embedding", [w, i], [T((3, 4, 5), elem)],
               arg_types=[T((9, 5), elem), T((3, 4), "i64")])
w, i = s.randn(9, 5), s.randint(0, 9, 6)
s.check_op("kt.embedding", [w, i], ["tensor<?x5xf32>"],
           arg_types=["tensor<9x5xf32>", "tensor<?xi64>"], label="embedding dynamic")

s.finish()
