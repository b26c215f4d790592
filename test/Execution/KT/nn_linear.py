# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests kt.linear against torch.nn.functional.linear in float64: input ranks
# 1-4, bias / no bias, every float dtype, empty dims, dynamic dims and the
# run-time feature and bias checks.

import numpy as np
import torch
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)


def rand(shape, elem):
    x = s.randn(*shape, dtype=np.float64 if elem == "f64" else np.float32)
    if elem == "f16":
        x = x.astype(np.float16)
    if elem == "bf16":
        x = to_bf16(x)
    return x



def ref_linear(x, w, b=None):
    t = lambda v: torch.from_numpy(v.astype(np.float64))
    return torch.nn.functional.linear(t(x), t(w), None if b is None else t(b)).numpy()


for elem in ["f32", "f64", "f16", "bf16"]:
    for xs in ([(3,), (5, 3), (2, 4, 3), (2, 1, 2, 3)] if elem == "f32"
               else [(3,), (2, 4, 3)]):
        for with_bias in [False, True]:
            x, w, b = rand(xs, elem), rand((4, 3), elem), rand((4,), elem)
            ins = [x, w, b] if with_bias else [x, w]
            exp = ref_linear(*ins)
            s.check_op("kt.linear", ins, exp, [ttype(exp.shape, elem)],
                       elems=[elem] * len(ins), elem=elem,
                       label="linear %s %s bias=%s" % (elem, xs, with_bias))
x, w, b = s.randn(6, 33), s.randn(17, 33), s.randn(17)
s.check_op("kt.linear", [x, w, b], ref_linear(x, w, b), [ttype((6, 17), "f32")])
# Empty: zero rows, zero in_features (gives the bias).
x, w, b = s.randn(0, 3), s.randn(4, 3), s.randn(4)
s.check_op("kt.linear", [x, w, b], ref_linear(x, w, b), [ttype((0, 4), "f32")])
x, w, b = s.randn(2, 0), s.randn(4, 0), s.randn(4)
s.check_op("kt.linear", [x, w, b], ref_linear(x, w, b), [ttype((2, 4), "f32")])
# Dynamic and the run-time feature check.
x, w, b = s.randn(2, 3), s.randn(4, 3), s.randn(4)
mlir = func_text("main", ["tensor<?x?xf32>", "tensor<?x?xf32>", "tensor<?xf32>"],
                 ["tensor<?x?xf32>"],
                 ["%0 = kt.linear %arg0, %arg1, %arg2 : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>",
                  "return %0 : tensor<?x?xf32>"])
s.check("linear dynamic", mlir, [x, w, b], ref_linear(x, w, b))
s.check_error("linear ? features mismatch", mlir, [x, s.randn(4, 5), b],
              "`input` has 3 features but `weight` expects 5")
s.check_error("linear ? bias mismatch", mlir, [x, w, s.randn(5)],
              "`bias` has 5 elements")
s.finish()
