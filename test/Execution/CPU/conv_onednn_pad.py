# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# In-kernel padding of oneDNN convolutions: kiln-cpu-conv-im2col marks the
# zero fill + copy that pad an f32 conv's input, kiln-cpu-conv-to-onednn
# drops them and calls kiln_onednn_conv2d_pad_f32 on the unpadded input,
# and libkiln_onednn pads inside the convolution (the depthwise loops skip
# the border, oneDNN primitives take the padding as their own, the loop
# nest checks bounds). Against torch.nn.functional.conv2d in float64 (the
# same() rule): depthwise stride 1 and 2, padding 0, 1, 2 and 3 (wider
# than the kernel's reach), odd sizes, batch 1, channel counts that are
# not multiples of 8 or 16, a channel multiplier, dilation, asymmetric
# padding, ungrouped and grouped convs, `?` batch (in-kernel) and `?`
# height (padded copy kept), f64 (generated code, unchanged), each with the
# direct depthwise loops and with KILN_ONEDNN_DIRECT=0 (oneDNN primitives),
# and a mobilenet_v2 inverted residual (1x1, ReLU6, depthwise s1/s2, 1x1,
# add). Each f32 case also checks which entry the compiled code calls and
# that libkiln_onednn ran it padded (KILN_ONEDNN_VERBOSE).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_sweep import same
from kiln_testing import ttype
from onednn_conv_test import Tally, inverted_residual, lowered
from onednn_conv_test import run as run_n

rng = np.random.default_rng(29)
tally = Tally("conv_onednn_pad.py")
record = tally.record


def opt_calls(mlir):
    """Which conv entry the fully lowered module calls."""
    out = lowered(mlir)
    if out.startswith("error: "):
        return out
    return ("bias" if "llvm.call @kiln_onednn_conv2d_bias_f32" in out else
            "pad" if "llvm.call @kiln_onednn_conv2d_pad_f32" in out else
            "plain" if "llvm.call @kiln_onednn_conv2d_f32" in out else "none")


def run(mlir, inputs, env):
    got, log = run_n(mlir, inputs, env, 1, "kiln-convpad-")
    return (got[0] if got is not None else None), log


# (x shape, w shape, bias, stride, padding, dilation, groups, dyn dims of x)
CASES = [
    # depthwise: mobilenet's forms at odd sizes, padding 0..3, batch 1
    ((2, 24, 13, 11), (24, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 24, ()),
    ((1, 7, 15, 17), (7, 1, 3, 3), True, (2, 2), (1, 1), (1, 1), 7, ()),
    ((3, 5, 9, 8), (5, 1, 3, 3), False, (2, 2), (0, 0), (1, 1), 5, ()),
    ((1, 9, 6, 7), (9, 1, 3, 3), True, (1, 1), (2, 2), (1, 1), 9, ()),
    ((2, 3, 5, 4), (3, 1, 3, 3), False, (2, 1), (3, 3), (1, 1), 3, ()),
    ((1, 6, 10, 37), (12, 1, 5, 3), True, (1, 2), (2, 1), (2, 1), 6, ()),
    ((2, 4, 12, 9), (4, 1, 3, 5), False, (1, 1), (1, 2), (2, 2), 4, ()),
    # the direct loops' register blocks (8 rows x 16 columns): more rows and
    # columns than one block, neither a multiple of it; stride 3 (the
    # generic phase split) and a multiplier with stride 2
    ((2, 8, 30, 50), (8, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 8, ()),
    ((1, 4, 40, 41), (4, 1, 3, 3), False, (3, 3), (1, 1), (1, 1), 4, ()),
    ((1, 3, 35, 70), (6, 1, 3, 3), True, (2, 2), (1, 1), (1, 1), 3, ()),
    # a row narrower than the kernel's reach: some columns read only padding
    ((1, 3, 5, 2), (3, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 3, ()),
    ((1, 3, 2, 7), (3, 1, 3, 3), True, (1, 1), (3, 2), (1, 1), 3, ()),
    # kernel larger than the output: the padded copy stays
    ((1, 3, 4, 1), (3, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 3, ()),
    # ungrouped (oneDNN primitive with its own padding): a stem, a 3x3
    ((2, 3, 17, 19), (10, 3, 3, 3), True, (2, 2), (1, 1), (1, 1), 1, ()),
    ((1, 5, 7, 6), (4, 5, 3, 3), False, (1, 1), (2, 2), (1, 1), 1, ()),
    ((1, 3, 11, 9), (6, 3, 7, 7), False, (2, 2), (3, 3), (1, 1), 1, ()),
    ((2, 3, 21, 23), (8, 3, 7, 7), True, (2, 2), (3, 3), (1, 1), 1, ()),
    # grouped, 2 channels per group
    ((2, 6, 9, 9), (9, 2, 3, 3), True, (1, 2), (1, 1), (1, 1), 3, ()),
    # `?` batch (in-kernel), `?` height (the padded copy stays)
    ((3, 10, 8, 8), (10, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 10, (0,)),
    ((2, 10, 8, 8), (10, 1, 3, 3), False, (2, 2), (1, 1), (1, 1), 10, (2,)),
]

for xs, ws, bias, st, pd, dl, G, dyn in CASES:
    ys = tuple(F.conv2d(torch.zeros(xs), torch.zeros(ws), None, st, pd, dl, G).shape)
    for elem in ("f32", "f64"):
        dt = np.float32 if elem == "f32" else np.float64
        x = rng.standard_normal(xs).astype(dt)
        w = (rng.standard_normal(ws) * 0.5).astype(dt)
        b = rng.standard_normal(ws[0]).astype(dt)
        ins = [x, w] + ([b] if bias else [])
        xt = ttype([-1 if d in dyn else n for d, n in enumerate(xs)], elem)
        yt = ttype([-1 if d in dyn and d in (0, 2) else n for d, n in enumerate(ys)],
                   elem)
        tys = [xt, ttype(ws, elem)] + ([ttype((ws[0],), elem)] if bias else [])
        ops = ", ".join("%%a%d" % i for i in range(len(ins)))
        args = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(tys))
        attrs = ("stride = [%d, %d], padding = [%d, %d], dilation = [%d, %d], "
                 "groups = %d" % (st + pd + dl + (G,)))
        mlir = ("func.func @main(%s) -> %s {\n  %%r = kt.conv2d %s {%s} : (%s) -> %s\n"
                "  return %%r : %s\n}\n" % (args, yt, ops, attrs, ", ".join(tys), yt, yt))
        t64 = lambda a: torch.from_numpy(a.astype(np.float64))
        ref = F.conv2d(t64(x), t64(w), t64(b) if bias else None, st, pd, dl, G).numpy()
        label = "%s x%s w%s s%s p%s d%s g%d dyn%s" % (elem, xs, ws, st, pd, dl, G, dyn)
        # Not in-kernel: f64, no padding, `?` height. A conv whose kernel
        # is larger than the output is padded in the call too: grouped,
        # by libkiln_onednn's depthwise weight-gradient loops (since tr22;
        # they log " padded"); ungrouped, by oneDNN's backward-weights
        # primitive, which logs "weight gradient", not " padded".
        wgrad = ws[2] * ws[3] > ys[2] * ys[3]
        padded = elem == "f32" and pd != (0, 0) and 2 not in dyn
        if elem == "f32":
            # (a bias: the bias entry, which takes the paddings too)
            want_call = "bias" if bias else "pad" if padded else "plain"
            got_call = opt_calls(mlir)
            record(label + " calls " + want_call, got_call == want_call, got_call)
        envs = [{}, {"KILN_ONEDNN_DIRECT": "0"}] if elem == "f32" and G > 1 else [{}]
        for env in envs:
            got, log = run(mlir, ins, env)
            if got is None:
                record("%s %s" % (label, env), False, log[:400])
                continue
            ok, msg = same(got, ref.astype(dt), elem, ref)
            record("%s %s" % (label, env), ok, msg)
            if elem == "f32":
                record("%s %s ran padded" % (label, env),
                       (" padded" in log) == (padded and
                                              (not wgrad or G > 1)),
                       log[-400:])

# A mobilenet_v2 inverted residual (onednn_conv_test.inverted_residual).
mlir, ins, ref = inverted_residual(rng)
for env in [{}, {"KILN_ONEDNN_DIRECT": "0"}]:
    got, log = run(mlir, ins, env)
    if got is None:
        record("inverted residual %s" % env, False, log[:400])
        continue
    ok, msg = same(got, ref.astype(np.float32), "f32", ref)
    record("inverted residual %s" % env, ok, msg)
    # (Each depthwise call's line; with KILN_ONEDNN_DIRECT=0 a call with
    # an input clamp logs again for the clamped copy it then runs on.)
    dw = [l for l in log.splitlines() if " c 1 " in l and " k 3x3 " in l]
    record("inverted residual %s: both depthwise convs padded" % env,
           len(dw) >= 2 and all(" padded" in l for l in dw), log[-600:])

tally.finish()
