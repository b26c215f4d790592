# RUN: %python %s
# REQUIRES: numpy, torch, onednn
# kt.conv2d on the CPU backend through oneDNN (kiln-run --conv=onednn:
# kiln-cpu-conv-im2col marks f32 convs "onednn", kiln-cpu-conv-to-onednn
# turns them into kiln_onednn_conv2d_f32 calls) against
# torch.nn.functional.conv2d, with PyTorch's same() rule (f64 torch result as
# the reference): stride, padding, dilation (asymmetric), groups, depthwise,
# 1x1, non-square kernels and inputs, batch 1 and 3, unbatched, bias / no
# bias, `?` dims (batch, channels, height, width), f64 (not oneDNN: it keeps
# auto's path) and a conv inside a fused kernel (stays direct). Each case
# also checks kiln-opt's choice, and that the compiled code calls oneDNN
# (kiln-run --print-ir... is not needed: the LLVM module names the callee).
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_sweep import same
from kiln_testing import KILN_OPT, KilnRunError, run, ttype

rng = np.random.default_rng(13)
passed = failed = 0
NP = {"f32": np.float32, "f64": np.float64}


def record(label, ok, msg=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: %s" % (label, msg))
        sys.stdout.flush()


def pair(v, default):
    if v is None:
        return default
    return tuple(v) * 2 if len(v) == 1 else tuple(v)


def opt(mlir, args):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
        path = f.name
    try:
        return subprocess.run([KILN_OPT, path] + args, capture_output=True, text=True)
    finally:
        os.unlink(path)


def calls_onednn(mlir):
    """Whether the fully lowered module calls kiln_onednn_conv2d_f32 (or
    kiln_onednn_conv2d_pad_f32: in-kernel padding, conv_onednn_pad.py;
    kiln_onednn_conv2d_bias_f32: a bias, conv_onednn_bias.py)."""
    p = opt(mlir, ["-kiln-cpu=conv=onednn threads=2"])
    if p.returncode != 0:
        return "error: " + p.stderr.strip()[:300]
    return ("llvm.call @kiln_onednn_conv2d_f32" in p.stdout or
            "llvm.call @kiln_onednn_conv2d_pad_f32" in p.stdout or
            "llvm.call @kiln_onednn_conv2d_bias_f32" in p.stdout)


# (x shape, w shape, bias, stride, padding, dilation, groups, elems, dyn)
CASES = [
    ((1, 3, 8, 8), (6, 3, 3, 3), True, None, None, None, 1, ["f32"], ()),
    ((3, 16, 13, 11), (32, 16, 3, 3), True, [2], [1], [2], 1, ["f32", "f64"], ()),
    ((2, 8, 15, 12), (24, 8, 3, 5), False, [2, 1], [1, 2], [1, 2], 1, ["f32"], ()),
    ((3, 8, 10, 9), (48, 4, 3, 3), False, None, [1], None, 2, ["f32"], ()),
    ((1, 8, 13, 17), (12, 2, 5, 3), True, [2, 3], [2, 1], [1, 2], 4, ["f32"], ()),
    # depthwise, and depthwise with a channel multiplier
    ((2, 6, 7, 7), (6, 1, 3, 3), True, [1], [1], None, 6, ["f32", "f64"], ()),
    ((1, 32, 14, 14), (32, 1, 3, 3), False, [2], [1], None, 32, ["f32"], ()),
    ((2, 4, 9, 8), (12, 1, 3, 3), True, None, [1], None, 4, ["f32"], ()),
    # depthwise rows wider than the direct loops' 16-output register block
    # (blocks and a tail): stride 1, stride 2, dilation 2 along the width,
    # stride (1, 2) with dilation (2, 1) and a multiplier
    ((2, 8, 9, 37), (8, 1, 3, 3), True, [1], [1], None, 8, ["f32"], ()),
    ((1, 6, 11, 70), (6, 1, 3, 3), False, [2], [1], None, 6, ["f32"], ()),
    ((1, 4, 12, 50), (4, 1, 3, 3), True, [1], [1], [1, 2], 4, ["f32"], ()),
    ((1, 4, 12, 50), (8, 1, 5, 3), True, [1, 2], [2, 1], [2, 1], 4, ["f32"],
     ()),
    # 1x1 stride 1, 1x1 stride 2 with padding
    ((3, 32, 7, 9), (24, 32, 1, 1), True, None, None, None, 1, ["f32"], ()),
    ((2, 5, 9, 9), (4, 5, 1, 1), False, [2], [1], None, 1, ["f32"], ()),
    # 7x7 stride 2 (a resnet stem), kernel as large as the input
    ((1, 3, 32, 30), (16, 3, 7, 7), False, [2], [3], None, 1, ["f32"], ()),
    ((1, 2, 4, 6), (3, 2, 4, 6), True, None, None, None, 1, ["f32"], ()),
    # unbatched, stride 3, padding 2, dilation 2
    ((4, 9, 9), (8, 4, 3, 3), True, [3], [2], [2], 1, ["f32"], ()),
    # `?` batch; `?` batch, channels, height, width with groups
    ((3, 24, 9, 9), (32, 24, 3, 3), True, [1], [1], None, 1, ["f32"], {(0, 0)}),
    ((1, 12, 11, 10), (30, 6, 3, 3), True, [2], [1], None, 2, ["f32"],
     {(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (2, 0)}),
]

for xs, ws, bias, st, pd, dl, g, elems, dyn in CASES:
    for elem in elems:
        dt = NP[elem]
        x = rng.standard_normal(xs).astype(dt)
        w = (rng.standard_normal(ws) * 0.5).astype(dt)
        b = rng.standard_normal((ws[0],)).astype(dt) if bias else None
        kw = dict(stride=pair(st, (1, 1)), padding=pair(pd, (0, 0)),
                  dilation=pair(dl, (1, 1)), groups=g)
        t = lambda a: None if a is None else torch.from_numpy(a)
        want = F.conv2d(t(x), t(w), t(b), **kw).numpy()
        ref = F.conv2d(*(None if a is None else t(a.astype(np.float64)) for a in (x, w, b)),
                       **kw).numpy()
        parts = []
        for k, v in [("stride", st), ("padding", pd), ("dilation", dl)]:
            if v is not None:
                parts.append("%s = %s" % (k, list(v)))
        if g != 1:
            parts.append("groups = %d" % g)
        attr = ", ".join(parts)
        ins = [x, w] + ([b] if b is not None else [])
        types = [ttype([(-1 if (i, d) in dyn else n) for d, n in enumerate(a.shape)], elem)
                 for i, a in enumerate(ins)]
        off = len(xs) - 3
        from_dyn = [(1, 0), (0, off + 1), (0, off + 2)]
        if off:
            from_dyn = [(0, 0)] + from_dyn
        rt = ttype([-1 if src in dyn else n for src, n in zip(from_dyn, want.shape)], elem)
        operands = ", ".join("%%a%d" % i for i in range(len(ins)))
        args = ", ".join("%%a%d: %s" % (i, ty) for i, ty in enumerate(types))
        mlir = ("func.func @main(%s) -> %s {\n  %%r = kt.conv2d %s {%s} : (%s) -> %s\n"
                "  return %%r : %s\n}\n") % (args, rt, operands, attr, ", ".join(types), rt, rt)
        label = "conv2d %s x%s w%s %s dyn=%s" % (elem, xs, ws, attr, sorted(dyn))
        # The choice: f32 -> onednn, f64 -> not.
        p = opt(mlir, ["-kiln-lower-to-linalg", "-canonicalize",
                       "-kiln-cpu-conv-im2col=impl=onednn threads=2"])
        marked = 'kiln.conv_impl = "onednn"' in p.stdout
        record("%s marked onednn" % label, p.returncode == 0 and marked == (elem == "f32"),
               p.stderr[:200] or "marked=%s" % marked)
        c = calls_onednn(mlir)
        record("%s calls oneDNN" % label, c == (elem == "f32"), str(c))
        for threads in ["2", "1"]:
            try:
                got = run(mlir, ins, extra_args=["--backend=cpu", "--conv=onednn",
                                                 "--cpu-threads=" + threads])[0]
            except KilnRunError as e:
                record("%s --conv=onednn" % label, False, str(e)[:300])
                continue
            ok, msg = same(got, want, elem, ref)
            record("%s --conv=onednn threads=%s" % (label, threads), ok, msg)

# conv + bias + relu + residual add, the ResNet pattern, and two convs of one
# shape (one cached primitive, two call sites), repeated (warm calls).
x = rng.standard_normal((2, 8, 12, 12)).astype(np.float32)
w1 = (rng.standard_normal((8, 8, 3, 3)) * 0.3).astype(np.float32)
w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.3).astype(np.float32)
b1 = rng.standard_normal(8).astype(np.float32)
T = "tensor<2x8x12x12xf32>"
WT = "tensor<8x8x3x3xf32>"
mlir = """func.func @main(%x: {T}, %w1: {WT}, %b1: tensor<8xf32>, %w2: {WT}) -> {T} {{
  %c = kt.conv2d %x, %w1, %b1 {{padding = [1, 1]}} : ({T}, {WT}, tensor<8xf32>) -> {T}
  %r = kt.relu %c : ({T}) -> {T}
  %d = kt.conv2d %r, %w2 {{padding = [1, 1]}} : ({T}, {WT}) -> {T}
  %s = kt.add %d, %x : ({T}, {T}) -> {T}
  return %s : {T}
}}
""".format(T=T, WT=WT)
tx = lambda a: torch.from_numpy(a.astype(np.float64))
want = (F.conv2d(F.relu(F.conv2d(tx(x), tx(w1), tx(b1), padding=1)), tx(w2), padding=1)
        + tx(x)).numpy()
try:
    got = run(mlir, [x, w1, b1, w2], extra_args=["--backend=cpu", "--conv=onednn",
                                                 "--cpu-threads=2", "--repeat=3"])[0]
    ok, msg = same(got, want.astype(np.float32), "f32", want)
    record("basic block --conv=onednn", ok, msg)
except KilnRunError as e:
    record("basic block --conv=onednn", False, str(e)[:300])

# A bad --conv value names the new choice.
try:
    run("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n",
        [np.zeros(2, np.float32)], extra_args=["--backend=cpu", "--conv=dnnl"])
    record("--conv=dnnl rejected", False, "kiln-run accepted it")
except KilnRunError as e:
    record("--conv=dnnl rejected",
           "--conv must be auto, im2col, direct or onednn" in e.stderr, e.stderr[:200])

print("conv_onednn.py: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or not passed else 0)
