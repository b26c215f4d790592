# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# Chains of ungrouped f32 convs (conv -> [relu] -> conv -> ...), which
# kiln-cpu-outline-kernels puts in one kernel: against
# torch.nn.functional.conv2d + relu in float64 (the same() rule). Inside one
# kernel, bufferization may reuse the first conv's output buffer for the
# second's output once the padding's copy has read it, so a call that reads
# the padding's source directly (in-kernel padding) must not be used then;
# where nothing else touches the buffer between the two convs,
# kiln-cpu-conv-to-onednn passes it channels-last to both calls. Cases: the
# resnet basic block (3x3 -> relu -> 3x3, with biases), the bottleneck (1x1
# -> relu -> 3x3 -> relu -> 1x1), a stem (7x7 s2) -> relu -> 3x3, stride 2
# then stride 1 without an activation, a `?` batch, a chain whose middle
# result is also returned, inputs with NaN / inf; under the default, blocked
# and plain oneDNN layouts.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_sweep import same
from kiln_testing import ttype
from onednn_conv_test import Tally, lowered, run

rng = np.random.default_rng(59)
tally = Tally("conv_onednn_chain.py")
t64 = lambda a: torch.from_numpy(a.astype(np.float64))

# Each chain: x shape, dyn dims, [(out channels, k, stride, pad, bias,
# relu after)], whether the middle result is also returned, specials in x.
CHAINS = [
    ((2, 16, 14, 14), (), [(16, 3, 1, 1, True, True), (16, 3, 1, 1, True, False)], False, True),
    ((2, 24, 9, 9), (), [(8, 1, 1, 0, True, True), (8, 3, 1, 1, True, True),
                         (24, 1, 1, 0, True, False)], False, False),
    ((1, 3, 29, 31), (), [(16, 7, 2, 3, True, True), (16, 3, 1, 1, False, True)], False, True),
    ((2, 8, 13, 12), (), [(12, 3, 2, 1, False, False), (12, 3, 1, 1, True, False)], False, False),
    ((3, 16, 10, 10), (0,), [(16, 3, 1, 1, True, True), (16, 3, 1, 1, True, True)], False, True),
    ((2, 16, 10, 10), (), [(16, 3, 1, 1, True, True), (16, 3, 1, 1, True, False)], True, False),
]

args, body, rets, inputs, refs, labels = [], [], [], [], [], []
for i, (xs, dyn, convs, keep_mid, special) in enumerate(CHAINS):
    shape = lambda s: ttype([-1 if d in dyn else n for d, n in enumerate(s)], "f32")
    x = rng.standard_normal(xs).astype(np.float32)
    if special:
        flat = x.reshape(-1)
        for k, v in zip(rng.choice(flat.size // xs[0], 2, replace=False),
                        (np.nan, np.inf)):
            flat[k] = v
    args.append("%%x%d: %s" % (i, shape(xs)))
    inputs.append(x)
    cur, cur_shape, ref = "%%x%d" % i, xs, t64(x)
    for j, (o, k, st, pd, bias, relu) in enumerate(convs):
        ws = (o, cur_shape[1], k, k)
        w = (rng.standard_normal(ws) / np.sqrt(cur_shape[1] * k * k)).astype(np.float32)
        ys = tuple(F.conv2d(torch.zeros(cur_shape), torch.zeros(ws), None, st, pd).shape)
        args.append("%%w%d_%d: %s" % (i, j, ttype(ws, "f32")))
        inputs.append(w)
        operands, types = "%s, %%w%d_%d" % (cur, i, j), "%s, %s" % (shape(cur_shape), ttype(ws, "f32"))
        b = None
        if bias:
            b = rng.standard_normal(o).astype(np.float32)
            args.append("%%b%d_%d: %s" % (i, j, ttype((o,), "f32")))
            inputs.append(b)
            operands += ", %%b%d_%d" % (i, j)
            types += ", " + ttype((o,), "f32")
        body.append("  %%c%d_%d = kt.conv2d %s {stride = [%d, %d], padding = [%d, %d]} : (%s) -> %s"
                    % (i, j, operands, st, st, pd, pd, types, shape(ys)))
        ref = F.conv2d(ref, t64(w), t64(b) if b is not None else None, st, pd)
        cur = "%%c%d_%d" % (i, j)
        if relu:
            body.append("  %%r%d_%d = kt.relu %s : (%s) -> %s" % (i, j, cur, shape(ys), shape(ys)))
            ref = torch.relu(ref)
            cur = "%%r%d_%d" % (i, j)
        if keep_mid and j == 0:
            rets.append((cur, shape(ys)))
            refs.append(ref.numpy())
            labels.append("chain %d middle" % i)
        cur_shape = ys
    rets.append((cur, shape(cur_shape)))
    refs.append(ref.numpy())
    labels.append("chain %d %s" % (i, convs))

mlir = "\n".join(
    ["func.func @main(%s) -> (%s) {" % (", ".join(args), ", ".join(t for _, t in rets))]
    + body
    + ["  return %s : %s" % (", ".join(r for r, _ in rets), ", ".join(t for _, t in rets)),
       "}", ""])
low = lowered(mlir)
tally.record("lowers", not low.startswith("error: "), low[:300])
for env in [{}, {"KILN_ONEDNN_LAYOUT": "blocked"}, {"KILN_ONEDNN_LAYOUT": "plain"}]:
    got, log = run(mlir, inputs, env, len(refs), "kiln-convchain-")
    if got is None:
        tally.record("%s" % env, False, log[:400])
        continue
    for label, g, ref in zip(labels, got, refs):
        ok, msg = same(g, ref.astype(np.float32), "f32", ref)
        tally.record("%s %s" % (label, env), ok, msg)
    if not env:
        # Mixed layouts (a channels-last input, an NCHW output) must not
        # leave a conv on oneDNN's reference kernel (KILN_ONEDNN_VERBOSE).
        choices = [l for l in log.splitlines() if l.startswith("kiln-onednn: n ")]
        tally.record("no reference kernel", choices and
                     not any(": ref:" in l for l in choices), "\n".join(choices))
tally.finish()
