# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests kt.cross_entropy with class-index targets against
# torch.nn.functional.cross_entropy in float64: input layouts [C], [N, C],
# [N, C, d1, ...], every reduction, weights, ignore_index, label smoothing
# (with weights and ignore_index, all ignored), large logits, i32 targets,
# every float dtype, and the run-time error for a target out of range.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, to_bf16, single_op_module

s = Suite(__file__, cpu=True)
from loss_helpers import LAYOUTS, RED, T, cast, cls, run, targets
import loss_helpers

loss_helpers.use_suite(s)


for i, (xs, ts) in enumerate(LAYOUTS):
    c = cls(xs)
    for red in RED:
        for elem in ["f32", "f64"] if i == 2 else ["f32"]:
            x = cast(s.randn(*xs) * 2, elem)
            w = cast(s.uniform(0.2, 2, c), elem)
            run("kt.cross_entropy", x, targets(ts, c), None, elem, red)
            run("kt.cross_entropy", x, targets(ts, c, ignore=2), w, elem, red, 2)
            run("kt.cross_entropy", x, targets(ts, c), w, elem, red, ls=0.1)
            run("kt.cross_entropy", x, targets(ts, c, ignore=0), w, elem, red,
                0, ls=0.3)
            run("kt.cross_entropy", x, targets(ts, c, ignore=-100), None, elem,
                red, ls=1.0)
x = s.randn(6, 5)
run("kt.cross_entropy", x.astype(np.float16), targets((6,), 5), None, "f16",
    "mean", ls=0.2)
run("kt.cross_entropy", to_bf16(x), targets((6,), 5), None, "bf16", "none")
run("kt.cross_entropy", x, targets((6,), 5, dtype=np.int32), None, "f32", "sum",
    ls=0.3)
# large logits (a naive softmax overflows), all ignored, empty batch
run("kt.cross_entropy", x * 1000, targets((6,), 5), None, "f32", "mean")
for red in RED:
    run("kt.cross_entropy", x, np.full(6, -100, np.int64), None, "f32", red,
        ls=0.1)
    run("kt.cross_entropy", x, np.full(6, -100, np.int64),
        s.uniform(0.5, 1, 5).astype(np.float32), "f32", red, ls=0.1)
    run("kt.cross_entropy", np.zeros((0, 5), np.float32), np.zeros(0, np.int64),
        None, "f32", red)
mod = single_op_module("kt.cross_entropy", [x, np.arange(6)],
                       ["tensor<f32>"], "label_smoothing = 0.1")
s.check_error("cross_entropy target out of range", mod, [x, np.arange(6)],
              "target 5 is out of range")
s.finish()
