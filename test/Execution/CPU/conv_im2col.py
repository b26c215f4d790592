# RUN: %python %s
# REQUIRES: numpy, torch
# kt.conv2d on the CPU backend with each convolution implementation
# (kiln-run --conv=im2col / direct / auto) against torch.nn.functional.conv2d:
# PyTorch's same() rule against the f32 (or f64) torch result with the f64
# torch result as the reference (cpu_sweep.same). Padding, stride, dilation
# (asymmetric, so a swapped or mis-strided im2col index gives wrong numbers),
# groups (incl. depthwise), bias / no bias, f32 and f64, odd sizes, batch 1
# and 3, unbatched input, 1x1 kernels (the copy-free im2col form) and `?`
# dims (a `?` width stays direct in every mode). For every case and mode, kiln-opt's kiln-cpu-conv-im2col must make
# the expected choice (auto: the measured table of chooseConvImpl).
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
from tool_server import tool_run  # noqa: E402

rng = np.random.default_rng(11)
# Where this build has libkiln_onednn, auto gives f32 convs with more than
# one input channel per group, and depthwise ones (libkiln_onednn's direct
# depthwise loops), to it (test/Execution/CPU/conv_onednn.py); the table
# below is auto's choice without it.
HAVE_ONEDNN = os.path.exists(os.path.join(os.path.dirname(
    os.environ.get("KILN_TOOLS_DIR", ".")), "lib", "libkiln_onednn.so.0"))
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


def conv_module(x, w, b, elem, attr, dyn):
    ins = [x, w] + ([b] if b is not None else [])
    types = [ttype([(-1 if (i, d) in dyn else n) for d, n in enumerate(a.shape)], elem)
             for i, a in enumerate(ins)]
    return ins, types


def chosen(mlir, impl):
    """Which implementations kiln-cpu-conv-im2col{impl} picks: the set of
    kiln.conv_impl values on loops / linalg convs after it."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
        path = f.name
    try:
        p = tool_run([KILN_OPT, path, "-kiln-lower-to-linalg", "-canonicalize",
                            "-kiln-cpu-conv-im2col=impl=%s threads=2" % impl],
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        return {"error: " + p.stderr.strip()[:200]}
    got = set()
    for line in p.stdout.splitlines():
        if "linalg.conv_2d" in line:
            got.add("direct" if 'kiln.conv_impl = "direct"' in line else
                    "onednn" if 'kiln.conv_impl = "onednn"' in line else "unmarked conv")
        if line.lstrip().startswith("}") and 'kiln.conv_impl = "im2col"' in line:
            got.add("im2col")
    return got


# (x shape, w shape, bias, stride, padding, dilation, groups, elems, dyn, auto)
# dyn: {(operand, dim)} made `?`; auto: what impl=auto must pick.
CASES = [
    # few output channels: direct under auto
    ((1, 3, 8, 8), (6, 3, 3, 3), True, None, None, None, 1, ["f32"], (), "direct"),
    # stride 2, padding 1, dilation 2, batch 3
    ((3, 16, 13, 11), (32, 16, 3, 3), True, [2], [1], [2], 1, ["f32", "f64"], (), "im2col"),
    # asymmetric stride / padding / dilation and a non-square kernel
    ((2, 8, 15, 12), (24, 8, 3, 5), False, [2, 1], [1, 2], [1, 2], 1, ["f32", "f64"], (),
     "im2col"),
    # groups = 2, per-group GEMM 24 x 36 x 90
    ((3, 8, 10, 9), (48, 4, 3, 3), False, None, [1], None, 2, ["f32", "f64"], (), "im2col"),
    # groups = 4, stride / dilation / padding per dim, bias
    ((1, 8, 13, 17), (12, 2, 5, 3), True, [2, 3], [2, 1], [1, 2], 4, ["f32"], (), "direct"),
    # depthwise (groups == C)
    ((2, 6, 7, 7), (6, 1, 3, 3), True, [1], [1], None, 6, ["f32", "f64"], (), "direct"),
    # 1x1 stride 1: cols is the sample itself
    ((3, 32, 7, 9), (24, 32, 1, 1), True, None, None, None, 1, ["f32", "f64"], (), "im2col"),
    # 1x1 stride 1, few channels: a plain (generated) matmul under auto from C = 8
    ((2, 8, 5, 7), (4, 8, 1, 1), True, None, None, None, 1, ["f32"], (), "im2col"),
    ((2, 3, 5, 7), (4, 3, 1, 1), False, None, None, None, 1, ["f32"], (), "direct"),
    # 1x1 stride 1 with padding: the padded sample is the right-hand side
    ((1, 8, 5, 6), (8, 8, 1, 1), True, None, [1], None, 1, ["f32"], (), "im2col"),
    # 1x1 stride 2 with padding (a copy)
    ((2, 5, 9, 9), (4, 5, 1, 1), False, [2], [1], None, 1, ["f32"], (), "direct"),
    # kernel as large as the input: a 1x1 output
    ((1, 2, 4, 6), (3, 2, 4, 6), True, None, None, None, 1, ["f32"], (), "direct"),
    # unbatched, stride 3, padding 2, dilation 2
    ((4, 9, 9), (8, 4, 3, 3), True, [3], [2], [2], 1, ["f32"], (), "direct"),
    # `?` batch (run with batch 3)
    ((3, 24, 9, 9), (32, 24, 3, 3), True, [1], [1], None, 1, ["f32"], {(0, 0)}, "im2col"),
    # `?` batch, channels and height (batch 1), groups 2, stride 2
    ((1, 12, 11, 10), (30, 6, 3, 3), True, [2], [1], None, 2, ["f32"],
     {(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)}, "im2col"),
    # `?` height, 1x1 stride 1 (copy-free form with a `?` size)
    ((2, 24, 7, 8), (32, 24, 1, 1), False, None, None, None, 1, ["f64"], {(0, 2)}, "im2col"),
    # `?` everywhere: a `?` width always stays direct (Im2col.cpp says why)
    ((1, 12, 11, 10), (30, 6, 3, 3), True, [2], [1], None, 2, ["f32"],
     {(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (2, 0)}, "direct!"),
    ((2, 24, 7, 8), (32, 24, 1, 1), False, None, None, None, 1, ["f64"],
     {(0, 2), (0, 3)}, "direct!"),
]

for xs, ws, bias, st, pd, dl, g, elems, dyn, auto in CASES:
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
        ins, types = conv_module(x, w, b, elem, attr, dyn)
        # Result dims are `?` where the dims they come from are.
        off = len(xs) - 3  # 1 when batched
        from_dyn = [(1, 0), (0, off + 1), (0, off + 2)]
        if off:
            from_dyn = [(0, 0)] + from_dyn
        rt = ttype([-1 if src in dyn else n for src, n in zip(from_dyn, want.shape)], elem)
        operands = ", ".join("%%a%d" % i for i in range(len(ins)))
        args = ", ".join("%%a%d: %s" % (i, ty) for i, ty in enumerate(types))
        mlir = ("func.func @main(%s) -> %s {\n  %%r = kt.conv2d %s {%s} : (%s) -> %s\n"
                "  return %%r : %s\n}\n") % (args, rt, operands, attr, ", ".join(types), rt, rt)
        label = "conv2d %s x%s w%s %s dyn=%s" % (elem, xs, ws, attr, sorted(dyn))
        for mode in ["im2col", "direct", "auto"]:
            # "direct!": every mode keeps the conv direct
            expect = ("direct" if auto == "direct!" else
                      auto if mode == "auto" else mode)
            if (mode == "auto" and HAVE_ONEDNN and elem == "f32" and
                    (ws[1] != 1 or g > 1)):
                expect = "onednn"
            picked = chosen(mlir, mode)
            record("%s --conv=%s picks %s" % (label, mode, expect), picked == {expect},
                   "kiln-cpu-conv-im2col gave %s" % sorted(picked))
            try:
                got = run(mlir, ins, extra_args=["--backend=cpu", "--conv=" + mode,
                                                 "--cpu-threads=2"])[0]
            except KilnRunError as e:
                record("%s --conv=%s" % (label, mode), False, str(e)[:300])
                continue
            ok, msg = same(got, want, elem, ref)
            record("%s --conv=%s" % (label, mode), ok, msg)

# A bad --conv value is an error, not a silent default.
try:
    run("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n",
        [np.zeros(2, np.float32)], extra_args=["--backend=cpu", "--conv=gemm"])
    record("--conv=gemm rejected", False, "kiln-run accepted it")
except KilnRunError as e:
    record("--conv=gemm rejected", "--conv must be auto, im2col, direct or onednn" in e.stderr,
           e.stderr[:200])

print("conv_im2col.py: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or not passed else 0)
