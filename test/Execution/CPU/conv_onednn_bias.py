# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# A oneDNN conv's bias added by the call (kiln_onednn_conv2d_bias_f32):
# kiln-cpu-conv-im2col marks the broadcast of the bias into the conv's
# output init, kiln-cpu-conv-to-onednn drops it and passes the bias, and
# libkiln_onednn adds it (oneDNN's bias argument; the depthwise loops and
# the loop nest start each sum from it). Against
# torch.nn.functional.conv2d in float64 (the same() rule): 1x1, 3x3
# padded in the call, a 7x7 stem, depthwise (stride 1 and 2, a channel
# multiplier) and grouped convs, batch 1, odd channel counts, `?` batch,
# a bias that is a strided view (every other element of a longer vector),
# all in one function (one compile per environment), with the default
# choice, KILN_ONEDNN_LAYOUT=blocked and KILN_ONEDNN_DIRECT=0 (oneDNN
# primitives for depthwise convs); checks that the compiled code calls the
# bias entry for every conv and that libkiln_onednn ran each with the bias
# (KILN_ONEDNN_VERBOSE).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_sweep import same
from kiln_testing import ttype
from onednn_conv_test import Tally, lowered, run

rng = np.random.default_rng(31)
tally = Tally("conv_onednn_bias.py")
record = tally.record


def opt_calls(mlir):
    """How many kiln_onednn_conv2d_bias_f32 calls the fully lowered module
    makes (and none of the other conv entries)."""
    out = lowered(mlir)
    if out.startswith("error: "):
        return out
    if any("llvm.call @kiln_onednn_conv2d_%s" % e in out
           for e in ("pad_f32", "f32")):
        return "a call without the bias: " + out[-300:]
    return out.count("llvm.call @kiln_onednn_conv2d_bias_f32")


# (x shape, w shape, stride, padding, groups, dyn dims of x, strided bias)
CASES = [
    ((2, 16, 5, 7), (24, 16, 1, 1), (1, 1), (0, 0), 1, (), False),     # 1x1
    ((1, 9, 6, 5), (7, 9, 1, 1), (2, 2), (0, 0), 1, (), True),         # 1x1 s2
    ((2, 5, 9, 8), (11, 5, 3, 3), (1, 1), (1, 1), 1, (), False),       # 3x3 pad
    ((1, 3, 23, 21), (8, 3, 7, 7), (2, 2), (3, 3), 1, (), False),      # stem
    ((2, 40, 30, 30), (40, 40, 3, 3), (1, 1), (1, 1), 1, (), False),   # blocked
    ((2, 13, 11, 9), (13, 1, 3, 3), (1, 1), (1, 1), 13, (), False),    # dw
    ((1, 6, 12, 13), (12, 1, 3, 3), (2, 2), (1, 1), 6, (), True),      # dw x2 s2
    ((2, 6, 9, 9), (9, 2, 3, 3), (1, 2), (1, 1), 3, (), False),        # grouped
    ((3, 10, 8, 8), (10, 1, 3, 3), (1, 1), (1, 1), 10, (0,), False),   # ? batch
    ((3, 8, 6, 7), (12, 8, 1, 1), (1, 1), (0, 0), 1, (0,), True),      # ? batch
]

# All cases in one function (one compile per environment: the test stays
# fast), each conv with its own inputs and result.
args, body, rets, inputs, refs, labels = [], [], [], [], [], []
t64 = lambda a: torch.from_numpy(a.astype(np.float64))
for i, (xs, ws, st, pd, G, dyn, strided) in enumerate(CASES):
    ys = tuple(F.conv2d(torch.zeros(xs), torch.zeros(ws), None, st, pd, 1, G).shape)
    o = ws[0]
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) * 0.5).astype(np.float32)
    b = (rng.standard_normal(2 * o if strided else o) * 2).astype(np.float32)
    bt = b[::2] if strided else b
    xt = ttype([-1 if d in dyn else n for d, n in enumerate(xs)], "f32")
    yt = ttype([-1 if d in dyn else n for d, n in enumerate(ys)], "f32")
    wt, bty = ttype(ws, "f32"), ttype((len(b),), "f32")
    args += ["%%x%d: %s" % (i, xt), "%%w%d: %s" % (i, wt), "%%b%d: %s" % (i, bty)]
    bias = "%%b%d" % i
    if strided:
        body.append("  %%bs%d = kt.slice %%b%d {dim = 0, start = 0, end = %d, step = 2} "
                    ": (%s) -> %s" % (i, i, 2 * o, bty, ttype((o,), "f32")))
        bias = "%%bs%d" % i
    attrs = "stride = [%d, %d], padding = [%d, %d], groups = %d" % (st + pd + (G,))
    body.append("  %%r%d = kt.conv2d %%x%d, %%w%d, %s {%s} : (%s, %s, %s) -> %s"
                % (i, i, i, bias, attrs, xt, wt, ttype((o,), "f32"), yt))
    rets.append(("%%r%d" % i, yt))
    inputs += [x, w, b]
    refs.append(F.conv2d(t64(x), t64(w), t64(bt), st, pd, 1, G).numpy())
    labels.append("x%s w%s s%s p%s g%d dyn%s strided bias %s"
                  % (xs, ws, st, pd, G, dyn, strided))
mlir = "\n".join(
    ["func.func @main(%s) -> (%s) {" % (", ".join(args), ", ".join(t for _, t in rets))]
    + body
    + ["  return %s : %s" % (", ".join(r for r, _ in rets), ", ".join(t for _, t in rets)),
       "}", ""])
n_calls = opt_calls(mlir)
record("every conv calls the bias entry", n_calls == len(CASES), n_calls)
# The default choice (plain layout, blocked for the 40-channel 3x3, the
# depthwise loops), every ungrouped conv blocked, and oneDNN primitives for
# the grouped ones instead of the depthwise loops.
for env in [{}, {"KILN_ONEDNN_LAYOUT": "blocked"}, {"KILN_ONEDNN_DIRECT": "0"}]:
    got, log = run(mlir, inputs, env, len(CASES), "kiln-convbias-")
    if got is None:
        record("%s" % env, False, log[:400])
        continue
    for label, g, ref in zip(labels, got, refs):
        ok, msg = same(g, ref.astype(np.float32), "f32", ref)
        record("%s %s" % (label, env), ok, msg)
    record("%s: every conv ran with the bias" % env,
           log.count(" bias:") == len(CASES), log[-600:])

tally.finish()
