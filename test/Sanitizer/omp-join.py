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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "Execution", "CPU", "lib"))
from onednn_conv_test import inverted_residual

RUNS = 12
KILN_RUN = os.path.join(os.environ["KILN_TOOLS_DIR"], "kiln-run")
mlir, inputs, ref = inverted_residual(np.random.default_rng(29))

failures = 0
with tempfile.TemporaryDirectory(prefix="kiln-omp-join-") as tmp:
    path = os.path.join(tmp, "m.mlir")
    with open(path, "w") as f:
        f.write(mlir)
    args = [KILN_RUN, path, "--backend=cpu", "--conv=onednn",
            "--cpu-threads=2", "--output-dir=" + os.path.join(tmp, "out")]
    for i, a in enumerate(inputs):
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
