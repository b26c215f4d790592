# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Edge cases of the kt reductions (sum mean amax amin prod var logsumexp any all
# argmax argmin) against PyTorch in float64: shapes (rank 0, empty dims),
# dim lists (absent, negative, several), keepdim, every supported dtype, NaN /
# inf / ties, and the run-time errors of empty amax/argmax.
# (reduction.py has the dtype x shape sweep.)

import numpy as np
import torch
from kiln_testing import Suite, ttype, single_op_module, to_bf16

from reduction_helpers import (FLOATS, NP, bf16, check, make, module, norm_dims, ref, result_elem)
import reduction_helpers

s = Suite(__file__, cpu=True)
reduction_helpers.use_suite(s)
# dynamic dims
x = s.randn(3, 5)
for op in ["sum", "mean", "amax", "var", "logsumexp", "prod", "any"]:
    check(op, x, "f32", [1], False, dyn=True)
    check(op, x, "f32", [0, 1], True, dyn=False)

# var corrections, incl. N - correction <= 0 (inf / nan)
x = s.randn(4, 3, dtype=np.float64)
for c in [0.0, 1.0, 2.5, 4.0, 5.0]:
    check("var", x, "f64", [0], False, correction=c)
check("var", np.array([1.0, 2.0]), "f64", [0], correction=2.0, expected=np.inf)
check("var", np.array([3.0]), "f64", [0], expected=np.nan)
check("var", np.zeros((0, 2)), "f64", [0], expected=[np.nan, np.nan])
check("var", np.array([1.0, np.inf]), "f64", [0], expected=np.nan)

# empty reductions
check("sum", np.zeros((0, 3), np.float32), "f32", [0], expected=[0, 0, 0])
check("prod", np.zeros((0, 3), np.int32), "i32", [0], expected=[1, 1, 1])
check("mean", np.zeros((0, 3), np.float32), "f32", [0], expected=[np.nan] * 3)
check("any", np.zeros((0, 3), np.float32), "f32", [0], expected=[False] * 3)
check("all", np.zeros((0, 3), np.float32), "f32", [0], expected=[True] * 3)
check("logsumexp", np.zeros((0, 3), np.float32), "f32", [0], expected=[-np.inf] * 3)
check("amax", np.zeros((0, 3), np.float32), "f32", [1], expected=np.zeros((0,)))

# NaN / inf
nan, inf = np.nan, np.inf
xv = np.array([[1.0, nan, 3.0], [-inf, -inf, -inf], [1.0, inf, 2.0], [inf, -inf, 0.0]])
for elem in ["f64", "f32"]:
    xe = xv.astype(NP[elem])
    for op in ["amax", "amin", "sum", "mean", "logsumexp", "var", "prod", "any", "all"]:
        check(op, xe, elem, [1])
check("logsumexp", np.array([[-inf, -inf]]), "f64", [1], expected=[-inf])
check("logsumexp", np.array([[inf, 1.0]]), "f64", [1], expected=[inf])
check("logsumexp", np.array([[1000.0, 1000.0]]), "f64", [1], expected=[1000.0 + np.log(2.0)])
check("any", np.array([0.0, nan]), "f64", [0], expected=True)
check("all", np.array([nan, 1.0]), "f64", [0], expected=True)
check("all", np.array([nan, 0.0]), "f64", [0], expected=False)
# integer wrap-around and large values
big = np.array([2**62, 2**62, 2**62], dtype=np.int64)
check("sum", big, "i64", [0], expected=np.array(-(2**62), dtype=np.int64))
check("amax", np.array([2**62 + 1, 2**62], dtype=np.int64), "i64", None,
      expected=np.array(2**62 + 1, dtype=np.int64))
check("prod", np.array([2**32, 2**32], dtype=np.int64), "i64", None, expected=np.int64(0))
check("sum", np.array([True, True, False]), "i1", None, expected=np.int64(2))


# argmax / argmin
def check_arg(op, x, elem, dim=None, keepdim=False, expected=None):
    t = torch.from_numpy(np.array(x))
    f = torch.argmax if op == "argmax" else torch.argmin
    if expected is None:
        expected = f(t, dim=dim, keepdim=keepdim).numpy() if dim is not None else f(t).numpy()
        if dim is None and keepdim:
            expected = expected.reshape([1] * x.ndim)
    expected = np.asarray(expected, dtype=np.int64)
    attrs = []
    if dim is not None:
        attrs.append("dim = %d" % dim)
    if keepdim:
        attrs.append("keepdim = true")
    mlir, ins = module("kt." + op, x, elem, [ttype(expected.shape, "i64")], ", ".join(attrs))
    s.check("%s %s %s dim=%s keepdim=%s" % (op, elem, x.shape, dim, keepdim), mlir, ins,
            expected)


for op in ["argmax", "argmin"]:
    for elem in ["f32", "f64", "f16", "bf16", "i64", "i32"]:
        for shape, dim, keepdim in [((3, 4), 1, False), ((3, 4), -2, True), ((2, 3, 4), None, False),
                                    ((2, 3, 4), None, True), ((), None, False), ((), 0, True),
                                    ((5,), 0, False), ((0, 3), 1, False)]:
            check_arg(op, make(shape, elem), elem, dim, keepdim)
    # ties -> first index
    check_arg(op, np.array([[1, 3, 3, 1], [2, 2, 2, 2]], dtype=np.int64), "i64", 1)
    check_arg(op, np.array([1.0, 3.0, 3.0, 1.0, 1.0]), "f64", None)
    # NaN wins (first NaN)
    check_arg(op, np.array([[1.0, nan, 5.0, nan], [nan, 1.0, 2.0, 3.0], [-inf, inf, 0, 0]]),
              "f64", 1, expected=[1, 0, 1 if op == "argmax" else 0])

# run-time errors: empty reduced dims
for op in ["amax", "amin"]:
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((3,), "f32")], "dim = [0]")
    s.check_error(op + " empty dim", mlir, [np.zeros((0, 3), np.float32)], "non-zero size")
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((), "f32")])
    s.check_error(op + " empty all", mlir, [np.zeros((0, 3), np.float32)], "empty")
for op in ["argmax", "argmin"]:
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((3,), "i64")], "dim = 0")
    s.check_error(op + " empty dim", mlir, [np.zeros((0, 3), np.float32)], "non-zero size")
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((), "i64")])
    s.check_error(op + " empty all", mlir, [np.zeros((0, 3), np.float32)], "empty")
s.finish()
