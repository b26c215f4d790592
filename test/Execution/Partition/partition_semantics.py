# RUN: %python %s
# REQUIRES: numpy, torch
"""kiln-partition keeps the meaning of the joint function under every policy.

For each graph (small sizes, f64) and each policy (save-all, recompute-all,
mincut, mincut with memory-budget 0.5), kiln-opt -kiln-autodiff
-kiln-partition{keep-joint} gives @f_fwd, @f_bwd and the joint; kiln-run
runs @f_fwd on the primals, then @f_bwd on its saved values and random
cotangents. Checked:

* the outputs and gradients against torch.autograd on the same inputs (the
  independent reference; rtol 1e-9);
* they are bitwise equal to the joint's (every op is a clone of a joint op)
  and so equal across policies;
* the forward returns kg.num_outputs outputs then kg.num_saved values, and
  the backward takes them;
* saved bytes: mincut <= save-all, and the budget run <= mincut, on every
  graph (from the print-report table).
"""

import os
import re
import subprocess
import tempfile

import numpy as np
import torch

import partition_graphs as pg
from kiln_testing import Suite, run, KilnRunError, close

KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")

POLICIES = [("save-all", "policy=save-all"),
            ("recompute-all", "policy=recompute-all"),
            ("mincut", "policy=mincut"),
            ("budget-0.5", "policy=mincut memory-budget=0.5")]


def partition(mlir, options):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
        path = f.name
    try:
        proc = subprocess.run(
            [KILN_OPT, path, "-kiln-autodiff",
             "-kiln-partition=%s keep-joint print-report" % options],
            capture_output=True, text=True)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        raise KilnRunError(proc.returncode, proc.stderr)
    rows = [l.split() for l in proc.stderr.splitlines()[1:] if l.strip()]
    return proc.stdout, rows


def attr(text, fn, name):
    m = re.search(r"func\.func @%s\(.*%s = (\d+)" % (fn, name), text)
    return int(m.group(1)) if m else None


def torch_reference(g, inputs, cts):
    ts = [torch.tensor(x, requires_grad=True) for x in inputs]
    out = g.torch_fn(*ts)
    grads = torch.autograd.grad(out, ts, torch.tensor(cts[0]))
    return [out.detach().numpy()] + [x.numpy() for x in grads]


def main():
    s = Suite(__file__, seed=7)
    graphs = [
        pg.mlp(batch=4, d_in=6, d_hidden=8, d_out=5, elem="f64"),
        pg.gelu_mlp(batch=4, d_in=6, d_hidden=8, d_out=5, elem="f64"),
        pg.attention(seq=6, d_model=8, heads=2, elem="f64"),
        pg.attention(seq=6, d_model=8, heads=2, elem="f64", explicit=True),
        pg.layer_norm_residual(rows=5, dim=7, elem="f64"),
        pg.conv_bn_relu(batch=2, channels=3, size=5, elem="f64"),
    ]
    for g in graphs:
        inputs = g.inputs(s.rng)
        cts = [s.rng.standard_normal(g.result[0])]
        ref = torch_reference(g, inputs, cts)
        first = None
        bytes_of = {}
        for label, options in POLICIES:
            tag = "%s/%s" % (g.name, label)
            try:
                text, rows = partition(g.mlir, options)
                n_out = attr(text, g.name + "_fwd", "kg.num_outputs")
                n_saved = attr(text, g.name + "_fwd", "kg.num_saved")
                fwd = run(text, inputs, entry=g.name + "_fwd")
                s.record(tag + " fwd result count",
                         n_out == 1 and len(fwd) == n_out + n_saved,
                         "%d results, kg.num_outputs=%s kg.num_saved=%s"
                         % (len(fwd), n_out, n_saved))
                bwd = run(text, fwd[n_out:] + cts, entry=g.name + "_bwd")
                joint = run(text, inputs + cts, entry=g.name + "_joint")
            except KilnRunError as e:
                s.record(tag, False, str(e))
                continue
            got = fwd[:n_out] + bwd
            for i, (a, r) in enumerate(zip(got, ref)):
                ok, msg = close(a, r, 1e-9, 1e-10)
                s.record("%s vs torch, result %d" % (tag, i), ok, msg)
            s.record(tag + " == joint",
                     len(got) == len(joint) and all(
                         np.array_equal(a, b) for a, b in zip(got, joint)),
                     "fwd+bwd differ from the joint")
            if first is None:
                first = got
            else:
                s.record(tag + " == save-all",
                         all(np.array_equal(a, b) for a, b in zip(got, first)),
                         "results differ across policies")
            bytes_of[label] = int(rows[0][5])
        if len(bytes_of) == len(POLICIES):
            s.record(g.name + " mincut bytes <= save-all",
                     bytes_of["mincut"] <= bytes_of["save-all"], str(bytes_of))
            s.record(g.name + " budget bytes <= mincut",
                     bytes_of["budget-0.5"] <= bytes_of["mincut"], str(bytes_of))
    s.finish()


main()
