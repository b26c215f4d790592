# RUN: %python %s
# REQUIRES: numpy
# The session option constant_args (kiln-run --constant-args): what a graph
# computes from constant arguments alone runs once (kiln-hoist-constants,
# a kg.constant_graph whose results the runtime keeps) and again only when a
# constant argument's address changes; results equal NumPy's on every call,
# on the interpreter and the cpu backend; a returned kept value is the
# caller's own copy; bad option values are errors.

import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from kiln_testing import KILN_RUN, Suite
from runtime_helpers import stat

s = Suite(__file__)

# y = x * (w * rsqrt(v + 1e-5)) + b: the scale is constant when w and v are;
# b is not constant (argument 3 is left out of --constant-args).
PROGRAM = """
module {
  func.func private @p_g0(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %v: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) attributes {kg.graph_function} {
    %e = kt.full {dtype = f32, size = [], value = 1.000000e-05 : f64} : () -> tensor<f32>
    %0 = kt.add %v, %e : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = kt.rsqrt %0 : (tensor<8xf32>) -> tensor<8xf32>
    %2 = kt.mul %w, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %3 = kt.mul %x, %2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %4 = kt.add %3, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    return %4, %2 : tensor<4x8xf32>, tensor<8xf32>
  }
  kg.program @p(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %v: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
    %0:2 = kg.graph @p_g0(%x, %w, %v, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
    kg.return %0#0, %0#1 : tensor<4x8xf32>, tensor<8xf32>
  }
}
"""


def expected(x, w, v, b):
    scale = (w / np.sqrt(v.astype(np.float64) + 1e-5)).astype(np.float32)
    return x * scale + b, scale


def run(tmp, calls, *options):
    """kiln-run with one --call per entry of `calls` (lists of paths);
    returns (process, results per call)."""
    prog = os.path.join(tmp, "p.mlir")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    out = os.path.join(tmp, "out")
    args = [KILN_RUN, prog, "--output-dir=" + out, "--stats"]
    args += ["--call=" + ",".join(c) for c in calls]
    args += list(options)
    p = subprocess.run(args, capture_output=True, text=True)
    results = []
    for k in range(len(calls)):
        d = out if len(calls) == 1 else os.path.join(out, "call%d" % k)
        results.append([np.load(os.path.join(d, "result%d.npy" % i))
                        for i in range(2)
                        if os.path.exists(os.path.join(d, "result%d.npy" % i))])
    return p, results


def check_equal(label, got, want):
    s.record(label, got == want, "got %r, expected %r" % (got, want))


def constant_line(p):
    for line in p.stdout.splitlines():
        if line.strip().startswith("constant graphs:"):
            return line.strip()
    return None


with tempfile.TemporaryDirectory() as tmp:
    def save(name, a):
        path = os.path.join(tmp, name + ".npy")
        np.save(path, a)
        return path

    xs = [s.randn(4, 8) for _ in range(3)]
    w, v, b = s.randn(8), s.uniform(0.5, 2.0, 8), s.randn(8)
    w2 = s.randn(8)
    px = [save("x%d" % i, x) for i, x in enumerate(xs)]
    pw, pv, pb, pw2 = save("w", w), save("v", v), save("b", b), save("w2", w2)

    for backend in ("interpreter", "cpu"):
        opts = ["--backend=" + backend, "--cache-dir=off"]
        # Three calls with the same constant files: one run, two reuses.
        p, res = run(tmp, [[x, pw, pv, pb] for x in px],
                     "--constant-args=1,2", *opts)
        s.record("%s: three calls run" % backend, p.returncode == 0,
                     p.stderr[-2000:])
        check_equal("%s: kept once, reused twice" % backend,
                      constant_line(p), "constant graphs: 1 runs, 2 reused")
        for k, x in enumerate(xs):
            y, scale = expected(x, w, v, b)
            ok = len(res[k]) == 2 and np.allclose(res[k][0], y, rtol=1e-5,
                                                  atol=1e-6) and \
                np.allclose(res[k][1], scale, rtol=1e-5, atol=1e-6)
            s.record("%s: call %d equals NumPy" % (backend, k), ok,
                         str(res[k]))
        # Another weight file in the middle: another address, computed again
        # (and the call after it, back on the first file, again).
        p, res = run(tmp, [[px[0], pw, pv, pb], [px[1], pw2, pv, pb],
                           [px[2], pw, pv, pb]],
                     "--constant-args=1,2", *opts)
        check_equal("%s: a new address runs the constant graph again"
                      % backend, constant_line(p),
                      "constant graphs: 3 runs, 0 reused")
        for k, (x, ww) in enumerate(zip(xs, (w, w2, w))):
            y, scale = expected(x, ww, v, b)
            s.record("%s: call %d after a weight change" % (backend, k),
                         len(res[k]) == 2 and np.allclose(res[k][0], y,
                                                          rtol=1e-5, atol=1e-6),
                         str(res[k]))
        # A non-constant argument (b) changing between calls is read as it
        # is on every call; without the option nothing is kept.
        pb2 = save("b2", s.randn(8))
        p, res = run(tmp, [[px[0], pw, pv, pb], [px[0], pw, pv, pb2]],
                     "--constant-args=1,2", *opts)
        y, _ = expected(xs[0], w, v, np.load(pb2))
        s.record("%s: a changed plain argument is read again" % backend,
                     p.returncode == 0 and np.allclose(res[1][0], y, rtol=1e-5,
                                                       atol=1e-6),
                     p.stderr[-2000:])
        p, res = run(tmp, [[px[0], pw, pv, pb]] * 2, *opts)
        check_equal("%s: no constant graph without the option" % backend,
                      constant_line(p), None)

    # Bad values: a clear error, non-zero exit.
    for bad in ("1,x", "-1", "1;2"):
        p, _ = run(tmp, [[px[0], pw, pv, pb]], "--constant-args=" + bad)
        s.record("--constant-args=%s is an error" % bad,
                     p.returncode != 0 and
                     "constant_args must be a comma-separated list of "
                     "argument indices" in p.stderr, p.stderr[-2000:])
    # An index past the arguments names nothing: the program runs as without.
    p, res = run(tmp, [[px[0], pw, pv, pb]], "--constant-args=7")
    s.record("an index past the arguments is ignored",
                 p.returncode == 0 and constant_line(p) is None,
                 p.stderr[-2000:])

s.finish()
