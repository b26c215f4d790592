# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of the pointwise kt ops: the gradients of
# each op's joint function (kiln-autodiff) against central finite differences
# of the op run by kiln-run and against torch.autograd, in f64, with
# broadcasting and PyTorch's tie rules (maximum/minimum, clamp bounds,
# relu at 0); fmod and atan2 with operands of every sign.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


def pos(*shape):
    return s.uniform(0.5, 2.0, *shape, dtype=np.float64)


UNARY = [
    ("kt.neg", torch.neg, rnd),
    ("kt.abs", torch.abs, rnd),
    ("kt.exp", torch.exp, rnd),
    ("kt.log", torch.log, pos),
    ("kt.log1p", torch.log1p, pos),
    ("kt.expm1", torch.expm1, rnd),
    ("kt.sqrt", torch.sqrt, pos),
    ("kt.rsqrt", torch.rsqrt, pos),
    ("kt.sin", torch.sin, rnd),
    ("kt.cos", torch.cos, rnd),
    ("kt.tanh", torch.tanh, rnd),
    ("kt.sigmoid", torch.sigmoid, rnd),
    ("kt.relu", torch.relu, rnd),
    ("kt.silu", F.silu, rnd),
    ("kt.erf", torch.erf, rnd),
    ("kt.reciprocal", torch.reciprocal, pos),
    ("kt.floor", torch.floor, rnd),
    ("kt.ceil", torch.ceil, rnd),
    ("kt.round", torch.round, rnd),
    ("kt.sign", torch.sign, rnd),
]
for op, fn, gen in UNARY:
    for shape in [(3, 4), (5,)]:
        s.unary(op, gen(*shape), fn)
s.unary("kt.abs", rnd(), torch.abs)  # rank 0
for approx in ["none", "tanh"]:
    s.unary("kt.gelu", rnd(3, 4), lambda x: F.gelu(x, approximate=approx),
            attrs="approximate = #kt.approximate<%s>" % approx)
s.unary("kt.clamp", rnd(4, 5), lambda x: torch.clamp(x, -0.5, 0.7),
        attrs="min = -0.5 : f64, max = 0.7 : f64")
s.unary("kt.clamp", rnd(4, 5), lambda x: torch.clamp(x, min=0.1),
        attrs="min = 0.1 : f64")
s.unary("kt.clamp", rnd(4, 5), lambda x: torch.clamp(x, max=0.1),
        attrs="max = 0.1 : f64")

# Ties and kinks exactly at the boundary (no finite differences there):
# relu'(0) = 0, clamp passes the gradient at its bounds, abs'(0) = 0.
x = np.array([-1.0, 0.0, 0.5, 1.0])
s.unary("kt.relu", x, torch.relu, fd=False)
s.unary("kt.abs", x, torch.abs, fd=False)
s.unary("kt.clamp", x, lambda t: torch.clamp(t, 0.0, 0.5),
        attrs="min = 0.0 : f64, max = 0.5 : f64", fd=False)


def binary(op, fn, a, b, **kw):
    ta, tb = ttype(a.shape, "f64"), ttype(b.shape, "f64")
    rs = np.broadcast_shapes(a.shape, b.shape)
    tr = ttype(rs, "f64")
    s.gradcheck("%s %s %s" % (op, a.shape, b.shape),
                ["%%0 = %s %%arg0, %%arg1 : (%s, %s) -> %s" % (op, ta, tb, tr),
                 "return %%0 : %s" % tr], [a, b], [tr], fn, **kw)


BINARY = [
    ("kt.add", torch.add, rnd, rnd),
    ("kt.sub", torch.sub, rnd, rnd),
    ("kt.mul", torch.mul, rnd, rnd),
    ("kt.div", torch.div, rnd, pos),
    ("kt.pow", torch.pow, pos, rnd),
    ("kt.maximum", torch.maximum, rnd, rnd),
    ("kt.minimum", torch.minimum, rnd, rnd),
    ("kt.remainder", torch.remainder, pos, lambda *s_: pos(*s_) + 1.0),
    # fmod: dividends of both signs, divisors of both signs (other's
    # gradient is -g * trunc(self / other)).
    ("kt.fmod", torch.fmod, lambda *s_: rnd(*s_) * 3,
     lambda *s_: (pos(*s_) + 0.5) * np.where(rnd(*s_) < 0, -1.0, 1.0)),
    ("kt.atan2", torch.atan2, rnd, rnd),
]
SHAPES = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)),
          ((2, 1, 3), (4, 1))]
for op, fn, ga, gb in BINARY:
    for sa, sb in SHAPES:
        binary(op, fn, ga(*sa), gb(*sb))

# Ties: maximum/minimum give each operand half the gradient.
a = np.array([1.0, 2.0, 3.0, -1.0])
b = np.array([1.0, 1.0, 3.0, 0.0])
binary("kt.maximum", torch.maximum, a, b, fd=False)
binary("kt.minimum", torch.minimum, a, b, fd=False)
# pow at 0 with exponents 0 and 2 (pow_backward's special cases).
binary("kt.pow", torch.pow, np.array([0.0, 0.0, 1.5]), np.array([0.0, 2.0, 2.0]),
       fd=False)
# Rounded division has gradient zero.
for mode in ["trunc", "floor"]:
    a, b = rnd(3, 4), pos(3, 4)
    t = ttype((3, 4), "f64")
    s.gradcheck("div rounding %s" % mode,
                ["%%0 = kt.div %%arg0, %%arg1 {rounding_mode = #kt.rounding_mode<%s>} : (%s, %s) -> %s"
                 % (mode, t, t, t), "return %%0 : %s" % t], [a, b], [t],
                lambda x, y: torch.div(x, y, rounding_mode=mode))

# where: the gradient goes to the selected side, broadcast both ways.
for sc, sx, sy in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((4,), (), (2, 4))]:
    c = s.rng.random(sc) > 0.5
    x, y = rnd(*sx), rnd(*sy)
    rs = np.broadcast_shapes(sc, sx, sy)
    tr = ttype(rs, "f64")
    s.gradcheck("where %s %s %s" % (sc, sx, sy),
                ["%%0 = kt.where %%arg0, %%arg1, %%arg2 : (%s, %s, %s) -> %s"
                 % (ttype(sc, "i1"), ttype(sx, "f64"), ttype(sy, "f64"), tr),
                 "return %%0 : %s" % tr], [c, x, y], [tr],
                lambda c_, x_, y_: torch.where(c_, x_, y_))

# cast f64 -> f32 -> f64: the gradient is cast back at each step (f32
# rounding of the gradient: loose tolerances, no finite differences).
x = rnd(3, 4)
s.gradcheck("cast f64->f32->f64",
            ["%0 = kt.cast %arg0 {dtype = f32} : (tensor<3x4xf64>) -> tensor<3x4xf32>",
             "%1 = kt.exp %0 : (tensor<3x4xf32>) -> tensor<3x4xf32>",
             "%2 = kt.cast %1 {dtype = f64} : (tensor<3x4xf32>) -> tensor<3x4xf64>",
             "return %2 : tensor<3x4xf64>"], [x], ["tensor<3x4xf64>"],
            lambda t: torch.exp(t.float()).double(), fd=False,
            torch_rtol=1e-6, torch_atol=1e-6, out_rtol=1e-6)

# Comparisons feed no gradient; an op chain with reuse accumulates.
x, y = rnd(3, 4), rnd(3, 4)
t = "tensor<3x4xf64>"
s.gradcheck("chain with reuse",
            ["%%0 = kt.mul %%arg0, %%arg1 : (%s, %s) -> %s" % (t, t, t),
             "%%1 = kt.sin %%0 : (%s) -> %s" % (t, t),
             "%%2 = kt.gt %%arg0, %%arg1 : (%s, %s) -> tensor<3x4xi1>" % (t, t),
             "%%3 = kt.where %%2, %%1, %%arg0 : (tensor<3x4xi1>, %s, %s) -> %s" % (t, t, t),
             "%%4 = kt.mul %%3, %%arg0 : (%s, %s) -> %s" % (t, t, t),
             "return %%4, %%1 : %s, %s" % (t, t)], [x, y], [t, t],
            lambda a, b: (torch.where(a > b, torch.sin(a * b), a) * a,
                          torch.sin(a * b)))
s.finish()
