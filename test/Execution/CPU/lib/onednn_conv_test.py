"""Shared pieces of the oneDNN conv execution tests (conv_onednn_*.py,
Sanitizer/omp-join.py): a pass/fail tally, the fully lowered module of a
function, one kiln-run --backend=cpu --conv=onednn run on .npy inputs, and
a mobilenet_v2 inverted residual program with its reference."""

import os
import subprocess
import sys
import tempfile

import numpy as np
from kiln_testing import KILN_OPT, KILN_RUN


class Tally:
    """Counts checks; prints each failure as it happens."""

    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def record(self, label, ok, msg=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s" % (label, msg))
            sys.stdout.flush()

    def finish(self):
        """Prints the summary and exits 1 on any failure (or no check)."""
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed or not self.passed else 0)


def lowered(mlir, pipeline="-kiln-cpu=conv=onednn threads=2"):
    """kiln-opt's output for `mlir` through `pipeline`, or "error: ..."."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
    try:
        p = subprocess.run([KILN_OPT, f.name, pipeline], capture_output=True,
                           text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        return "error: " + p.stderr[:300]
    return p.stdout


def run(mlir, inputs, env, n, prefix="kiln-conv-"):
    """Runs `mlir`'s function on `inputs` (numpy arrays) with
    KILN_ONEDNN_VERBOSE=1 and `env`: ([n results], stderr), or (None,
    stderr) when kiln-run fails."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    path = os.path.join(tmp, "m.mlir")
    with open(path, "w") as f:
        f.write(mlir)
    args = [KILN_RUN, path, "--backend=cpu", "--conv=onednn", "--cpu-threads=2",
            "--repeat=2", "--output-dir=" + os.path.join(tmp, "out")]
    for i, a in enumerate(inputs):
        p = os.path.join(tmp, "in%d.npy" % i)
        np.save(p, a)
        args.append("--input=" + p)
    proc = subprocess.run(args, capture_output=True, text=True,
                          env=dict(os.environ, KILN_ONEDNN_VERBOSE="1", **env))
    if proc.returncode != 0:
        return None, proc.stderr
    return [np.load(os.path.join(tmp, "out", "result%d.npy" % i))
            for i in range(n)], proc.stderr


def inverted_residual(rng):
    """A mobilenet_v2 inverted residual (expansion 6, 5 -> 30 -> 5 channels,
    odd image): 1x1 conv + ReLU6, depthwise 3x3 (stride 1, padding 1) +
    ReLU6, 1x1 conv, residual add; then a stride-2 depthwise on the result.
    Returns (mlir, inputs drawn from `rng`, the float64 torch reference)."""
    import torch
    import torch.nn.functional as F
    C, E, H, W = 5, 30, 11, 9
    x = rng.standard_normal((2, C, H, W)).astype(np.float32)
    w1 = (rng.standard_normal((E, C, 1, 1)) * 0.4).astype(np.float32)
    wd = (rng.standard_normal((E, 1, 3, 3)) * 0.4).astype(np.float32)
    w2 = (rng.standard_normal((C, E, 1, 1)) * 0.3).astype(np.float32)
    wd2 = (rng.standard_normal((C, 1, 3, 3)) * 0.4).astype(np.float32)
    T = "tensor<2x%dx%dx%dxf32>" % (C, H, W)
    TE = "tensor<2x%dx%dx%dxf32>" % (E, H, W)
    T2 = "tensor<2x%dx6x5xf32>" % C
    mlir = """func.func @main(%x: {T}, %w1: tensor<{E}x{C}x1x1xf32>, %wd: tensor<{E}x1x3x3xf32>, %w2: tensor<{C}x{E}x1x1xf32>, %wd2: tensor<{C}x1x3x3xf32>) -> {T2} {{
  %a = kt.conv2d %x, %w1 : ({T}, tensor<{E}x{C}x1x1xf32>) -> {TE}
  %b = kt.clamp %a {{min = 0.0 : f64, max = 6.0 : f64}} : ({TE}) -> {TE}
  %c = kt.conv2d %b, %wd {{groups = {E} : i64, padding = [1, 1]}} : ({TE}, tensor<{E}x1x3x3xf32>) -> {TE}
  %d = kt.clamp %c {{min = 0.0 : f64, max = 6.0 : f64}} : ({TE}) -> {TE}
  %e = kt.conv2d %d, %w2 : ({TE}, tensor<{C}x{E}x1x1xf32>) -> {T}
  %f = kt.add %e, %x : ({T}, {T}) -> {T}
  %g = kt.conv2d %f, %wd2 {{groups = {C} : i64, padding = [1, 1], stride = [2, 2]}} : ({T}, tensor<{C}x1x3x3xf32>) -> {T2}
  return %g : {T2}
}}
""".format(T=T, TE=TE, T2=T2, C=C, E=E)
    t = lambda a: torch.from_numpy(a.astype(np.float64))
    r = F.conv2d(t(x), t(w1)).clamp(0, 6)
    r = F.conv2d(r, t(wd), padding=1, groups=E).clamp(0, 6)
    r = F.conv2d(r, t(w2)) + t(x)
    ref = F.conv2d(r, t(wd2), padding=1, stride=2, groups=C).numpy()
    return mlir, [x, w1, wd, w2, wd2], ref
