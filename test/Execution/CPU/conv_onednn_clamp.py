# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# A oneDNN conv's relu / clamp folded into the call
# (kiln_onednn_conv2d_post_f32): kiln-cpu-outline-kernels puts a conv's
# only consumer, a kt.relu or kt.clamp, into the conv's kernel,
# kiln-cpu-conv-im2col folds it into the conv (kiln.conv_clamp), and
# libkiln_onednn clamps as the depthwise loops store, or in place after a
# oneDNN primitive or the loop nest. Against torch.nn.functional.conv2d +
# torch.clamp / torch.relu in float64 (the same() rule, NaN positions
# exact): relu, ReLU6, min only, max only, min > max (PyTorch: max wins),
# on 1x1, 3x3 padded in the call, a 7x7 stem, depthwise (stride 1 and 2, a
# channel multiplier), grouped, `?` batch, with and without a bias, inputs
# with NaN, +inf and -inf; all in one function (one compile per
# environment), with the default choice, KILN_ONEDNN_LAYOUT=blocked and
# =plain, and KILN_ONEDNN_DIRECT=0 (oneDNN primitives instead of the
# depthwise loops). Checks that every folded conv calls the post entry, and
# that a conv whose result is also read elsewhere is not folded (its
# unclamped result stays right). Chains conv -> relu/clamp -> depthwise
# conv check the input clamp (kiln.conv_input_clamp) the same ways.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_sweep import same
from kiln_testing import ttype
from onednn_conv_test import Tally, lowered, run

rng = np.random.default_rng(47)
tally = Tally("conv_onednn_clamp.py")
record = tally.record


# (x shape, w shape, stride, padding, groups, dyn dims of x, bias,
#  epilogue: (kt op, attrs, torch function), specials in x)
RELU = ("kt.relu", "", torch.relu)
RELU6 = ("kt.clamp", "{min = 0.0 : f64, max = 6.0 : f64}",
         lambda t: torch.clamp(t, 0, 6))
MIN = ("kt.clamp", "{min = -0.5 : f64}", lambda t: torch.clamp(t, min=-0.5))
MAX = ("kt.clamp", "{max = 1.25 : f64}", lambda t: torch.clamp(t, max=1.25))
CROSSED = ("kt.clamp", "{min = 1.0 : f64, max = -1.0 : f64}",
           lambda t: torch.clamp(t, 1.0, -1.0))
CASES = [
    ((2, 16, 5, 7), (24, 16, 1, 1), (1, 1), (0, 0), 1, (), True, RELU6, True),
    ((1, 9, 6, 5), (7, 9, 1, 1), (2, 2), (0, 0), 1, (), False, RELU, False),
    ((2, 5, 9, 8), (11, 5, 3, 3), (1, 1), (1, 1), 1, (), True, MIN, True),
    ((1, 3, 23, 21), (8, 3, 7, 7), (2, 2), (3, 3), 1, (), True, RELU, True),
    ((2, 40, 30, 30), (40, 40, 3, 3), (1, 1), (1, 1), 1, (), True, RELU, False),
    ((2, 13, 11, 9), (13, 1, 3, 3), (1, 1), (1, 1), 13, (), True, RELU6, True),
    ((1, 6, 20, 37), (12, 1, 3, 3), (2, 2), (1, 1), 6, (), False, RELU6, True),
    ((2, 6, 9, 9), (9, 2, 3, 3), (1, 2), (1, 1), 3, (), True, MAX, True),
    ((3, 10, 8, 8), (10, 1, 3, 3), (1, 1), (1, 1), 10, (0,), True, CROSSED, False),
    ((3, 8, 6, 7), (12, 8, 1, 1), (1, 1), (0, 0), 1, (0,), True, RELU, True),
    ((2, 8, 17, 18), (8, 1, 5, 5), (1, 1), (2, 2), 8, (0,), False, MAX, True),
]

args, body, rets, inputs, refs, labels = [], [], [], [], [], []
t64 = lambda a: torch.from_numpy(a.astype(np.float64))
for i, (xs, ws, st, pd, G, dyn, has_bias, (op, attrs, fn), special) in \
        enumerate(CASES):
    ys = tuple(F.conv2d(torch.zeros(xs), torch.zeros(ws), None, st, pd, 1, G).shape)
    o = ws[0]
    x = rng.standard_normal(xs).astype(np.float32)
    if special:
        # NaN, +inf and -inf at a few positions (in the first sample).
        flat = x.reshape(-1)
        for k, v in zip(rng.choice(flat.size // xs[0], 3, replace=False),
                        (np.nan, np.inf, -np.inf)):
            flat[k] = v
    w = (rng.standard_normal(ws) * 0.5).astype(np.float32)
    b = (rng.standard_normal(o) * 2).astype(np.float32)
    xt = ttype([-1 if d in dyn else n for d, n in enumerate(xs)], "f32")
    yt = ttype([-1 if d in dyn else n for d, n in enumerate(ys)], "f32")
    wt, bty = ttype(ws, "f32"), ttype((o,), "f32")
    args += ["%%x%d: %s" % (i, xt), "%%w%d: %s" % (i, wt)]
    conv_attrs = "stride = [%d, %d], padding = [%d, %d], groups = %d" % (st + pd + (G,))
    if has_bias:
        args.append("%%b%d: %s" % (i, bty))
        body.append("  %%c%d = kt.conv2d %%x%d, %%w%d, %%b%d {%s} : (%s, %s, %s) -> %s"
                    % (i, i, i, i, conv_attrs, xt, wt, bty, yt))
        inputs += [x, w, b]
    else:
        body.append("  %%c%d = kt.conv2d %%x%d, %%w%d {%s} : (%s, %s) -> %s"
                    % (i, i, i, conv_attrs, xt, wt, yt))
        inputs += [x, w]
    body.append("  %%r%d = %s %%c%d %s : (%s) -> %s" % (i, op, i, attrs, yt, yt))
    rets.append(("%%r%d" % i, yt))
    ref = fn(F.conv2d(t64(x), t64(w), t64(b) if has_bias else None, st, pd, 1,
                      G)).numpy()
    refs.append(ref)
    labels.append("x%s w%s s%s p%s g%d dyn%s bias %s %s %s"
                  % (xs, ws, st, pd, G, dyn, has_bias, op, attrs))

# A conv whose result is also returned: not folded (two uses), both right.
xs, ws = (2, 7, 6, 6), (5, 7, 3, 3)
x = rng.standard_normal(xs).astype(np.float32)
w = rng.standard_normal(ws).astype(np.float32)
xt, wt, yt = ttype(xs, "f32"), ttype(ws, "f32"), ttype((2, 5, 4, 4), "f32")
args += ["%%xu: %s" % xt, "%%wu: %s" % wt]
body.append("  %%cu = kt.conv2d %%xu, %%wu : (%s, %s) -> %s" % (xt, wt, yt))
body.append("  %%ru = kt.relu %%cu : (%s) -> %s" % (yt, yt))
rets += [("%cu", yt), ("%ru", yt)]
inputs += [x, w]
c = F.conv2d(t64(x), t64(w)).numpy()
refs += [c, np.maximum(c, 0)]
labels += ["two uses: the conv", "two uses: its relu"]

# Chains conv -> relu/clamp -> depthwise conv: a relu/clamp whose bounds
# keep 0 is folded into the depthwise conv as its input's clamp
# (kiln.conv_input_clamp: the depthwise loops clamp as they copy the input;
# oneDNN primitives, KILN_ONEDNN_DIRECT=0, read a clamped copy); one that
# does not (min 1) stays the first conv's epilogue.
# (x, w1, stride1, pad1, bias1, clamp, w2 (depthwise), stride2, pad2,
#  groups2, bias2, output clamp or None, dyn dims)
CHAINS = [
    ((2, 8, 10, 11), (24, 8, 1, 1), 1, 0, True, RELU6, (24, 1, 3, 3), 1, 1,
     24, True, RELU6, ()),
    ((1, 3, 21, 19), (16, 3, 3, 3), 2, 1, False, RELU, (16, 1, 3, 3), 2, 1,
     16, False, None, ()),
    ((2, 5, 9, 9), (12, 5, 1, 1), 1, 0, True,
     ("kt.clamp", "{min = 1.0 : f64, max = 6.0 : f64}",
      lambda t: torch.clamp(t, 1.0, 6.0)), (12, 1, 3, 3), 1, 1, 12, True,
     None, ()),
    ((3, 6, 12, 12), (6, 6, 1, 1), 1, 0, True, MAX, (12, 1, 5, 5), 1, 2, 6,
     True, RELU, (0,)),
]
for i, (xs, w1s, st1, pd1, b1, (op1, at1, fn1), w2s, st2, pd2, g2, b2, out,
        dyn) in enumerate(CHAINS):
    x = rng.standard_normal(xs).astype(np.float32)
    flat = x.reshape(-1)
    for k, v in zip(rng.choice(flat.size // xs[0], 3, replace=False),
                    (np.nan, np.inf, -np.inf)):
        flat[k] = v
    w1 = (rng.standard_normal(w1s) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal(w2s) * 0.5).astype(np.float32)
    bb1 = (rng.standard_normal(w1s[0]) * 2).astype(np.float32)
    bb2 = (rng.standard_normal(w2s[0]) * 2).astype(np.float32)
    y1 = tuple(F.conv2d(torch.zeros(xs), torch.zeros(w1s), None, st1, pd1).shape)
    y2 = tuple(F.conv2d(torch.zeros(y1), torch.zeros(w2s), None, st2, pd2, 1,
                        g2).shape)
    shape = lambda s: ttype([-1 if d in dyn else n for d, n in enumerate(s)], "f32")
    xt, y1t, y2t = shape(xs), shape(y1), shape(y2)
    w1t, w2t = ttype(w1s, "f32"), ttype(w2s, "f32")
    v = "q%d" % i
    args += ["%%%sx: %s" % (v, xt), "%%%sw1: %s" % (v, w1t),
             "%%%sw2: %s" % (v, w2t)]
    inputs += [x, w1, w2]
    bias1 = bias2 = ""
    types1 = "%s, %s" % (xt, w1t)
    types2 = "%s, %s" % (y1t, w2t)
    if b1:
        args.append("%%%sb1: %s" % (v, ttype((w1s[0],), "f32")))
        inputs.append(bb1)
        bias1 = ", %%%sb1" % v
        types1 += ", " + ttype((w1s[0],), "f32")
    if b2:
        args.append("%%%sb2: %s" % (v, ttype((w2s[0],), "f32")))
        inputs.append(bb2)
        bias2 = ", %%%sb2" % v
        types2 += ", " + ttype((w2s[0],), "f32")
    body.append("  %%%sc1 = kt.conv2d %%%sx, %%%sw1%s {stride = [%d, %d], padding = [%d, %d]} : (%s) -> %s"
                % (v, v, v, bias1, st1, st1, pd1, pd1, types1, y1t))
    body.append("  %%%sr1 = %s %%%sc1 %s : (%s) -> %s" % (v, op1, v, at1, y1t, y1t))
    body.append("  %%%sc2 = kt.conv2d %%%sr1, %%%sw2%s {stride = [%d, %d], padding = [%d, %d], groups = %d} : (%s) -> %s"
                % (v, v, v, bias2, st2, st2, pd2, pd2, g2, types2, y2t))
    last = "%%%sc2" % v
    if out:
        body.append("  %%%sr2 = %s %%%sc2 %s : (%s) -> %s" % (v, out[0], v, out[1], y2t, y2t))
        last = "%%%sr2" % v
    rets.append((last, y2t))
    r = fn1(F.conv2d(t64(x), t64(w1), t64(bb1) if b1 else None, st1, pd1))
    r = F.conv2d(r, t64(w2), t64(bb2) if b2 else None, st2, pd2, 1, g2)
    refs.append((out[2](r) if out else r).numpy())
    labels.append("chain %d: %s %s -> depthwise %s, out %s" % (
        i, op1, at1, w2s, out and out[0]))
# Post calls: every depthwise conv of a chain (its input clamp) and the
# first conv of the chain whose clamp keeps no 0 (its epilogue).
CHAIN_POSTS = 4

mlir = "\n".join(
    ["func.func @main(%s) -> (%s) {" % (", ".join(args), ", ".join(t for _, t in rets))]
    + body
    + ["  return %s : %s" % (", ".join(r for r, _ in rets), ", ".join(t for _, t in rets)),
       "}", ""])
low = lowered(mlir)
posts = low.count("llvm.call @kiln_onednn_conv2d_post_f32")
record("every clamped single-use conv calls the post entry",
       posts == len(CASES) + CHAIN_POSTS, "%d calls; %s" % (posts, low[:300]))
record("the conv with two uses is not folded",
       low.count("llvm.call @kiln_onednn_conv2d_f32") == 1, low[-300:])
for env in [{}, {"KILN_ONEDNN_LAYOUT": "blocked"},
            {"KILN_ONEDNN_LAYOUT": "plain"}, {"KILN_ONEDNN_DIRECT": "0"}]:
    got, log = run(mlir, inputs, env, len(refs), "kiln-convclamp-")
    if got is None:
        record("%s" % env, False, log[:400])
        continue
    for label, g, ref in zip(labels, got, refs):
        ok, msg = same(g, ref.astype(np.float32), "f32", ref)
        record("%s %s" % (label, env), ok, msg)

tally.finish()
