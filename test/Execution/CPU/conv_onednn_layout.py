# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# Channels-last activations between oneDNN convs (kiln-cpu-conv-channels-last):
# resnet-shaped graphs whose convs write channels-last twins, whose residual
# adds, relus and unfolded batch norms run on [N, H, W, C] tensors and whose
# convs read channels-last inputs in place, against torch in float64 (the
# same() rule), under the default, blocked and plain oneDNN layouts. Cases: a basic block with a strided conv and a 1x1 downsample, a
# bottleneck whose batch norms stay unfolded (kt.batch_norm, and the
# decomposed [C, 1, 1] form), a stem with a max pool (pooled channels-last
# by kiln-cpu-pool-windows; uneven windows, strides and padding), a residual value that is also returned, a
# `?` batch, NaN and inf in the input, a global average pool (a mean over
# H and W, which reads the channels-last value). The lowered module must have the
# twins in the convs' kernels (no linalg.transpose left after
# kiln-cpu-conv-to-onednn).
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from cpu_sweep import same
from kiln_testing import KILN_OPT, ttype
from onednn_conv_test import Tally, run

rng = np.random.default_rng(83)
tally = Tally("conv_onednn_layout.py")
t64 = lambda a: torch.from_numpy(np.asarray(a).astype(np.float64))


class Graph:
    """A kt function built op by op next to its float64 torch reference."""

    def __init__(self, dyn=()):
        self.args, self.body, self.inputs, self.rets = [], [], [], []
        self.n, self.dyn = 0, dyn

    def ty(self, shape, act=True):
        return ttype([-1 if act and d in self.dyn else s
                      for d, s in enumerate(shape)], "f32")

    def arg(self, a, act=False):
        name = "%%a%d" % len(self.args)
        self.args.append("%s: %s" % (name, self.ty(a.shape, act)))
        self.inputs.append(a.astype(np.float32))
        return (name, a.shape, t64(a), act)

    def op(self, text, shape, ref, operands):
        name = "%%v%d" % self.n
        self.n += 1
        types = ", ".join(self.ty(o[1], o[3]) for o in operands)
        self.body.append("  %s = %s : (%s) -> %s"
                         % (name, text, types, self.ty(shape)))
        return (name, shape, ref, True)

    def conv(self, x, cout, k, stride=1, pad=0, bias=True, groups=1,
             dilation=1):
        cin = x[1][1]
        pad = pad if isinstance(pad, tuple) else (pad, pad)
        w = self.arg(rng.standard_normal((cout, cin // groups, k, k))
                     / np.sqrt(cin // groups * k * k))
        ops = [x, w]
        b = None
        if bias:
            b = self.arg(rng.standard_normal(cout) * 0.1)
            ops.append(b)
        ref = F.conv2d(x[2], w[2], b[2] if b else None, stride, pad, dilation,
                       groups)
        text = ("kt.conv2d %s {stride = [%d, %d], padding = [%d, %d], "
                "dilation = [%d, %d], groups = %d : i64}") % (
            ", ".join(o[0] for o in ops), stride, stride, pad[0], pad[1],
            dilation, dilation, groups)
        return self.op(text, tuple(ref.shape), ref, ops)

    def depthwise(self, x, k=3, stride=1, pad=1, bias=True, dilation=1):
        return self.conv(x, x[1][1], k, stride, pad, bias, x[1][1], dilation)

    def relu(self, x):
        return self.op("kt.relu %s" % x[0], x[1], torch.relu(x[2]), [x])

    def relu6(self, x):
        return self.op("kt.clamp %s {min = 0.0 : f64, max = 6.0 : f64}" % x[0],
                       x[1], torch.clamp(x[2], 0.0, 6.0), [x])

    def add(self, x, y):
        return self.op("kt.add %s, %s" % (x[0], y[0]), x[1], x[2] + y[2], [x, y])

    def batch_norm(self, x):
        c = x[1][1]
        m = self.arg(rng.standard_normal(c) * 0.1)
        v = self.arg(rng.uniform(0.5, 1.5, c))
        g = self.arg(rng.uniform(0.5, 1.5, c))
        b = self.arg(rng.standard_normal(c) * 0.1)
        ref = F.batch_norm(x[2], m[2], v[2], g[2], b[2], False, 0.0, 1e-3)
        return self.op("kt.batch_norm %s, %s, %s weight %s bias %s {eps = 1.0e-03 : f64}"
                       % (x[0], m[0], v[0], g[0], b[0]), x[1], ref, [x, m, v, g, b])

    def decomposed_bn(self, x):
        """(x - mean) * scale + shift with [C, 1, 1] statistics."""
        c = x[1][1]
        m = self.arg(rng.standard_normal((c, 1, 1)) * 0.1)
        s = self.arg(rng.uniform(0.5, 1.5, (c, 1, 1)))
        b = self.arg(rng.standard_normal((c, 1, 1)) * 0.1)
        y = self.op("kt.sub %s, %s" % (x[0], m[0]), x[1], x[2] - m[2], [x, m])
        y = self.op("kt.mul %s, %s" % (y[0], s[0]), x[1], y[2] * s[2], [y, s])
        return self.op("kt.add %s, %s" % (y[0], b[0]), x[1], y[2] + b[2], [y, b])

    def max_pool(self, x, k=(3, 3), stride=(2, 2), pad=(1, 1)):
        ref = F.max_pool2d(x[2], k, stride, pad)
        return self.op("kt.max_pool2d %s {kernel_size = [%d, %d], stride = [%d, %d], padding = [%d, %d]}"
                       % ((x[0],) + k + stride + pad), tuple(ref.shape), ref, [x])

    def mean_hw(self, x):
        """Global average pooling (keepdim), as adaptive_avg_pool2d becomes."""
        ref = x[2].mean(dim=(2, 3), keepdim=True)
        return self.op("kt.mean %s {dim = [2, 3], keepdim = true}" % x[0],
                       tuple(ref.shape), ref, [x])

    def ret(self, v):
        self.rets.append(v)

    def mlir(self):
        types = ", ".join(self.ty(r[1]) for r in self.rets)
        return "\n".join(
            ["func.func @main(%s) -> (%s) {" % (", ".join(self.args), types)]
            + self.body
            + ["  return %s : %s" % (", ".join(r[0] for r in self.rets), types),
               "}", ""])


def input_of(shape, special):
    x = rng.standard_normal(shape)
    if special:
        flat = x.reshape(-1)
        for k, v in zip(rng.choice(flat.size, 3, replace=False),
                        (np.nan, np.inf, -np.inf)):
            flat[k] = v
    return x


def basic(dyn=(), special=False):
    g = Graph(dyn)
    x = g.arg(input_of((2, 16, 12, 12), special), act=True)
    y = g.relu(g.conv(x, 32, 3, 2, 1))
    y = g.conv(y, 32, 3, 1, 1)
    r = g.relu(g.add(y, g.conv(x, 32, 1, 2, 0)))
    z = g.relu(g.add(g.conv(g.relu(g.conv(r, 32, 3, 1, 1)), 32, 3, 1, 1), r))
    g.ret(r)  # also read by the next block
    g.ret(z)
    g.ret(g.mean_hw(z))
    return g


def bottleneck(dyn=(), special=False):
    g = Graph(dyn)
    x = g.arg(input_of((2, 32, 8, 8), special), act=True)
    y = g.relu(g.batch_norm(g.conv(x, 16, 1, bias=False)))
    y = g.relu(g.decomposed_bn(g.conv(y, 16, 3, 1, 1, bias=False)))
    y = g.batch_norm(g.conv(y, 32, 1, bias=False))
    g.ret(g.relu(g.add(y, x)))
    return g


def stem(dyn=(), special=False):
    g = Graph(dyn)
    x = g.arg(input_of((2, 3, 20, 20), special), act=True)
    y = g.max_pool(g.relu(g.conv(x, 16, 7, 2, 3)))
    z = g.relu(g.add(g.conv(g.relu(g.conv(y, 16, 3, 1, 1)), 16, 3, 1, 1), y))
    g.ret(z)
    return g


def after_onednn(mlir):
    """The module after kiln-cpu-conv-to-onednn in kiln-cpu, or "error: ..."."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
    try:
        p = subprocess.run([KILN_OPT, f.name, "-kiln-cpu=conv=onednn threads=2",
                            "-mlir-print-ir-after=kiln-cpu-conv-to-onednn",
                            "-o", os.devnull], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return p.stderr if p.returncode == 0 else "error: " + p.stderr[:300]


def stem_uneven(dyn=(), special=False):
    """A 3x2 window, padding of H only, 13x10 input, 8 channels (pooled
    channels-last), then the same pool of a value also returned (read in
    NCHW as well: pooled NCHW)."""
    g = Graph(dyn)
    x = g.arg(input_of((3, 3, 13, 10), special), act=True)
    y = g.max_pool(g.relu(g.conv(x, 8, 3, 1, 1)), (3, 2), (2, 2), (1, 0))
    z = g.add(g.conv(y, 8, 3, 1, 1, bias=False), y)
    g.ret(z)
    g.ret(g.max_pool(z, (2, 3), (1, 2), (0, 1)))
    return g


def inverted_residual(dyn=(), special=False):
    """mobilenet_v2's block, channels-last throughout (the depthwise convs
    run in libkiln_onednn's channels-last loops): 1x1 expansion to 40
    channels (two vectors of 16 and a tail of 8), ReLU6, depthwise 3x3,
    ReLU6, 1x1 projection, the residual add; then a strided block on an odd
    image and a depthwise conv of 8 channels (the tail only) whose ReLU
    prologue and output are read by a 1x1 conv."""
    g = Graph(dyn)
    x = g.arg(input_of((2, 16, 13, 11), special) * 3, act=True)
    y = g.relu6(g.conv(x, 40, 1))
    y = g.relu6(g.depthwise(y))
    y = g.add(g.conv(y, 16, 1), x)
    g.ret(y)
    z = g.relu6(g.conv(y, 24, 1))
    z = g.relu6(g.depthwise(z, 3, 2, 1))
    z = g.conv(z, 8, 1)
    t = g.depthwise(g.relu(z), bias=False)
    g.ret(g.conv(t, 8, 1, bias=False))
    g.ret(g.mean_hw(g.relu(z)))
    return g


def depthwise_shapes(dyn=(), special=False):
    """Depthwise convs off the 3x3 fast path, between 1x1 convs: 5x5 with
    padding 2, dilation 2, padding of W only (3x3, [0, 1]), stride 2 of a
    5x5, a 1x1 depthwise conv (a per-channel scale), 17 channels."""
    g = Graph(dyn)
    x = g.arg(input_of((3, 17, 9, 12), special), act=True)
    y = g.relu6(g.conv(x, 17, 1))
    y = g.relu6(g.depthwise(y, 5, 1, 2))
    y = g.relu6(g.conv(y, 17, 1))
    y = g.relu6(g.depthwise(y, 3, 1, 2, dilation=2))
    y = g.relu6(g.conv(y, 17, 1))
    y = g.relu6(g.depthwise(y, 3, 1, (0, 1)))
    y = g.relu6(g.conv(y, 17, 1))
    y = g.relu6(g.depthwise(y, 5, 2, 2))
    y = g.relu6(g.conv(y, 17, 1))
    y = g.depthwise(y, 1, 1, 0)
    g.ret(g.conv(y, 16, 1))
    return g


def depthwise_wide(dyn=(), special=False):
    """Depthwise convs of 120 channels (seven vectors of 16 and a tail of 8:
    the loops take every vector per block of pixels), stride 1 and 2."""
    g = Graph(dyn)
    x = g.arg(input_of((2, 8, 11, 13), special), act=True)
    y = g.relu6(g.conv(x, 120, 1))
    y = g.relu6(g.depthwise(y))
    y = g.relu6(g.conv(y, 120, 1))
    y = g.relu6(g.depthwise(y, 3, 2, 1))
    g.ret(g.conv(y, 8, 1))
    return g


CASES = [("inverted residual", inverted_residual, (), False),
         ("depthwise wide", depthwise_wide, (), False),
         ("depthwise wide ? batch NaN/inf", depthwise_wide, (0,), True),
         ("inverted residual ? batch NaN/inf", inverted_residual, (0,), True),
         ("depthwise shapes", depthwise_shapes, (), False),
         ("depthwise shapes ? batch NaN/inf", depthwise_shapes, (0,), True),
         ("stem uneven ? batch", stem_uneven, (0,), False),
         ("stem uneven NaN/inf", stem_uneven, (), True),
         ("basic", basic, (), False), ("basic ? batch NaN/inf", basic, (0,), True),
         ("bottleneck", bottleneck, (), False), ("bottleneck ? batch", bottleneck, (0,), True),
         ("stem", stem, (), False), ("stem NaN/inf", stem, (), True)]

for label, build, dyn, special in CASES:
    g = build(dyn, special)
    mlir = g.mlir()
    refs = [r[2].numpy() for r in g.rets]
    low = after_onednn(mlir)
    tally.record("%s lowers" % label, not low.startswith("error: "), low[:300])
    # The twins are the calls' output strides: no transpose in a conv's kernel.
    kernels = low.split("func.func private @")
    conv_kernels = [k for k in kernels if "call @kiln_onednn_conv2d" in k]
    tally.record("%s conv kernels" % label, len(conv_kernels) > 0, low[:200])
    tally.record("%s no transpose next to a conv" % label,
                 not any("linalg.transpose" in k for k in conv_kernels),
                 "\n\n".join(k for k in conv_kernels if "linalg.transpose" in k)[:2000])
    for pipeline_env in [{}, {"KILN_ONEDNN_LAYOUT": "blocked"}, {"KILN_ONEDNN_LAYOUT": "plain"}]:
        got, log = run(mlir, g.inputs, pipeline_env, len(refs), "kiln-convlayout-")
        if got is None:
            tally.record("%s %s" % (label, pipeline_env), False, log[:400])
            continue
        for i, (gv, ref) in enumerate(zip(got, refs)):
            ok, msg = same(gv, ref.astype(np.float32), "f32", ref)
            tally.record("%s result %d %s" % (label, i, pipeline_env), ok, msg)
tally.finish()
