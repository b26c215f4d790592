# RUN: %python %s
# REQUIRES: numpy, torch
# cross_entropy's training step through the CPU backend (what
# bench/cpu_bench.py's "cross_entropy ... (fwd+bwd)" times): kiln-autodiff +
# kiln-partition into @ce_fwd (the loss, saving the logits and targets) and
# @ce_bwd (the gradient of the logits: one kernel over blocks of rows; for
# class indices without a weight the row sum of the log-probability gradient
# is known without a pass over the classes), both run by `kiln-run
# --backend=cpu`, against PyTorch's loss.backward() in float64: reductions
# none / mean / sum, ignore_index (also on every row: NaN gradient for mean,
# as PyTorch), label smoothing, weights, probability targets, -inf logits,
# a `?` batch, a partial block of rows.
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from kiln_testing import KILN_OPT, KilnRunError, Suite, close, run, ttype

s = Suite(__file__)
rng = np.random.default_rng(3)


def aot(src):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ce.mlir")
        with open(path, "w") as f:
            f.write(src)
        r = subprocess.run([KILN_OPT, path, "-kiln-autodiff", "-kiln-partition"],
                           capture_output=True, text=True)
        if r.returncode:
            raise KilnRunError(r.returncode, r.stderr)
        return r.stdout


def check(label, x, t, red="mean", w=None, ignore=None, ls=None, dyn=False):
    n, c = x.shape
    prob = t.dtype.kind == "f"
    xt = ttype((None if dyn else n, c), "f32")
    tt = ttype((None if dyn else n, c) if prob else (None if dyn else n,),
               "f32" if prob else "i64")
    rt = ttype(() if red != "none" else (None if dyn else n,), "f32")
    args = "%%x: %s, %%t: %s {kg.requires_grad = false}" % (xt, tt)
    ops, types = "%x, %t", [xt, tt]
    if w is not None:
        args += ", %%w: %s {kg.requires_grad = false}" % ttype((c,), "f32")
        ops += ", %w"
        types.append(ttype((c,), "f32"))
    attrs = ["reduction = #kt.reduction<%s>" % red]
    kw = dict(reduction=red)
    if ignore is not None:
        attrs.append("ignore_index = %d" % ignore)
        kw["ignore_index"] = ignore
    if ls is not None:
        attrs.append("label_smoothing = %r" % ls)
        kw["label_smoothing"] = ls
    src = ("func.func @ce(%s) -> %s attributes {kg.differentiate} {\n"
           "  %%0 = kt.cross_entropy %s {%s} : (%s) -> %s\n  return %%0 : %s\n}\n") % (
               args, rt, ops, ", ".join(attrs), ", ".join(types), rt, rt)
    xd = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    td = torch.from_numpy(t.astype(np.float64) if prob else t)
    wd = torch.from_numpy(w.astype(np.float64)) if w is not None else None
    loss = F.cross_entropy(xd, td, weight=wd, **kw)
    g = np.ones(loss.shape, np.float32)
    loss.backward(torch.from_numpy(g.astype(np.float64)))
    ins = [x, t] + ([w] if w is not None else [])
    try:
        text = aot(src)
        fwd = run(text, ins, entry="ce_fwd", extra_args=["--backend=cpu"])
        grads = run(text, fwd[1:] + [g], entry="ce_bwd", extra_args=["--backend=cpu"])
    except KilnRunError as e:
        s.record(label, False, str(e))
        return
    name = "%s x%s %s w=%s ii=%s ls=%s%s" % (label, x.shape, red, w is not None, ignore, ls,
                                            " dyn" if dyn else "")
    ok, msg = close(fwd[0], loss.detach().numpy(), 1e-5, 1e-6)
    s.record(name + " loss", ok, msg)
    ok, msg = close(grads[0], xd.grad.numpy(), 1e-5, 1e-7)
    s.record(name + " grad", ok, msg)


x = (rng.standard_normal((37, 300)) * 3).astype(np.float32)
x[3, [0, 7, 100]] = -np.inf          # -inf logits (not at the target): gradient there 0
t = rng.integers(0, 300, 37)
t[3] = 5
w = (np.abs(rng.standard_normal(300)) + 0.1).astype(np.float32)
p = np.abs(rng.standard_normal((37, 300))).astype(np.float32) + 0.01
p = (p / p.sum(1, keepdims=True)).astype(np.float32)
xf = x.copy()
xf[3] = rng.standard_normal(300)     # probability targets: finite logits
for red in ["mean", "sum", "none"]:
    check("index", x, t, red)
    check("index", x, t, red, ignore=int(t[0]), ls=0.1)
    check("index", x, t, red, w=w, ignore=int(t[1]))
    check("index", x, t, red, w=w, ls=0.2)
    check("prob", xf, p, red)
    check("prob", xf, p, red, w=w, ls=0.1)
check("all ignored", x, np.full(37, 4, np.int64), "mean", ignore=4)
check("all ignored", x, np.full(37, 4, np.int64), "sum", ignore=4, ls=0.1)
check("index", x, t, "mean", ignore=int(t[2]), ls=0.1, dyn=True)
check("one class", rng.standard_normal((5, 1)).astype(np.float32), np.zeros(5, np.int64))
s.finish()
