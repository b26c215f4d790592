# RUN: %python %s
# REQUIRES: numpy, torch
# Tests MLP training end to end: the training step captured as
# torch.compile does (parameters are !kt.ref arguments, forward graph,
# kg.grad, SGD graph updating the parameters in place with kt.sub_) run for
# five steps by ONE kiln-run session: the parameter files are named by every
# --call, so the parameters keep their updated values from call to call
# (the optimizer state persists), while each call takes its own batch. Under
# kiln-eager (kg.grad calls the joint function) and kiln-aot-eager with each
# partition policy, against torch.optim.SGD on the same initial weights and
# batches in f64 and f32: every step's loss and the final parameters (written
# by kiln-run as call4/arg<i>.npy); the partition policies agree bit for bit.

import os
import subprocess

import numpy as np
from kiln_testing import KILN_RUN, Suite
from training_helpers import (PIPELINES, STEPS, check_against_torch,
                              check_policies_agree, mlp_step_program_refs,
                              mlp_training_setup)

s = Suite(__file__)


def run_steps(dtype, elem, pipeline):
    params, batches, ref, tmp, src = mlp_training_setup(
        11, dtype, elem, mlp_step_program_refs)
    pfiles = []
    for i, p in enumerate(params):
        pfiles.append(os.path.join(tmp, "param%d.npy" % i))
        np.save(pfiles[-1], p)
    calls = []
    for k, (x, t) in enumerate(batches):
        np.save(os.path.join(tmp, "x%d.npy" % k), x)
        np.save(os.path.join(tmp, "t%d.npy" % k), t)
        calls.append("--call=" + ",".join(
            pfiles + [os.path.join(tmp, "x%d.npy" % k),
                      os.path.join(tmp, "t%d.npy" % k)]))
    out = os.path.join(tmp, "out")
    p = subprocess.run([KILN_RUN, src, "--pipeline=" + pipeline,
                        "--output-dir=" + out, "--stats"] + calls,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr
    losses = [float(np.load(os.path.join(out, "call%d" % k, "result0.npy")))
              for k in range(STEPS)]
    final = [np.load(os.path.join(out, "call%d" % (STEPS - 1), "arg%d.npy" % i))
             for i in range(4)]
    # The input files are not changed: the state lives in the session.
    unchanged = all(np.array_equal(np.load(f), a) for f, a in zip(pfiles, params))
    return (losses, final, ref, unchanged, p.stdout), ""


for dtype, elem in [(np.float64, "f64"), (np.float32, "f32")]:
    first = None
    for pipeline in PIPELINES:
        label = "mlp sgd refs %s %s" % (elem, pipeline)
        got, err = run_steps(dtype, elem, pipeline)
        if got is None:
            s.record(label, False, err)
            continue
        losses, final, (ref_losses, ref_params), unchanged, stdout = got
        check_against_torch(s, label, dtype, losses, final, ref_losses,
                            ref_params)
        s.record("%s: parameter files unchanged" % label, unchanged)
        # One compile, then cache hits: the guards accept the updated refs.
        s.record("%s: one compile" % label,
                 "compiles: 1\n" in stdout and "cache hits: 4\n" in stdout,
                 stdout)
        first = check_policies_agree(s, label, pipeline, losses, final, first)

s.finish()
