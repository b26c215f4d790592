# RUN: %python %s
# REQUIRES: sanitize-thread, onednn, numpy, torch
# The join of an OpenMP parallel region under ThreadSanitizer: what a
# libomp worker wrote during a region happens before what the calling
# thread does after it. libomp is not instrumented, so Kiln's OMPT tool
# adds that edge in TSan builds (runtime/lib/CallContext.cpp; it added only
# the fork's before). Without it, a oneDNN worker's memset into a conv's
# result (oneDNN's parallel regions run on libomp in Kiln's processes) read
# as a race with kiln-run freeing that result after the call
# (Execution/CPU/conv_onednn_{grad,layout,pad}.py under the TSan build,
# ~1 run in 4 of this program). Runs a mobilenet_v2 inverted residual (1x1
# conv, ReLU6, depthwise, 1x1, add, stride-2 depthwise) on the CPU backend
# with oneDNN's gemm convolutions on 2 threads, RUNS times; each run must
# end with no report and the result PyTorch gives.
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

RUNS = 12
KILN_RUN = os.path.join(os.environ["KILN_TOOLS_DIR"], "kiln-run")
rng = np.random.default_rng(29)
C, E, H, W = 5, 30, 11, 9
x = rng.standard_normal((2, C, H, W)).astype(np.float32)
w1 = (rng.standard_normal((E, C, 1, 1)) * 0.4).astype(np.float32)
wd = (rng.standard_normal((E, 1, 3, 3)) * 0.4).astype(np.float32)
w2 = (rng.standard_normal((C, E, 1, 1)) * 0.3).astype(np.float32)
wd2 = (rng.standard_normal((C, 1, 3, 3)) * 0.4).astype(np.float32)
T, TE = "tensor<2x%dx%dx%dxf32>" % (C, H, W), "tensor<2x%dx%dx%dxf32>" % (E, H, W)
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
ref = F.conv2d(t(x), t(w1)).clamp(0, 6)
ref = F.conv2d(ref, t(wd), padding=1, groups=E).clamp(0, 6)
ref = F.conv2d(ref, t(w2)) + t(x)
ref = F.conv2d(ref, t(wd2), padding=1, stride=2, groups=C).numpy()

failures = 0
with tempfile.TemporaryDirectory(prefix="kiln-omp-join-") as tmp:
    path = os.path.join(tmp, "m.mlir")
    with open(path, "w") as f:
        f.write(mlir)
    args = [KILN_RUN, path, "--backend=cpu", "--conv=onednn",
            "--cpu-threads=2", "--output-dir=" + os.path.join(tmp, "out")]
    for i, a in enumerate([x, w1, wd, w2, wd2]):
        p = os.path.join(tmp, "in%d.npy" % i)
        np.save(p, a)
        args.append("--input=" + p)
    # The gemm convolutions (x64:gemm:jit), whose workers memset.
    env = dict(os.environ, KILN_ONEDNN_DIRECT="0")
    for run in range(RUNS):
        proc = subprocess.run(args, capture_output=True, text=True, env=env,
                              timeout=600)
        if proc.returncode != 0 or "ThreadSanitizer" in proc.stderr:
            print("FAIL run %d: exit %d\n%s" % (run, proc.returncode,
                                                proc.stderr[-6000:]))
            failures += 1
            break
        got = np.load(os.path.join(tmp, "out", "result0.npy"))
        if not np.allclose(got, ref, rtol=1e-4, atol=1e-4):
            print("FAIL run %d: result differs from PyTorch (max abs %g)" %
                  (run, np.abs(got - ref).max()))
            failures += 1
            break
print("omp-join.py: %d runs, %d failed" % (RUNS, failures))
sys.exit(1 if failures else 0)
