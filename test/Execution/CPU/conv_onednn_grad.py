# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# conv2d's backward on the CPU backend through oneDNN: the joint program
# that kiln-autodiff emits (input gradient kt.conv_transpose2d, weight
# gradient a kt.conv2d over x and gy with batch and channels swapped, bias
# gradient a kt.sum), compiled with kiln-run --backend=cpu --conv=onednn and
# --conv=auto, against torch.autograd in float64 (an independent reference):
# stride 2 and 3, padding, dilation, groups, depthwise, 1x1, non-square,
# batch 1. The input gradient of an ungrouped conv runs whole as oneDNN's
# backward-data primitive (KILN_ONEDNN_VERBOSE=1 prints "transposed
# (backward data)"). libkiln_onednn runs each ungrouped weight gradient as oneDNN's
# backward-weights primitive (KILN_ONEDNN_VERBOSE=1 prints "weight
# gradient"); grouped ones stay forward convolutions; KILN_ONEDNN_WGRAD=0
# turns the rule off (same numbers, no "weight gradient"). Convolutions
# without a bias overwrite their output (no "accumulate" call). Depthwise
# convolutions (one input channel per group; stride 1 and 2, dilation,
# channel multiplier 2, batch 1, odd sizes, with and without a bias): the
# forward and the input gradient's stride-1 conv run libkiln_onednn's
# direct depthwise loops ("kiln:depthwise_direct"), the weight gradient its
# direct reduction ("kiln:depthwise_weight_grad_direct");
# KILN_ONEDNN_DIRECT=0 runs them as oneDNN primitives (same numbers). The
# input gradient of a depthwise conv of multiplier 1 runs whole, without
# the zero-interleaved copy, on libkiln_onednn's transposed depthwise loops
# ("kiln:depthwise_transposed_direct", with or without KILN_ONEDNN_DIRECT).
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import KILN_OPT, KILN_RUN, Suite, ttype

rng = np.random.default_rng(7)
suite = Suite(__file__)
record = suite.record


# (x shape, w shape, bias, stride, padding, dilation, groups)
CASES = [
    ((1, 3, 11, 9), (8, 3, 3, 3), True, (1, 1), (1, 1), (1, 1), 1),    # batch 1
    ((3, 8, 15, 12), (16, 8, 3, 3), False, (2, 2), (1, 1), (1, 1), 1),  # stride 2
    ((2, 8, 15, 12), (16, 8, 3, 5), True, (2, 1), (1, 2), (1, 2), 1),   # non-square
    ((1, 4, 17, 16), (6, 4, 3, 3), False, (3, 3), (2, 2), (2, 2), 1),   # stride 3
    ((2, 16, 9, 7), (24, 16, 1, 1), False, (2, 2), (0, 0), (1, 1), 1),  # 1x1 s2
    ((2, 16, 5, 7), (24, 16, 1, 1), True, (1, 1), (0, 0), (1, 1), 1),   # 1x1
    ((2, 3, 32, 30), (16, 3, 7, 7), False, (2, 2), (3, 3), (1, 1), 1),  # stem
    ((2, 6, 12, 13), (9, 2, 3, 3), True, (1, 1), (0, 0), (2, 2), 3),    # groups
    ((2, 8, 7, 10), (8, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 8),     # depthwise
    ((1, 5, 14, 13), (7, 5, 3, 3), False, (2, 2), (3, 1), (2, 1), 1),   # pad > d(k-1)
    ((2, 6, 12, 11), (4, 6, 5, 5), False, (2, 3), (2, 0), (1, 1), 1),   # 5x5 s2x3
    ((1, 32, 16, 16), (64, 32, 3, 3), False, (2, 2), (1, 1), (1, 1), 1),  # 32->64 s2
    # resnet's downsampling on even sizes: the weight gradient's conv has a
    # row and a column past the kernel (4x4 for 3x3, 2x2 for 1x1), which
    # kiln-cpu-conv-im2col drops; for the 1x1 the source is seen one row
    # and column shorter (libkiln_onednn's negative bottom/right padding)
    ((2, 8, 14, 14), (16, 8, 3, 3), True, (2, 2), (1, 1), (1, 1), 1),
    ((2, 16, 10, 8), (24, 16, 1, 1), False, (2, 2), (0, 0), (1, 1), 1),
    # depthwise: stride 2, odd sizes, batch 1, dilation, multiplier 2
    ((2, 6, 13, 11), (6, 1, 3, 3), False, (2, 2), (1, 1), (1, 1), 6),
    ((1, 5, 9, 12), (5, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 5),
    ((3, 4, 12, 10), (4, 1, 3, 3), False, (1, 1), (2, 2), (2, 2), 4),
    ((2, 4, 11, 9), (8, 1, 3, 3), True, (2, 1), (1, 1), (1, 1), 4),
    ((2, 3, 10, 10), (3, 1, 5, 5), False, (1, 1), (2, 2), (1, 1), 3),
    # The depthwise weight gradient's register loops (wgradPair): rows of
    # the output gradient longer than a vector with a tail (20, 17 wide),
    # exactly one vector (16; 8 for the 8-wide vectors of short rows), a
    # 7-wide row (8-wide vectors, tail only), stride 2 on even and odd
    # sizes (a 4x4 call sliced to 3x3), a `?` batch (the call's reduction
    # dim), a 2x2 kernel (the dot-product loops; padded: their padded
    # copy), padding 2x1 with dilation 2x1 and stride 2, and inf in x's
    # last column: the weight gradient's column 0 never reads it, so it
    # stays finite (the vector tail's masked lanes read it). The weight
    # gradient's call pads x itself (kiln_onednn_conv2d_pad_f32).
    ((2, 20, 20, 20), (20, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 20),
    ((2, 17, 34, 33), (17, 1, 3, 3), True, (2, 2), (1, 1), (1, 1), 17),
    ((1, 16, 16, 16), (16, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 16),
    ((3, 24, 7, 7), (24, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 24),
    ((2, 12, 16, 16), (12, 1, 3, 3), False, (2, 2), (1, 1), (1, 1), 12),
    ((3, 18, 21, 19), (18, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 18,
     {"dyn": True}),
    ((2, 6, 9, 9), (6, 1, 2, 2), False, (1, 1), (0, 0), (1, 1), 6),
    ((2, 6, 9, 8), (6, 1, 2, 2), True, (1, 1), (1, 1), (1, 1), 6),
    ((2, 5, 11, 10), (5, 1, 3, 3), False, (2, 2), (2, 1), (2, 1), 5),
    ((2, 10, 9, 10), (10, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 10,
     {"inf_last_col": True}),
    # The depthwise input gradient run whole (kiln_onednn_dw_conv_transpose2d
    # _f32: each output row gathered from the gradient rows whose taps reach
    # it, no zero-interleaved copy): stride 2 with padding 0, 1 and 2 on even
    # and odd sizes (output_padding 1 where the last row/column is past the
    # windows), batch 1, channels not a multiple of 16, stride 3, stride 2
    # with dilation 2, a 5x5 kernel at stride 2, stride 2x1, a `?` batch.
    ((2, 7, 12, 12), (7, 1, 3, 3), False, (2, 2), (0, 0), (1, 1), 7),
    ((1, 17, 13, 14), (17, 1, 3, 3), True, (2, 2), (1, 1), (1, 1), 17),
    ((2, 9, 14, 11), (9, 1, 3, 3), False, (2, 2), (2, 2), (1, 1), 9),
    ((2, 5, 16, 17), (5, 1, 3, 3), False, (3, 3), (1, 0), (1, 1), 5),
    ((2, 6, 15, 16), (6, 1, 3, 3), False, (2, 2), (2, 2), (2, 2), 6),
    ((1, 3, 19, 18), (3, 1, 5, 5), False, (2, 2), (2, 2), (1, 1), 3),
    ((2, 4, 10, 13), (4, 1, 3, 3), False, (1, 2), (1, 1), (1, 1), 4),
    ((3, 20, 12, 12), (20, 1, 3, 3), False, (2, 2), (1, 1), (1, 1), 20,
     {"dyn": True}),
]


def module(xs, ws, bias, st, pd, dl, G, dyn=False):
    ys = tuple(F.conv2d(torch.zeros(xs), torch.zeros(ws), None, st, pd, dl, G).shape)
    if dyn:  # a `?` batch in the function's types
        ys_t = (-1,) + ys[1:]
        xs = (-1,) + xs[1:]
    else:
        ys_t = ys
    args = ["%%x: %s" % ttype(xs, "f32"), "%%w: %s" % ttype(ws, "f32")]
    ops = "%x, %w"
    tys = [ttype(xs, "f32"), ttype(ws, "f32")]
    if bias:
        args.append("%%b: %s" % ttype((ws[0],), "f32"))
        ops += ", %b"
        tys.append(ttype((ws[0],), "f32"))
    attrs = ("stride = [%d, %d], padding = [%d, %d], dilation = [%d, %d], "
             "groups = %d" % (st + pd + dl + (G,)))
    text = ("func.func @f(%s) -> %s attributes {kg.differentiate} {\n"
            "  %%0 = kt.conv2d %s {%s} : (%s) -> %s\n"
            "  return %%0 : %s\n}\n" % (", ".join(args), ttype(ys_t, "f32"), ops,
                                         attrs, ", ".join(tys), ttype(ys_t, "f32"),
                                         ttype(ys_t, "f32")))
    return text, ys


def run_joint(joint, inputs, conv, env):
    tmp = tempfile.mkdtemp(prefix="kiln-convgrad-")
    path = os.path.join(tmp, "j.mlir")
    with open(path, "w") as f:
        f.write(joint)
    args = [KILN_RUN, path, "--entry=f_joint", "--backend=cpu", "--conv=" + conv,
            "--cpu-threads=2", "--output-dir=" + os.path.join(tmp, "out")]
    for i, a in enumerate(inputs):
        p = os.path.join(tmp, "in%d.npy" % i)
        np.save(p, a)
        args.append("--input=" + p)
    proc = subprocess.run(args, capture_output=True, text=True,
                          env=dict(os.environ, KILN_ONEDNN_VERBOSE="1", **env))
    if proc.returncode != 0:
        return None, proc.stderr
    outs = []
    while os.path.exists(os.path.join(tmp, "out", "result%d.npy" % len(outs))):
        outs.append(np.load(os.path.join(tmp, "out", "result%d.npy" % len(outs))))
    return outs, proc.stderr


for xs, ws, bias, st, pd, dl, G, *opt in CASES:
    opt = opt[0] if opt else {}
    label = "x%s w%s s%s p%s d%s g%d%s" % (xs, ws, st, pd, dl, G,
                                          "".join(" " + k for k in opt))
    text, ys = module(xs, ws, bias, st, pd, dl, G, opt.get("dyn", False))
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    p = subprocess.run([KILN_OPT, f.name, "-kiln-autodiff"], capture_output=True,
                       text=True)
    os.unlink(f.name)
    if p.returncode != 0:
        record(label, False, "kiln-autodiff: " + p.stderr[:300])
        continue
    x = rng.standard_normal(xs).astype(np.float32)
    if opt.get("inf_last_col"):
        x[:, :, :, -1] = np.inf
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    g = rng.standard_normal(ys).astype(np.float32)
    inputs = [x, w] + ([b] if bias else []) + [g]
    # The reference: torch.autograd in float64.
    tx, tw, tb = (torch.tensor(a, dtype=torch.float64, requires_grad=True)
                  for a in (x, w, b))
    ty = F.conv2d(tx, tw, tb if bias else None, st, pd, dl, G)
    (ty * torch.tensor(g, dtype=torch.float64)).sum().backward()
    want = [ty.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()]
    if bias:
        want.append(tb.grad.numpy())
    runs = [("onednn", {}), ("auto", {})]
    depthwise = G > 1 and ws[1] == 1
    if G == 1:
        runs.append(("onednn", {"KILN_ONEDNN_WGRAD": "0"}))
    if depthwise:
        runs.append(("auto", {"KILN_ONEDNN_DIRECT": "0"}))
    for conv, env in runs:
        sub = "%s %s %s" % (label, conv, env or "")
        outs, err = run_joint(p.stdout, inputs, conv, env)
        if outs is None:
            record(sub, False, err[:400])
            continue
        ok = len(outs) == len(want)
        msg = "%d results" % len(outs)
        for i, (o, e) in enumerate(zip(outs, want)):
            if o.shape != e.shape or not np.allclose(o, e, rtol=1e-4, atol=1e-4,
                                                     equal_nan=True):
                ok = False
                msg = "result %d: max err %s" % (
                    i, np.abs(o - e).max() if o.shape == e.shape else o.shape)
        if opt.get("inf_last_col") and len(outs) > 2:
            # The weight gradient's column 0 is finite (see CASES).
            col0 = np.isfinite(outs[2][:, :, :, 0]).all()
            ok = ok and col0 and np.isfinite(want[2][:, :, :, 0]).all()
            msg += "; weight gradient column 0 finite: %s" % col0
        record(sub, ok, msg)
        # The weight gradient's primitive: backward-weights exactly where
        # the rule applies (ungrouped, not turned off).
        # (Stride (2, 3) with padding (2, 0): the weight gradient's call,
        # kernel 6x3 for a 6x5 output, is not of the weight-gradient shape
        # and runs as a forward primitive; the forward conv, kernel 5x5 for
        # a 6x3 output, is, and runs as a backward-weights primitive with
        # its padding given to oneDNN. Before the padding was given to the
        # primitive, oneDNN refused that descriptor.)
        expect = G == 1 and not env
        got = "kiln-onednn: weight gradient" in err
        record(sub + " primitive", got == expect,
               "weight-gradient primitive %s, expected %s; stderr: %s" % (
                   got, expect, err[:400]))
        # The input gradient (kt.conv_transpose2d, no bias) runs whole as
        # oneDNN's backward-data primitive where ungrouped, not as a
        # stride-1 conv over the zero-interleaved gradient.
        got = "kiln-onednn: transposed (backward data)" in err
        record(sub + " backward data", got == (G == 1),
               "backward-data primitive %s, expected %s; stderr: %s" % (
                   got, G == 1, err[:400]))
        # The input gradient of a depthwise conv of multiplier 1 runs whole
        # on libkiln_onednn's transposed depthwise loops (every stride), not
        # as a stride-1 conv over the zero-interleaved gradient. (A
        # multiplier-2 forward's transposed conv sums 2 channels per group:
        # it keeps the stride-1 conv.)
        dwt = depthwise and ws[0] == G
        got = "kiln:depthwise_transposed_direct" in err
        record(sub + " transposed depthwise", got == dwt,
               "transposed depthwise loops %s, expected %s; stderr: %s" % (
                   got, dwt, err[:400]))
        # Depthwise convs run libkiln_onednn's direct loops unless turned
        # off (the forward and the input gradient's stride-1 conv; the
        # weight gradient its reduction).
        direct = depthwise and "KILN_ONEDNN_DIRECT" not in env
        for tag in ("kiln:depthwise_direct",
                    "kiln:depthwise_weight_grad_direct"):
            record("%s %s" % (sub, tag), (tag in err) == direct,
                   "%s in stderr: %s, expected %s; stderr: %s" % (
                       tag, tag in err, direct, err[:400]))
        # Without a bias every convolution (forward, input and weight
        # gradient) overwrites its zero-initialized output: the zero fill
        # is dropped (kiln-cpu-tile-vectorize leaves it whole for
        # kiln-cpu-conv-to-onednn), no sum post-op.
        if not bias:
            record(sub + " overwrite", " accumulate:" not in err,
                   "a call accumulates: " + err[:400])

suite.finish()
