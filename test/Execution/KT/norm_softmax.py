# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests kt.softmax and kt.log_softmax against PyTorch (float64 reference):
# several shapes and dims (negative, rank 0, empty), every float dtype, and
# the edge cases of a stable softmax (large values, all -inf rows, NaN, inf).

import numpy as np
import torch
from kiln_testing import Suite, ttype, to_bf16, func_text

s = Suite(__file__, cpu=True)
INF = np.inf


def ref(op, x, dim):
    t = torch.from_numpy(np.asarray(x, dtype=np.float64))
    f = torch.softmax if op == "kt.softmax" else torch.log_softmax
    return f(t, dim).numpy()


def check(op, x, dim, elem, **kw):
    x = np.asarray(x)
    s.check_op(op, [x], ref(op, x, dim), [ttype(x.shape, elem)],
               attrs="dim = %d" % dim, elems=[elem],
               elem=elem if elem == "bf16" else None, **kw)


for op in ["kt.softmax", "kt.log_softmax"]:
    # shapes and dims, f32 and f64
    for shape, dims in [((5,), [0, -1]), ((3, 4), [0, 1, -1, -2]),
                        ((2, 3, 4), [0, 1, 2, -2]), ((2, 1, 3, 2), [1, 3])]:
        for dim in dims:
            check(op, s.randn(*shape), dim, "f32")
            check(op, s.randn(*shape, dtype=np.float64) * 3, dim, "f64")
    # rank 0 and empty tensors
    for v in [1.5, -INF, np.nan]:
        check(op, np.array(v, dtype=np.float32), 0, "f32")
        check(op, np.array(v, dtype=np.float64), -1, "f64")
    check(op, np.zeros((2, 0, 3), dtype=np.float32), 1, "f32")
    check(op, np.zeros((0, 3), dtype=np.float32), 1, "f32")
    # f16 and bf16
    check(op, s.randn(3, 7).astype(np.float16), 1, "f16")
    check(op, s.randn(4, 2, 5).astype(np.float16), 0, "f16")
    check(op, to_bf16(s.randn(3, 7)), -1, "bf16")
    check(op, to_bf16(s.randn(2, 6)), 0, "bf16")
    # large values that overflow exp() without max subtraction
    check(op, np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -1002.0]],
                       dtype=np.float32), 1, "f32")
    check(op, np.array([[60000.0, 65000.0, 64000.0]], dtype=np.float16), 1,
          "f16")
    # all -inf row -> NaN; partly -inf row is fine; NaN spreads in its row;
    # +inf gives NaN
    edge = np.array([[-INF, -INF, -INF], [0.0, -INF, 1.0], [np.nan, 1.0, 2.0],
                     [INF, 1.0, 2.0], [INF, -INF, 0.0]], dtype=np.float32)
    check(op, edge, 1, "f32")
    check(op, edge.astype(np.float64), 1, "f64")
    check(op, edge.T.copy(), 0, "f32")

# dynamic dims: ? in the argument and result types
x = s.randn(3, 5)
for op in ["kt.softmax", "kt.log_softmax"]:
    mlir = func_text("main", [ttype((None, None), "f32")], [ttype((None, None), "f32")],
                     ["%%r = %s %%arg0 {dim = 1} : (tensor<?x?xf32>) -> tensor<?x?xf32>" % op,
                      "return %r : tensor<?x?xf32>"])
    s.check(op + " dynamic", mlir, [x], ref(op, x, 1))

# sanity: a wrong reference must fail (the dim matters)
y = s.randn(3, 3)
assert not np.allclose(ref("kt.softmax", y, 0), ref("kt.softmax", y, 1))
s.finish()
