# RUN: %python %s
# REQUIRES: numpy, torch
# The AOT stage's training path through the CPU backend (what
# bench/cpu_bench.py's "GELU MLP ... (fwd+bwd)" times): loss = sum(MLP(x))
# (linear, gelu, linear), kiln-autodiff + kiln-partition into @mlp_fwd (loss
# and saved values) and @mlp_bwd (saved values, cotangent -> gradients of w1,
# b1, w2, b2), both run by `kiln-run --backend=cpu`, against PyTorch's
# loss.backward(). Static shapes and a `?` batch.
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from kiln_testing import KILN_OPT, KilnRunError, Suite, close, run, ttype

s = Suite(__file__)


def module(batch, D, H):
    x, w1, b1 = ttype((batch, D), "f32"), ttype((H, D), "f32"), ttype((H,), "f32")
    w2, b2 = ttype((D, H), "f32"), ttype((D,), "f32")
    h, y = ttype((batch, H), "f32"), ttype((batch, D), "f32")
    return f"""func.func @mlp(%x: {x} {{kg.requires_grad = false}}, %w1: {w1}, %b1: {b1}, %w2: {w2}, %b2: {b2}) -> tensor<f32> attributes {{kg.differentiate}} {{
  %0 = kt.linear %x, %w1, %b1 : ({x}, {w1}, {b1}) -> {h}
  %1 = kt.gelu %0 : ({h}) -> {h}
  %2 = kt.linear %1, %w2, %b2 : ({h}, {w2}, {b2}) -> {y}
  %3 = kt.sum %2 : ({y}) -> tensor<f32>
  return %3 : tensor<f32>
}}
"""


def aot(src):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.mlir")
        with open(path, "w") as f:
            f.write(src)
        r = subprocess.run([KILN_OPT, path, "-kiln-autodiff", "-kiln-partition"],
                           capture_output=True, text=True)
        if r.returncode:
            raise KilnRunError(r.returncode, r.stderr)
        return r.stdout


def check(label, batch, B, D, H):
    xs = [s.randn(B, D), s.randn(H, D) * 0.2, s.randn(H), s.randn(D, H) * 0.2, s.randn(D)]
    xs = [x.astype(np.float32) for x in xs]
    x = torch.from_numpy(xs[0])
    params = [torch.from_numpy(p).clone().requires_grad_() for p in xs[1:]]
    F = torch.nn.functional
    loss = F.linear(F.gelu(F.linear(x, params[0], params[1])), params[2], params[3]).sum()
    loss.backward()
    try:
        text = aot(module(batch, D, H))
        fwd = run(text, xs, entry="mlp_fwd", extra_args=["--backend=cpu"])
        grads = run(text, fwd[1:] + [np.ones((), np.float32)], entry="mlp_bwd",
                    extra_args=["--backend=cpu"])
    except KilnRunError as e:
        s.record(label, False, str(e))
        return
    ok, msg = close(fwd[0], loss.detach().numpy(), 1e-4, 1e-4)
    s.record(label + " loss", ok, msg)
    s.record(label + " 4 gradients", len(grads) == 4, "%d gradients" % len(grads))
    for name, g, p in zip(["w1", "b1", "w2", "b2"], grads, params):
        ok, msg = close(g, p.grad.numpy(), 1e-4, 1e-4)
        s.record("%s grad %s" % (label, name), ok, msg)


check("static", 6, 6, 10, 24)
check("? batch", None, 5, 8, 33)
check("? batch of 1", None, 1, 8, 16)
s.finish()
