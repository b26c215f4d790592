# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kiln-aot-eager{pass-primals} (kiln-aot-autograd's option): the
# backward's graph call takes the saved graph inputs themselves instead of
# forward results. A training step whose parameter (a !kt.ref) is updated
# in place by another graph BETWEEN the forward and the kg.grad: the
# backward must still see the parameter as the forward read it (the value
# the program loaded, not the ref's new contents). Loss and gradient
# against torch.autograd on the same values, on the interpreter and the
# CPU backend, for every partition policy with and without pass-primals;
# the forward's kg.saved_primals and the backward call's operands checked
# in the lowered program.

import os
import re
import subprocess
import tempfile

import numpy as np
import torch
from kiln_testing import KILN_OPT, KILN_RUN, Suite

s = Suite(__file__)

PROGRAM = """
kg.program @step(%w: !kt.ref<4x8xf32>, %x: tensor<5x4xf32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<5x4xf32>) {
  %l = kg.graph @step_fwd(%w, %x) : (!kt.ref<4x8xf32>, tensor<5x4xf32>) -> tensor<f32> {
  ^bb0(%r: !kt.ref<4x8xf32>, %a: tensor<5x4xf32>):
    %v = kt.load %r : (!kt.ref<4x8xf32>) -> tensor<4x8xf32>
    %0 = kt.matmul %a, %v : (tensor<5x4xf32>, tensor<4x8xf32>) -> tensor<5x8xf32>
    %1 = kt.tanh %0 : (tensor<5x8xf32>) -> tensor<5x8xf32>
    %2 = kt.mul %1, %1 : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
    %3 = kt.sum %2 : (tensor<5x8xf32>) -> tensor<f32>
    kg.yield %3 : tensor<f32>
  }
  kg.graph @step_upd(%w) : (!kt.ref<4x8xf32>) -> () {
  ^bb0(%p: !kt.ref<4x8xf32>):
    %c = kt.full {size = [], value = 3.0, dtype = f32} : () -> tensor<f32>
    kt.mul_ %p, %c : (!kt.ref<4x8xf32>, tensor<f32>) -> ()
    kg.yield
  }
  %g:2 = kg.grad %l wrt(%w, %x) : (tensor<f32>, !kt.ref<4x8xf32>, tensor<5x4xf32>) -> (tensor<4x8xf32>, tensor<5x4xf32>)
  kg.return %l, %g#0, %g#1 : tensor<f32>, tensor<4x8xf32>, tensor<5x4xf32>
}
"""

tmp = tempfile.mkdtemp(prefix="kiln-pass-primals-")
src = os.path.join(tmp, "step.mlir")
with open(src, "w") as f:
    f.write(PROGRAM)
w = (s.randn(4, 8) * 0.5).astype(np.float32)
x = s.randn(5, 4)
np.save(os.path.join(tmp, "w.npy"), w)
np.save(os.path.join(tmp, "x.npy"), x)
tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
loss = (torch.tanh(tx @ tw) ** 2).sum()
loss.backward()
want_loss, want_grads = loss.item(), [tw.grad.numpy(), tx.grad.numpy()]

for policy in ["mincut", "save-all", "recompute-all"]:
    for pp in [False, True]:
        pipeline = "kiln-aot-eager{partition=%s%s}" % (policy, " pass-primals" if pp else "")
        lowered = subprocess.run(
            [KILN_OPT, src, "--pass-pipeline=builtin.module(%s)" % pipeline],
            capture_output=True, text=True)
        if lowered.returncode != 0:
            s.record(pipeline + ": lowers", False, lowered.stderr[-400:])
            continue
        ir = lowered.stdout
        # The forward lists its passed primals only with the option; the
        # backward call's first operands are then those graph inputs: the
        # loaded value %0 (the read graph's result) and %x, never forward
        # results. save-all and recompute-all save w (x's gradient is
        # g w^T); mincut computes both gradients in the forward at this size.
        s.record(pipeline + ": kg.saved_primals", ("kg.saved_primals" in ir) == pp,
                 ir[-1500:])
        m = re.search(r"kg.saved_primals = array<i64(?:: ([0-9, ]*))?>", ir)
        primals = [int(j) for j in m.group(1).split(",")] if m and m.group(1) else []
        call = re.findall(r"kg.graph @step_fwd_bwd\(([^)]*)\)", ir)
        operands = call[0].split(", ") if len(call) == 1 else []
        want = [["%0", "%x"][j] for j in primals]
        s.record(pipeline + ": backward takes the graph inputs",
                 len(call) == 1 and operands[:len(want)] == want and
                 not any(o in ("%0", "%x") for o in operands[len(want):]) and
                 (policy == "mincut" or not pp or "%0" in want),
                 "primals %s, call %s" % (primals, call))
        for backend in ["interpreter", "cpu"]:
            label = "%s --backend=%s" % (pipeline, backend)
            out = os.path.join(tmp, "out-%s-%d-%s" % (policy, pp, backend))
            p = subprocess.run([KILN_RUN, src, "--pipeline=" + pipeline,
                                "--backend=" + backend,
                                "--input=" + os.path.join(tmp, "w.npy"),
                                "--input=" + os.path.join(tmp, "x.npy"),
                                "--output-dir=" + out], capture_output=True, text=True)
            if p.returncode != 0:
                s.record(label, False, p.stderr[-400:])
                continue
            got_loss = float(np.load(os.path.join(out, "result0.npy")))
            s.record(label + ": loss", abs(got_loss - want_loss) <= 1e-5 * abs(want_loss),
                     "%r vs %r" % (got_loss, want_loss))
            for i, name in [(0, "w"), (1, "x")]:
                got = np.load(os.path.join(out, "result%d.npy" % (i + 1)))
                err = np.abs(got - want_grads[i]).max()
                s.record(label + ": gradient of %s (w before the update)" % name,
                         err <= 1e-5 * max(1.0, np.abs(want_grads[i]).max()),
                         "max err %g" % err)

s.finish()
