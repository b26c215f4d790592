"""Shared pieces of the oneDNN conv execution tests (conv_onednn_*.py):
a pass/fail tally, the fully lowered module of a function, and one
kiln-run --backend=cpu --conv=onednn run on .npy inputs."""

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
