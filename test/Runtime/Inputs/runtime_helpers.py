"""Helpers of the runtime tests: run kg.programs through kiln-run sessions.

    r = run_calls(mlir_text_or_path, [[a, b], [a2, b2]], "--stats")
    r.rc, r.stdout, r.stderr, r.results[k][i]   # result i of call k
"""

import os
import shutil
import subprocess
import tempfile

import numpy as np
from kiln_testing import KILN_RUN

KILN_OPT = os.path.join(os.path.dirname(KILN_RUN), "kiln-opt")


class Run:
    def __init__(self, proc, results):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.results = results

    def __repr__(self):
        return "rc=%d\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.stdout,
                                                   self.stderr)


def run_calls(mlir, calls, *options):
    """One kiln-run session making `calls` (lists of NumPy inputs; rank-0
    arrays give scalar arguments) of the kg.program in `mlir` (module text or
    a path). Returns a Run with each call's results."""
    tmp = tempfile.mkdtemp(prefix="kiln-rt-")
    try:
        path = mlir
        if not os.path.exists(mlir):
            path = os.path.join(tmp, "prog.mlir")
            with open(path, "w") as f:
                f.write(mlir)
        out = os.path.join(tmp, "out")
        args = [KILN_RUN, path, "--output-dir=" + out]
        for k, inputs in enumerate(calls):
            names = []
            for i, x in enumerate(inputs):
                p = os.path.join(tmp, "c%d_in%d.npy" % (k, i))
                np.save(p, np.array(x, order="C"))
                names.append(p)
            args.append("--call=" + ",".join(names))
        args.extend(options)
        proc = subprocess.run(args, capture_output=True, text=True)
        results = []
        for k in range(len(calls)):
            d = out if len(calls) == 1 else os.path.join(out, "call%d" % k)
            rs = []
            i = 0
            while os.path.exists(os.path.join(d, "result%d.npy" % i)):
                rs.append(np.load(os.path.join(d, "result%d.npy" % i)))
                i += 1
            results.append(rs)
        return Run(proc, results)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stat(run, key):
    """The integer of a "  key: N" line of --stats output (or None)."""
    for line in run.stdout.splitlines():
        line = line.strip()
        if line.startswith(key + ":"):
            return int(line.split(":", 1)[1].split()[0])
    return None


def reasons(run):
    """The numbered recompile reasons of --stats output."""
    out = []
    lines = run.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("recompile reasons:"):
            for l in lines[i + 1:]:
                l = l.strip()
                head = l.split(". ", 1)
                if len(head) == 2 and head[0].isdigit():
                    out.append(head[1])
                else:
                    break
    return out


def entries(run):
    """The program text of each entry printed by --print-entries."""
    out = []
    cur = None
    for line in run.stdout.splitlines():
        if line.startswith("entry ") and line.endswith(":"):
            cur = []
            out.append(cur)
        elif line.startswith("stats @"):
            cur = None
        elif cur is not None:
            cur.append(line)
    return ["\n".join(e) for e in out]
