# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests kt.cross_entropy with class-probability targets against
# torch.nn.functional.cross_entropy in float64: input layouts [C], [N, C],
# [N, C, d1, ...], every reduction, weights, label smoothing, every float
# dtype, and an empty batch.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, to_bf16, single_op_module

s = Suite(__file__, cpu=True)
from loss_helpers import LAYOUTS, RED, T, cast, cls, run, targets
import loss_helpers

loss_helpers.use_suite(s)


for i, (xs, _) in enumerate(LAYOUTS):
    cdim = 1 if len(xs) > 1 else 0
    c = xs[cdim]
    for red in RED:
        for elem in ["f32", "f64"] if i == 3 else ["f32"]:
            x = cast(s.randn(*xs), elem)
            p = cast(torch.softmax(T(s.randn(*xs)), cdim).numpy(), elem)
            w = cast(s.uniform(0.2, 2, c), elem)
            run("kt.cross_entropy", x, p, None, elem, red)
            run("kt.cross_entropy", x, p, w, elem, red)
            run("kt.cross_entropy", x, p, w, elem, red, ls=0.25)
            run("kt.cross_entropy", x, p, None, elem, red, -1, ls=1.0)
x = s.randn(6, 5)
p = torch.softmax(T(s.randn(6, 5)), 1).numpy()
run("kt.cross_entropy", x.astype(np.float16), p.astype(np.float16), None,
    "f16", "mean", rtol=5e-3, atol=5e-3)
run("kt.cross_entropy", to_bf16(x), to_bf16(p), None, "bf16", "none")
for red in RED:
    run("kt.cross_entropy", np.zeros((0, 5), np.float32),
        np.zeros((0, 5), np.float32), None, "f32", red)
s.finish()
