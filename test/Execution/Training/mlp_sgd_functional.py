# RUN: %python %s
# REQUIRES: numpy, torch
# Tests a captured MLP training step (forward, cross-entropy loss, kg.grad,
# SGD update) written functionally: the parameters are plain tensor
# arguments and the step returns the updated ones, which the test feeds to
# the next call. Five steps through kiln-run's session on every rung of the
# ladder: kiln-eager (kg.grad calls the joint function) and kiln-aot-eager
# with each partition policy (forward and backward graphs), against
# torch.optim.SGD on the same initial weights and batches, in f64 and f32:
# every step's loss and the final parameters. The partition policies give
# bit-identical numbers (the same kt ops, only placed in other graphs).

import os
import subprocess

import numpy as np
from kiln_testing import KILN_RUN, Suite
from training_helpers import (PIPELINES, check_against_torch,
                              check_policies_agree, mlp_step_program,
                              mlp_training_setup)

s = Suite(__file__)


def kiln_steps(dtype, elem, pipeline_args):
    params, batches, (ref_losses, ref_params), tmp, src = mlp_training_setup(
        7, dtype, elem, mlp_step_program)
    losses = []
    for k, (x, t) in enumerate(batches):
        files = []
        for i, a in enumerate(params + [x, t]):
            files.append(os.path.join(tmp, "in%d_%d.npy" % (k, i)))
            np.save(files[-1], a)
        out = os.path.join(tmp, "out%d" % k)
        p = subprocess.run([KILN_RUN, src, "--call=" + ",".join(files),
                            "--output-dir=" + out] + pipeline_args,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr
        res = [np.load(os.path.join(out, "result%d.npy" % i)) for i in range(5)]
        losses.append(float(res[0]))
        params = res[1:]
    return (losses, params, ref_losses, ref_params), ""


for dtype, elem in [(np.float64, "f64"), (np.float32, "f32")]:
    first = None
    for pipeline in PIPELINES:
        label = "mlp sgd %s %s" % (elem, pipeline)
        got, err = kiln_steps(dtype, elem, ["--pipeline=" + pipeline])
        if got is None:
            s.record(label, False, err)
            continue
        losses, params, ref_losses, ref_params = got
        check_against_torch(s, label, dtype, losses, params, ref_losses,
                            ref_params)
        first = check_policies_agree(s, label, pipeline, losses, params, first)

s.finish()
