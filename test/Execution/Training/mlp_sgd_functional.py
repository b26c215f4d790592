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
import tempfile

import numpy as np
from kiln_testing import KILN_RUN, Suite, close
from training_helpers import (mlp_batches, mlp_init, mlp_step_program,
                              torch_sgd_steps)

s = Suite(__file__)
STEPS, BATCH, D_IN, HIDDEN, CLASSES, LR = 5, 16, 32, 64, 10, 0.1
TOL = {np.float64: (1e-10, 1e-12), np.float32: (2e-5, 2e-6)}


def kiln_steps(dtype, elem, pipeline_args):
    rng = np.random.default_rng(7)
    params = mlp_init(rng, D_IN, HIDDEN, CLASSES, dtype)
    batches = mlp_batches(rng, STEPS, BATCH, D_IN, CLASSES, dtype)
    ref_losses, ref_params = torch_sgd_steps(params, batches, LR, dtype)
    tmp = tempfile.mkdtemp(prefix="kiln-train-")
    src = os.path.join(tmp, "step.mlir")
    with open(src, "w") as f:
        f.write(mlp_step_program("step", BATCH, D_IN, HIDDEN, CLASSES, elem, LR))
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


PIPELINES = ["kiln-eager", "kiln-aot-eager", "kiln-aot-eager{partition=save-all}",
             "kiln-aot-eager{partition=recompute-all}"]
for dtype, elem in [(np.float64, "f64"), (np.float32, "f32")]:
    first = None
    for pipeline in PIPELINES:
        label = "mlp sgd %s %s" % (elem, pipeline)
        got, err = kiln_steps(dtype, elem, ["--pipeline=" + pipeline])
        if got is None:
            s.record(label, False, err)
            continue
        losses, params, ref_losses, ref_params = got
        rtol, atol = TOL[dtype]
        for k in range(STEPS):
            ok, msg = close(np.array(losses[k]), np.array(ref_losses[k]), rtol,
                            atol)
            s.record("%s: loss of step %d" % (label, k), ok, msg)
        for name, a, b in zip(["w1", "b1", "w2", "b2"], params, ref_params):
            ok, msg = close(a, b, rtol, atol)
            s.record("%s: final %s" % (label, name), ok, msg)
        # The loss goes down (the step trains).
        s.record("%s: loss decreases" % label, losses[-1] < losses[0],
                 "losses %s" % losses)
        # kiln-aot-eager decomposes composites (cross_entropy, linear) before
        # differentiating: other roundings than kiln-eager's kernels, so the
        # rungs agree within the tolerance above; the partition policies of
        # one rung run the same ops and agree bit for bit.
        if pipeline == "kiln-eager":
            continue
        if first is None:
            first = (pipeline, losses, params)
            continue
        same = first[1] == losses and all(
            np.array_equal(a, b) for a, b in zip(first[2], params))
        s.record("%s: bit-identical to %s" % (label, first[0]), same,
                 "losses %s vs %s" % (losses, first[1]))

s.finish()
