# RUN: %python %s
# REQUIRES: numpy, torch
# Tests that the demo's transformer block (examples/block.mlir) gives the
# same result as the same block written in PyTorch, in float64, on random
# inputs saved by kiln-run --random-inputs.

import math
import os
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import KILN_RUN, Suite, close

s = Suite(__file__)
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                   "examples", "block.mlir")


def reference(x, ln1_w, ln1_b, wqkv, wo, ln2_w, ln2_b, w1, b1, w2, b2):
    T = lambda a: torch.from_numpy(a).double()
    x, ln1_w, ln1_b, wqkv, wo = map(T, (x, ln1_w, ln1_b, wqkv, wo))
    ln2_w, ln2_b, w1, b1, w2, b2 = map(T, (ln2_w, ln2_b, w1, b1, w2, b2))
    wqkv, wo, w1, w2 = wqkv * 0.25, wo * 0.25, w1 * 0.25, w2 * 0.25
    n1 = F.layer_norm(x, [16], ln1_w, ln1_b)
    qkv = (n1 @ wqkv.T).reshape(8, 3, 2, 8).permute(1, 2, 0, 3)
    q, k, v = qkv[0], qkv[1], qkv[2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(8)
    causal = torch.ones(8, 8, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    att = torch.softmax(scores, -1) @ v
    h = x + att.transpose(0, 1).reshape(8, 16) @ wo.T
    n2 = F.layer_norm(h, [16], ln2_w, ln2_b)
    up = n2 @ w1.T + b1
    return (h + F.gelu(up, approximate="tanh") @ w2.T + b2).numpy()


for seed in [0, 1, 2]:
    out = tempfile.mkdtemp(prefix="kiln-block-")
    p = subprocess.run([KILN_RUN, src, "--entry=block", "--random-inputs",
                        "--seed=%d" % seed, "--output-dir=" + out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        s.record("block seed %d" % seed, False, p.stderr)
        continue
    inputs = [np.load(os.path.join(out, "input%d.npy" % i)) for i in range(11)]
    got = np.load(os.path.join(out, "result0.npy"))
    ok, msg = close(got, reference(*inputs), rtol=1e-4, atol=1e-4)
    s.record("block seed %d" % seed, ok, msg)

s.finish()
