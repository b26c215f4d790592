# RUN: %python %s
# REQUIRES: numpy
# Tests kt.reshape with size operands (-2 entries: sizes computed from the
# inputs' dims, x.view(B * T, C) and x.view(B, T, H, D) with B and T both
# dynamic) on both backends, several input sizes through ONE compile
# (kiln-run --batch): a merge of two `?` dims, a split back into them with an
# inferred -1, a size taken from another input, and the run-time checks (an
# element count that does not match the sizes is an error naming the
# shapes, never a wrong reshape). Against NumPy.
import os
import shutil
import subprocess
import tempfile

import numpy as np
from kiln_testing import KILN_RUN, Suite

s = Suite(__file__)
MODULE = """
func.func @merge_split(%x: tensor<?x?x8xf32>) -> (tensor<?x8xf32>, tensor<?x?x2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %bt = arith.muli %b, %t : index
  %m = kt.reshape %x, %bt {shape = [-2, 8]} : (tensor<?x?x8xf32>, index) -> tensor<?x8xf32>
  %e = kt.exp %m : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %s = kt.reshape %e, %b, %t {shape = [-2, -2, 2, -1]} : (tensor<?x8xf32>, index, index) -> tensor<?x?x2x4xf32>
  %p = kt.permute %s {dims = [1, 0, 2, 3]} : (tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  return %m, %p : tensor<?x8xf32>, tensor<?x?x2x4xf32>
}
func.func @like(%x: tensor<?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.dim %y, %c0 : tensor<?x?xf32>
  %b = tensor.dim %y, %c1 : tensor<?x?xf32>
  %r = kt.reshape %x, %a, %b {shape = [-2, -2]} : (tensor<?xf32>, index, index) -> tensor<?x?xf32>
  %n = kt.neg %r : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %n : tensor<?x?xf32>
}
func.func @infer(%x: tensor<?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %a = tensor.dim %y, %c0 : tensor<?x?xf32>
  %r = kt.reshape %x, %a {shape = [-2, -1]} : (tensor<?xf32>, index) -> tensor<?x?xf32>
  %n = kt.neg %r : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %n : tensor<?x?xf32>
}
"""

tmp = tempfile.mkdtemp(prefix="kiln-reshape-sizes-")
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

    runs = []  # (entry, run dir, inputs, expected results or error text)
    for b, t in [(2, 3), (5, 1), (1, 7)]:
        x = s.randn(b, t, 8)
        m = x.reshape(b * t, 8)
        runs.append(("merge_split", "ms%dx%d" % (b, t), [save(x)],
                     [m, np.exp(m).reshape(b, t, 2, 4).transpose(1, 0, 2, 3)]))
    for a, c in [(2, 3), (4, 5), (1, 1), (0, 3)]:
        x = s.randn(a * c)
        runs.append(("like", "like%dx%d" % (a, c),
                     [save(x), save(np.zeros((a, c)))], [-x.reshape(a, c)]))
        if a:  # (a 0 with the -1: infer_zero below)
            runs.append(("infer", "infer%dx%d" % (a, c),
                         [save(x), save(np.zeros((a, 1)))], [-x.reshape(a, c)]))
    # Element counts that do not match the sizes: errors.
    runs.append(("like", "like_bad", [save(s.randn(7)), save(np.zeros((2, 3)))],
                 "cannot reshape tensor of shape [7] (7 elements) into shape ["))
    runs.append(("infer", "infer_bad", [save(s.randn(7)), save(np.zeros((2, 1)))],
                 "not divisible by 2"))
    # A -1 with sizes whose product is 0 is ambiguous (PyTorch's error).
    runs.append(("merge_split", "ms3x0", [save(s.randn(3, 0, 8))],
                 "(0 elements) into shape ["))
    runs.append(("infer", "infer_zero", [save(s.randn(4)), save(np.zeros((0, 1)))],
                 "not divisible by 0"))
    spec = os.path.join(tmp, "spec.txt")
    for backend in ["cpu", "interpreter"]:
        out = os.path.join(tmp, backend)
        with open(spec, "w") as f:
            for entry, d, ins, _ in runs:
                f.write("\t".join([entry, os.path.join(out, d)] + ins) + "\n")
        proc = subprocess.run([KILN_RUN, path, "--backend=" + backend,
                               "--batch=" + spec], capture_output=True,
                              text=True)
        s.record("%s: exit 0" % backend, proc.returncode == 0, proc.stderr)
        for entry, d, _, want in runs:
            rd = os.path.join(out, d)
            label = "%s: %s" % (backend, d)
            if isinstance(want, str):
                err = os.path.join(rd, "error.txt")
                text = open(err).read() if os.path.exists(err) else ""
                s.record(label + " fails", want in text,
                         text or "no error.txt in %s" % os.listdir(rd))
                continue
            try:
                got = [np.load(os.path.join(rd, "result%d.npy" % i))
                       for i in range(len(want))]
            except OSError as e:
                err = os.path.join(rd, "error.txt")
                s.record(label, False, "%s\n%s" % (
                    e, open(err).read() if os.path.exists(err) else ""))
                continue
            s.record(label, all(g.shape == w.shape and
                                np.allclose(g, w, rtol=1e-6, atol=1e-6)
                                for g, w in zip(got, want)),
                     "%s vs %s" % ([g.shape for g in got],
                                   [w.shape for w in want]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
s.finish()
