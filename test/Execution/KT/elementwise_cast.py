# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.cast between every pair of dtypes against PyTorch .to(dtype):
# truncation toward zero, != 0 for i1, rounding and overflow to inf.

import numpy as np
import torch
from elementwise_helpers import (FLOATS, INTS, NPD, TD, as_dtype, check_multi,
                                 const_text, ref64, refnative, to_np, to_torch)
from kiln_testing import Suite, ttype, func_text, to_bf16

import math

s = Suite(__file__, cpu=True)
# cast: every pair of dtypes, PyTorch .to(dtype).
ALL = FLOATS + INTS + ["i1"]
for src in ALL:
    if src in FLOATS:
        v = np.array([[0.0, -0.0, 1.0, -1.0, 2.7, -2.7, 0.4, -0.6], [100.5, -100.5, 3.0, 65.25, -7.9, 1e-3, 0.5, 1.5]])
    elif src == "i1":
        v = np.array([[True, False, True, False]])
    else:
        v = np.array([[0, 1, -1, 7, -7, 100, 255, -129, 3, 65, 1000, 2048, 4097, 257, -2, 9]])
    x = as_dtype(v, src)
    x0 = as_dtype(np.array(1), src)
    xe = as_dtype(np.zeros((0, 3)), src)
    for dst in ALL:
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [refnative(lambda t: t.to(TD[dst]), [g[0][0]], src) for g in groups]
        check_multi(s, "kt.cast", groups, src, dst, exp, attrs="dtype = %s" % dst)
# float -> i1 of NaN/inf is true; f64 -> f16/bf16 overflow gives inf.
x = np.array([math.nan, math.inf, -0.0, 70000.0, 1e39])
s.check_op("kt.cast", [x], np.array([True, True, False, True, True]), [ttype((5,), "i1")],
           attrs="dtype = i1")
s.check_op("kt.cast", [x], torch.from_numpy(x).to(torch.float16).numpy(), [ttype((5,), "f16")],
           attrs="dtype = f16")
s.check_op("kt.cast", [x], torch.from_numpy(x).to(torch.float32).numpy(), [ttype((5,), "f32")],
           attrs="dtype = f32")
s.finish()
