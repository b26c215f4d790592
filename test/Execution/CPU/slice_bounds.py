# RUN: %python %s
# REQUIRES: numpy
# Tests kt.slice with dynamic bounds (`index` operands for dynamic_start /
# dynamic_end: x[:, :T], x[..., :T - 1], x[:, T // 2:T:2], x[:, T:] with T
# the size of another input's dim) on both backends, several sizes through
# ONE compile (kiln-run --batch), including T = 0 (T - 1 = -1 counts from
# the end), T past the end (clamps) and an empty x; kt.slice_scatter with a
# dynamic start (x[:, T::2] = v, x[:, -T:] = w: the gradient of such a
# slice). Against NumPy's slicing (Python's rules).
import os
import shutil
import subprocess
import tempfile

import numpy as np
from kiln_testing import KILN_RUN, Suite

s = Suite(__file__)
TYPES = ("tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, "
         "tensor<?x?xf32>, tensor<?x?xf32>")
MODULE = """
func.func @bounds(%%x: tensor<?x?xf32>, %%y: tensor<?xf32>) -> (%s) {
  %%c0 = arith.constant 0 : index
  %%c1 = arith.constant 1 : index
  %%c2 = arith.constant 2 : index
  %%t = tensor.dim %%y, %%c0 : tensor<?xf32>
  %%tm1 = arith.subi %%t, %%c1 : index
  %%h = arith.floordivsi %%t, %%c2 : index
  %%nt = arith.subi %%c0, %%t : index
  %%a = kt.slice %%x, %%t {dim = 1, dynamic_end} : (tensor<?x?xf32>, index) -> tensor<?x?xf32>
  %%a2 = kt.mul %%a, %%a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %%b = kt.slice %%x, %%tm1 {dim = -1, dynamic_end} : (tensor<?x?xf32>, index) -> tensor<?x?xf32>
  %%b1 = kt.exp %%b : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %%c = kt.slice %%x, %%h, %%t {dim = 1, dynamic_start, dynamic_end, step = 2} : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %%d = kt.slice %%x, %%t {dim = 1, dynamic_start} : (tensor<?x?xf32>, index) -> tensor<?x?xf32>
  %%e = kt.slice %%x, %%nt {dim = 0, dynamic_start, end = 100} : (tensor<?x?xf32>, index) -> tensor<?x?xf32>
  return %%a2, %%b1, %%c, %%d, %%e : %s
}
func.func @scatter(%%x: tensor<?x?xf32>, %%v: tensor<?x?xf32>, %%w: tensor<?x?xf32>, %%y: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %%c0 = arith.constant 0 : index
  %%t = tensor.dim %%y, %%c0 : tensor<?xf32>
  %%nt = arith.subi %%c0, %%t : index
  %%a = kt.slice_scatter %%x, %%v, %%t {dim = 1, dynamic_start, step = 2} : (tensor<?x?xf32>, tensor<?x?xf32>, index) -> tensor<?x?xf32>
  %%b = kt.slice_scatter %%x, %%w, %%nt {dim = 1, dynamic_start} : (tensor<?x?xf32>, tensor<?x?xf32>, index) -> tensor<?x?xf32>
  return %%a, %%b : tensor<?x?xf32>, tensor<?x?xf32>
}
""" % (TYPES, TYPES)


def scattered(x, v, w, t):
    a, b = x.copy(), x.copy()
    a[:, t::2] = v
    b[:, -t:] = w
    return [a, b]


def expected(x, t):
    return [x[:, :t] ** 2, np.exp(x[..., :t - 1]), x[:, t // 2:t:2],
            x[:, t:], x[-t:100]]


tmp = tempfile.mkdtemp(prefix="kiln-slice-bounds-")
try:
    path = os.path.join(tmp, "m.mlir")
    with open(path, "w") as f:
        f.write(MODULE)
    n = [0]

    def save(x):
        n[0] += 1
        p = os.path.join(tmp, "in%d.npy" % n[0])
        np.save(p, np.asarray(x, np.float32))
        return p

    runs = []  # (entry, run dir, inputs, expected results)
    for (r, c), t in [((3, 6), 4), ((3, 6), 0), ((3, 6), 1), ((3, 6), 9),
                      ((2, 5), 5), ((4, 7), 3), ((0, 4), 2), ((3, 0), 2),
                      ((5, 6), 6)]:
        x = s.randn(r, c).astype(np.float32)
        y = save(np.zeros(t))
        runs.append(("bounds", "x%dx%d_t%d" % (r, c, t), [save(x), y],
                     expected(x, t)))
        v = s.randn(*x[:, t::2].shape).astype(np.float32)
        w = s.randn(*x[:, -t:].shape).astype(np.float32)
        runs.append(("scatter", "s%dx%d_t%d" % (r, c, t),
                     [save(x), save(v), save(w), y], scattered(x, v, w, t)))
    spec = os.path.join(tmp, "spec.txt")
    for backend in ["cpu", "interpreter"]:
        out = os.path.join(tmp, backend)
        with open(spec, "w") as f:
            for entry, d, ins, _ in runs:
                f.write("\t".join([entry, os.path.join(out, d)] + ins)
                        + "\n")
        proc = subprocess.run([KILN_RUN, path, "--backend=" + backend,
                               "--batch=" + spec], capture_output=True,
                              text=True)
        s.record("%s: exit 0" % backend, proc.returncode == 0, proc.stderr)
        for _, d, _, want in runs:
            rd = os.path.join(out, d)
            label = "%s: %s" % (backend, d)
            try:
                got = [np.load(os.path.join(rd, "result%d.npy" % i))
                       for i in range(len(want))]
            except OSError as e:
                err = os.path.join(rd, "error.txt")
                s.record(label, False, "%s\n%s" % (
                    e, open(err).read() if os.path.exists(err) else ""))
                continue
            for i, (g, w) in enumerate(zip(got, want)):
                s.record("%s: result %d" % (label, i),
                         g.shape == w.shape and
                         np.allclose(g, w, rtol=1e-5, atol=1e-6),
                         "%s vs %s" % (g.shape, w.shape))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
s.finish()
