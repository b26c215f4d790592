# RUN: %python %s
# REQUIRES: numpy
# Tests that kiln-run rejects bad input with one error line naming what was
# wrong, exit code 1 (never a crash), and writes no output file then.

import os
import subprocess
import tempfile

import numpy as np
from kiln_testing import KILN_RUN, Suite

s = Suite(__file__)
tmp = tempfile.mkdtemp(prefix="kiln-run-errors-")


def path(name):
    return os.path.join(tmp, name)


MLIR = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @g(%a: tensor<?xi64>) -> tensor<?xi64> {
  return %a : tensor<?xi64>
}
"""
with open(path("ok.mlir"), "w") as f:
    f.write(MLIR)
with open(path("bad.mlir"), "w") as f:
    f.write("func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
            "  %0 = kt.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>\n"
            "  return %0 : tensor<3xf32>\n}\n")
np.save(path("a.npy"), np.ones((2, 3), np.float32))
np.save(path("b.npy"), np.ones(3, np.float32))
np.save(path("b64.npy"), np.ones(3, np.float64))
np.save(path("b4.npy"), np.ones(4, np.float32))
np.save(path("fortran.npy"), np.asfortranarray(np.ones((2, 3), np.float32)))
np.save(path("big.npy"), np.ones(3, dtype=">f4"))
np.save(path("u16.npy"), np.ones(3, dtype=np.uint16))
with open(path("b.npy"), "rb") as f:
    good = f.read()
with open(path("trunc.npy"), "wb") as f:
    f.write(good[:-4])
with open(path("magic.npy"), "wb") as f:
    f.write(b"PK\x03\x04 definitely not npy")
with open(path("header.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'}\n")


def kiln_run(*args):
    return subprocess.run([KILN_RUN] + list(args), capture_output=True, text=True)


def expect_error(label, args, needle):
    p = kiln_run(*args)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    ok = p.returncode == 1 and any(needle in l for l in lines)
    # The failure ends with one line that names what was wrong.
    ok = ok and "error" in lines[-1]
    s.record(label, ok, "rc=%d stderr=%r" % (p.returncode, p.stderr))


ok_args = [path("ok.mlir"), "--entry=f"]
expect_error("unknown entry", [path("ok.mlir"), "--entry=nope",
             "--input=" + path("a.npy"), "--input=" + path("b.npy")],
             "no function or kg.program named 'nope'")
expect_error("missing file", [path("missing.mlir"), "--entry=f"], "cannot read")
expect_error("invalid IR", [path("bad.mlir"), "--entry=f"], "invalid IR")
expect_error("invalid IR names the op", [path("bad.mlir"), "--entry=f"], "bad.mlir:2:")
expect_error("wrong input count", ok_args + ["--input=" + path("a.npy")],
             "takes 2 arguments but 1")
expect_error("wrong dtype", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("b64.npy")], "expected tensor<3xf32>, got f64")
expect_error("wrong shape", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("b4.npy")], "got f32 tensor of shape 4")
expect_error("unreadable npy", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("nothere.npy")], "cannot read")
expect_error("bad magic", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("magic.npy")], "bad magic")
expect_error("truncated", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("trunc.npy")], "truncated")
expect_error("malformed header", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("header.npy")], "malformed")
expect_error("fortran order", ok_args + ["--input=" + path("fortran.npy"),
             "--input=" + path("b.npy")], "Fortran")
expect_error("big endian", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("big.npy")], "big endian")
expect_error("unsupported dtype", ok_args + ["--input=" + path("a.npy"),
             "--input=" + path("u16.npy")], "unsupported dtype")
expect_error("random with dynamic dim", [path("ok.mlir"), "--entry=g",
             "--random-inputs"], "dynamic dim")

# Complex arrays and complex argument types: an error naming the dtype and
# why (docs/adding-ops.md, "Complex dtypes"), on both backends.
np.save(path("c64.npy"), np.ones(3, np.complex64))
np.save(path("c128.npy"), np.ones(3, np.complex128))
with open(path("complex.mlir"), "w") as f:
    f.write("func.func @c(%a: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {\n"
            "  return %a : tensor<3xcomplex<f32>>\n}\n")
for backend in ("interpreter", "cpu"):
    be = ["--backend=" + backend]
    expect_error("complex64 npy (%s)" % backend, ok_args + be + [
        "--input=" + path("a.npy"), "--input=" + path("c64.npy")],
        "unsupported dtype '<c8' (complex64): complex dtypes are not supported")
    expect_error("complex128 npy (%s)" % backend, ok_args + be + [
        "--input=" + path("a.npy"), "--input=" + path("c128.npy")],
        "unsupported dtype '<c16' (complex128): complex dtypes are not "
        "supported")
    expect_error("complex argument, random (%s)" % backend, [
        path("complex.mlir"), "--random-inputs"] + be,
        "argument #0 of @c has an unsupported type tensor<3xcomplex<f32>> "
        "(complex dtypes are not supported")
    expect_error("complex argument, npy (%s)" % backend, [
        path("complex.mlir"), "--input=" + path("c64.npy")] + be,
        "complex dtypes are not supported")

# A failing run leaves an existing output untouched and writes nothing new.
out = path("out")
os.makedirs(out)
with open(os.path.join(out, "result0.npy"), "wb") as f:
    f.write(b"precious")
p = kiln_run(*(ok_args + ["--input=" + path("a.npy"), "--input=" + path("b4.npy"),
                          "--output-dir=" + out]))
with open(os.path.join(out, "result0.npy"), "rb") as f:
    kept = f.read() == b"precious"
s.record("failure keeps outputs", p.returncode == 1 and kept and
         sorted(os.listdir(out)) == ["result0.npy"], "rc=%d files=%s" % (
             p.returncode, os.listdir(out)))

# A successful run writes exactly result0.npy with the right values.
p = kiln_run(*(ok_args + ["--input=" + path("a.npy"), "--input=" + path("b.npy"),
                          "--output-dir=" + out]))
r = np.load(os.path.join(out, "result0.npy"))
s.record("success writes result", p.returncode == 0 and r.dtype == np.float32
         and np.array_equal(r, np.full((2, 3), 2, np.float32)) and
         sorted(os.listdir(out)) == ["result0.npy"], p.stderr)

# Random inputs are reproducible, saved, and differ across seeds.
r1 = kiln_run(path("ok.mlir"), "--entry=f", "--random-inputs", "--seed=7",
              "--output-dir=" + path("r1"))
r2 = kiln_run(path("ok.mlir"), "--entry=f", "--random-inputs", "--seed=7",
              "--output-dir=" + path("r2"))
r3 = kiln_run(path("ok.mlir"), "--entry=f", "--random-inputs", "--seed=8",
              "--output-dir=" + path("r3"))
ld = lambda d, n: np.load(os.path.join(path(d), n))
same = all(np.array_equal(ld("r1", n), ld("r2", n)) for n in
           ["input0.npy", "input1.npy", "result0.npy"])
differ = not np.array_equal(ld("r1", "input0.npy"), ld("r3", "input0.npy"))
consistent = np.allclose(ld("r1", "result0.npy"),
                         ld("r1", "input0.npy") + ld("r1", "input1.npy"))
s.record("random inputs", r1.returncode == 0 and same and differ and consistent,
         r1.stderr + r3.stderr)

# Dynamic dims accept any size; every dtype round-trips through .npy.
for dt in [np.int64]:
    x = np.arange(5, dtype=dt)
    np.save(path("dyn.npy"), x)
    p = kiln_run(path("ok.mlir"), "--entry=g", "--input=" + path("dyn.npy"),
                 "--output-dir=" + path("dyn"))
    s.record("dynamic dim", p.returncode == 0 and
             np.array_equal(ld("dyn", "result0.npy"), x), p.stderr)

s.finish()
