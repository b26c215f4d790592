# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests the float-only unary kt ops (exp ... reciprocal, gelu) against
# PyTorch computed in float64 and rounded to the dtype: every float dtype,
# 2-D / rank-0 / empty shapes, NaN, +-inf, -0.0.

import numpy as np
import torch
from elementwise_helpers import (FLOATS, INTS, NPD, TD, as_dtype, check_multi,
                                 const_text, ref64, refnative, to_np, to_torch)
from kiln_testing import Suite, ttype, func_text, to_bf16

import math

s = Suite(__file__, cpu=True)
F = torch.nn.functional
OPS = {
    "exp": torch.exp, "log": torch.log, "log1p": torch.log1p,
    "expm1": torch.expm1, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "silu": F.silu, "erf": torch.erf,
    "reciprocal": torch.reciprocal,
}
specials = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1e-4, -1e-4,
            2.5, 20.0, -20.0, 100.0, -100.0]

for el in FLOATS:
    base = np.concatenate([s.randn(21) * 3, np.array(specials)])
    x = as_dtype(base.reshape(5, 7), el)
    x0 = as_dtype(np.array(0.75), el)
    xe = as_dtype(np.zeros((0, 3)), el)
    pos = as_dtype(s.uniform(0.01, 50, 2, 3), el)
    for name, fn in OPS.items():
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape), ([pos], pos.shape)]
        exp = [ref64(fn, [g[0][0]], el, el) for g in groups]
        check_multi(s, "kt." + name, groups, el, el, exp)
    for approx in ["none", "tanh"]:
        fn = lambda t: F.gelu(t, approximate=approx)
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [ref64(fn, [g[0][0]], el, el) for g in groups]
        attrs = "" if approx == "none" else "approximate = #kt.approximate<tanh>"
        check_multi(s, "kt.gelu", groups, el, el, exp, attrs=attrs)

# Explicit values a wrong implementation would get wrong.
x = np.array([-0.0, 0.0, math.inf, -math.inf, math.nan, 1.0], dtype=np.float64)
s.check_op("kt.reciprocal", [x], np.array([-math.inf, math.inf, 0.0, -0.0, math.nan, 1.0]),
           [ttype((6,), "f64")])
s.check_op("kt.sqrt", [x], np.array([-0.0, 0.0, math.inf, math.nan, math.nan, 1.0]),
           [ttype((6,), "f64")])
s.check_op("kt.sigmoid", [x], np.array([0.5, 0.5, 1.0, 0.0, math.nan, 1 / (1 + math.exp(-1))]),
           [ttype((6,), "f64")])
s.check_op("kt.gelu", [np.array([1.0])], np.array([0.8413447460685429]), [ttype((1,), "f64")])
s.check_op("kt.gelu", [np.array([1.0])], np.array([0.8411919906082768]), [ttype((1,), "f64")],
           attrs="approximate = #kt.approximate<tanh>")
# Dynamic dims in the function signature.
xd = s.randn(3, 4, dtype=np.float64)
mlir = func_text("main", ["tensor<?x4xf64>"], ["tensor<?x4xf64>"],
                 ["%r = kt.exp %arg0 : (tensor<?x4xf64>) -> tensor<?x4xf64>",
                  "return %r : tensor<?x4xf64>"])
s.check("exp dynamic", mlir, [xd], np.exp(xd))
s.finish()
