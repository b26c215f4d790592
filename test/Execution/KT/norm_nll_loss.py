# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests kt.nll_loss against torch.nn.functional.nll_loss in float64: input
# layouts [C], [N, C], [N, C, d1, ...], every reduction, weights,
# ignore_index (incl. all ignored and empty -> NaN for mean), i32 targets,
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
        for elem in ["f32", "f64"] if i == 0 else ["f32"]:
            x = cast(np.log(s.uniform(0.05, 1, *xs)), elem)
            w = cast(s.uniform(0.2, 2, c), elem)
            run("kt.nll_loss", x, targets(ts, c), None, elem, red)
            run("kt.nll_loss", x, targets(ts, c), w, elem, red)
            run("kt.nll_loss", x, targets(ts, c, ignore=1), w, elem, red, 1)
            run("kt.nll_loss", x, targets(ts, c, ignore=-100), None, elem, red)
x = s.randn(6, 3)
run("kt.nll_loss", x, targets((6,), 3, dtype=np.int32), s.uniform(0.5, 1, 3),
    "f32", "mean")
run("kt.nll_loss", x.astype(np.float16), targets((6,), 3), None, "f16", "mean")
run("kt.nll_loss", to_bf16(x), targets((6,), 3), to_bf16(s.uniform(0.5, 1, 3)),
    "bf16", "sum")
run("kt.nll_loss", x.astype(np.float64), targets((6,), 3, ignore=-100),
    s.uniform(0.5, 1, 3, dtype=np.float64), "f64", "none")
# all ignored -> NaN for mean; empty batch -> NaN for mean
for red in RED:
    run("kt.nll_loss", x, np.full(6, -100, np.int64), None, "f32", red)
    run("kt.nll_loss", np.log(s.uniform(0.1, 1, 4)).astype(np.float32),
        np.array(-100, np.int64), None, "f32", red)
    run("kt.nll_loss", np.zeros((0, 3), np.float32), np.zeros(0, np.int64),
        None, "f32", red)
# out of range (and not ignore_index) is a run-time error; ignore_index may be
# out of range
mod = single_op_module("kt.nll_loss", [x, np.array([0, 1, 3, 0, 0, 0])],
                       ["tensor<f32>"])
s.check_error("nll_loss target out of range", mod,
              [x, np.array([0, 1, 3, 0, 0, 0])], "target 3 is out of range")
s.check_error("nll_loss negative target", mod,
              [x, np.array([0, 1, -1, 0, 0, 0])], "target -1 is out of range")
run("kt.nll_loss", x, np.array([0, 7, 2, 7, 1, 0]), None, "f32", "mean", 7)
s.finish()
