# RUN: %python %s
# REQUIRES: numpy
# Every pointwise kt op through the CPU backend (kiln-cpu + JIT) vs the
# interpreter on the same inputs: odd sizes, empty tensors, NaN/inf,
# broadcasting, dynamic dims, every dtype an op accepts.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)

FLOAT_UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
               "tanh", "sigmoid", "relu", "silu", "erf", "reciprocal", "floor",
               "ceil", "round", "sign", "neg", "abs"]
INT_UNARY = ["neg", "abs", "relu", "floor", "ceil", "round", "sign"]

for op in FLOAT_UNARY:
    for shape in [(7,), (3, 5), (0, 4)]:
        x = s.randn(*shape, special=True)
        if op in ("log", "log1p", "sqrt", "rsqrt"):
            x = np.abs(x) if shape != (7,) else x  # (7,) keeps negatives: NaN
        s.check_op("kt." + op, [x], [ttype(shape, "f32")])
    for elem, dt in [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]:
        x = s.randn(2, 9, dtype=dt)
        s.check_op("kt." + op, [x], [ttype((2, 9), elem)],
                   arg_types=[ttype((2, 9), elem)])
    # dynamic dims
    x = s.randn(3, 6)
    s.check_op("kt." + op, [x], ["tensor<?x?xf32>"], arg_types=["tensor<?x?xf32>"],
               label="kt.%s dynamic" % op)

for op in INT_UNARY:
    for dt, elem in [(np.int64, "i64"), (np.int32, "i32")]:
        x = s.randint(-50, 50, 4, 5, dtype=dt)
        x.reshape(-1)[0] = np.iinfo(dt).min
        s.check_op("kt." + op, [x], [ttype((4, 5), elem)])

for approx in ["", "approximate = #kt.approximate<tanh>"]:
    for elem, dt in [("f32", np.float32), ("f64", np.float64), ("bf16", np.float32)]:
        x = s.randn(5, 3, dtype=dt, special=True)
        s.check_op("kt.gelu", [x], [ttype((5, 3), elem)], attrs=approx,
                   arg_types=[ttype((5, 3), elem)])

for op in ["logical_not", "isnan"]:
    for x, elem in [(s.randn(3, 4, special=True), "f32"), (s.randint(-2, 3, 5), "i64"),
                    (s.randbool(6), "i1")]:
        s.check_op("kt." + op, [x], [ttype(x.shape, "i1")],
                   arg_types=[ttype(x.shape, elem)])

# binary, broadcasting
SHAPES = [((2, 3), (3,)), ((4, 1, 5), (3, 1)), ((), (2, 2)), ((0, 3), (1, 3)),
          ((7, 5), (7, 5))]
def bshape(a, b):
    return tuple(np.broadcast_shapes(a, b))

for op in ["add", "sub", "mul", "maximum", "minimum", "pow", "remainder", "div",
           "fmod", "atan2"]:
    for a, b in SHAPES:
        x, y = s.randn(*a, special=True), s.randn(*b, special=True)
        s.check_op("kt." + op, [x, y], [ttype(bshape(a, b), "f32")])
    for elem, dt in [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]:
        x, y = s.randn(3, 4, dtype=dt), s.randn(4, dtype=dt)
        s.check_op("kt." + op, [x, y], [ttype((3, 4), elem)],
                   arg_types=[ttype((3, 4), elem), ttype((4,), elem)])
    x, y = s.randn(5, 4), s.randn(5, 4)
    s.check_op("kt." + op, [x, y], ["tensor<?x4xf32>"],
               arg_types=["tensor<?x4xf32>", "tensor<?x4xf32>"],
               label="kt.%s dynamic" % op)

for op in ["add", "sub", "mul", "maximum", "minimum"]:
    for dt, elem in [(np.int64, "i64"), (np.int32, "i32")]:
        x, y = s.randint(-100, 100, 3, 4, dtype=dt), s.randint(-100, 100, 4, dtype=dt)
        s.check_op("kt." + op, [x, y], [ttype((3, 4), elem)])

for dt, elem in [(np.int64, "i64"), (np.int32, "i32")]:
    x = s.randint(-9, 10, 6, 7, dtype=dt)
    y = s.randint(-5, 6, 7, dtype=dt)
    y[y == 0] = 3
    y[0] = -1
    s.check_op("kt.remainder", [x, y], [ttype((6, 7), elem)])
    s.check_op("kt.fmod", [x, y], [ttype((6, 7), elem)])
    for mode in ["trunc", "floor"]:
        s.check_op("kt.div", [x, y], [ttype((6, 7), elem)],
                   attrs="rounding_mode = #kt.rounding_mode<%s>" % mode)
    e = s.randint(-3, 8, 7, dtype=dt)
    s.check_op("kt.pow", [x, e], [ttype((6, 7), elem)])

for mode in ["trunc", "floor"]:
    x, y = s.randn(4, 6, special=True), s.randn(6)
    y[1] = 0.0
    s.check_op("kt.div", [x, y], [ttype((4, 6), "f32")],
               attrs="rounding_mode = #kt.rounding_mode<%s>" % mode)

for op in ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"]:
    x, y = s.randn(3, 5, special=True), s.randn(5)
    y[:2] = x[0, :2]
    s.check_op("kt." + op, [x, y], [ttype((3, 5), "i1")])
    a, b = s.randint(-2, 3, 2, 6), s.randint(-2, 3, 6)
    s.check_op("kt." + op, [a, b], [ttype((2, 6), "i1")])
    p, q = s.randbool(4, 3), s.randbool(1, 3)
    s.check_op("kt." + op, [p, q], [ttype((4, 3), "i1")])

for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    for dt, elem in [(np.int64, "i64"), (np.int32, "i32")]:
        x, y = s.randint(-1000, 1000, 3, 5, dtype=dt), s.randint(-1000, 1000, 5, dtype=dt)
        x.reshape(-1)[0] = np.iinfo(dt).min
        s.check_op("kt." + op, [x, y], [ttype((3, 5), elem)])
    p, q = s.randbool(4, 3), s.randbool(1, 3)
    s.check_op("kt." + op, [p, q], [ttype((4, 3), "i1")])
for x, elem in [(s.randint(-1000, 1000, 3, 5), "i64"),
                (s.randint(-1000, 1000, 7, dtype=np.int32), "i32"), (s.randbool(6), "i1")]:
    s.check_op("kt.bitwise_not", [x], [ttype(x.shape, elem)])
    s.check_op("kt.logical_xor", [x, x[..., ::-1].copy()], [ttype(x.shape, "i1")])
x, y = s.randn(3, 5, special=True), s.randn(5)
y[:2] = 0.0
s.check_op("kt.logical_xor", [x, y], [ttype((3, 5), "i1")])

# where
c, x, y = s.randbool(2, 1), s.randn(3), s.randn()
s.check_op("kt.where", [c, x, y], ["tensor<2x3xf32>"])
c, x, y = s.randbool(4, 5), s.randint(-5, 5, 4, 5), s.randint(-5, 5, 5)
s.check_op("kt.where", [c, x, y], ["tensor<4x5xi64>"])

# clamp
for attrs in ["min = -0.5 : f64", "max = 0.25 : f64",
              "min = -1.0 : f64, max = 1.0 : f64", "min = 1.0 : f64, max = -1.0 : f64"]:
    x = s.randn(3, 7, special=True)
    s.check_op("kt.clamp", [x], ["tensor<3x7xf32>"], attrs=attrs)
    xi = s.randint(-5, 5, 9, dtype=np.int32)
    int_attrs = attrs.replace("-0.5", "-2.0").replace("0.25", "3.0")
    s.check_op("kt.clamp", [xi], ["tensor<9xi32>"], attrs=int_attrs)

# cast: every pair (float->int without NaN/inf/out-of-range values)
ELEMS = [("f32", np.float32), ("f64", np.float64), ("f16", np.float16),
         ("i64", np.int64), ("i32", np.int32), ("i1", np.bool_)]
for src, sdt in ELEMS + [("bf16", np.float32)]:
    for dst, _ in ELEMS + [("bf16", None)]:
        if src == dst:
            continue
        if sdt == np.bool_:
            x = s.randbool(3, 4)
        elif np.issubdtype(sdt, np.integer):
            x = s.randint(-1000, 1000, 3, 4, dtype=sdt)
        else:
            x = (s.randn(3, 4) * 100).astype(sdt)
            if dst in ("f32", "f64", "f16", "bf16", "i1"):
                x.reshape(-1)[:3] = [np.nan, np.inf, -0.0]
        s.check_op("kt.cast", [x], [ttype((3, 4), dst)], attrs="dtype = " + dst,
                   arg_types=[ttype((3, 4), src)])

s.finish()
