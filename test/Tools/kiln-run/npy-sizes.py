# RUN: %python %s
# REQUIRES: numpy
# Tests that kiln-run checks the size a .npy header declares before it
# allocates or reads anything: a shape whose size overflows int64, or that
# the file's data does not hold, and a path that is not a regular file
# (/dev/zero, a directory, a FIFO: nothing to compare with, or reading would
# never end) are errors naming the file, with exit code 1, on both backends
# and for kg.program calls, never a crash, a hang, an out-of-memory abort or
# a result written from data that is not there.

import os
import struct
import subprocess
import tempfile

import numpy as np
from kiln_testing import KILN_RUN, Suite

s = Suite(__file__)
tmp = tempfile.mkdtemp(prefix="kiln-run-npy-sizes-")


def path(name):
    return os.path.join(tmp, name)


with open(path("f.mlir"), "w") as f:
    f.write("""
func.func @f(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.add %a, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
""")
with open(path("p.mlir"), "w") as f:
    f.write("""
kg.program @p(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = kg.graph @p_g0(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a0: tensor<?x?xf32>):
    %0 = kt.add %a0, %a0 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    kg.yield %0 : tensor<?x?xf32>
  }
  kg.return %y : tensor<?x?xf32>
}
""")


def npy(name, descr, shape, data, version=1, header_len=None):
    """A .npy file with the header text we want (NumPy refuses to write
    impossible shapes)."""
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    if version == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", header_len or len(h))
    else:
        pre = b"\x93NUMPY\x02\x00" + struct.pack("<I", header_len or len(h))
    with open(path(name), "wb") as f:
        f.write(pre + h.encode() + data)
    return path(name)


cases = [
    ("(2^32, 2^32) f32 over 24 bytes",
     npy("over32.npy", "<f4", "(4294967296, 4294967296)", b"\0" * 24),
     "the header declares tensor<4294967296x4294967296xf32>, which has more "
     "than 2^63 - 1 bytes"),
    ("(2^62, 4) f32",
     npy("over62.npy", "<f4", "(4611686018427387904, 4)", b"\0" * 24),
     "the header declares tensor<4611686018427387904x4xf32>, which has more "
     "than 2^63 - 1 bytes"),
    ("(2^61, 2) f64 whose bytes wrap to 0",
     npy("wrap.npy", "<f8", "(2305843009213693952, 2)", b""),
     "which has more than 2^63 - 1 bytes"),
    ("huge shape over 24 bytes",
     npy("huge.npy", "<f4", "(1000000, 1000000)", b"\0" * 24),
     "truncated .npy data: expected 4000000000000 bytes, found 24"),
    ("trailing bytes",
     npy("trailing.npy", "<f4", "(2, 3)", b"\0" * 25),
     "trailing bytes after .npy data: expected 24, found 25"),
    ("v2 header longer than the file",
     npy("v2.npy", "<f4", "(2, 3)", b"\0" * 24, version=2,
         header_len=0xFFFFFFF0),
     "truncated .npy header"),
    ("/dev/zero", "/dev/zero", "not a regular file (a character device)"),
    ("a directory", tmp, "not a regular file (a directory)"),
]
os.mkfifo(path("fifo.npy"))
cases.append(("a FIFO", path("fifo.npy"), "not a regular file (a FIFO)"))


def kiln_run(args):
    try:
        p = subprocess.run([KILN_RUN] + args, capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return None
    return p


for label, npy_path, needle in cases:
    for backend in ["interpreter", "cpu"]:
        out = path("out-%d" % len(os.listdir(tmp)))
        p = kiln_run([path("f.mlir"), "--input=" + npy_path,
                      "--backend=" + backend, "--output-dir=" + out])
        if p is None:
            s.record("%s (%s)" % (label, backend), False, "timed out")
            continue
        lines = p.stderr.splitlines()
        want = "kiln-run: error: input #0: '%s': " % npy_path
        ok = (p.returncode == 1 and lines and lines[-1].startswith(want)
              and needle in lines[-1] and not os.path.exists(out))
        s.record("%s (%s)" % (label, backend), ok,
                 "rc=%d stderr=%r" % (p.returncode, p.stderr))

# The same reader serves the calls of a kg.program.
p = kiln_run([path("p.mlir"), "--call=" + path("over32.npy")])
ok = (p is not None and p.returncode == 1 and
      p.stderr.splitlines()[-1].startswith(
          "kiln-run: error: call #0 input #0: '%s': the header declares"
          % path("over32.npy")))
s.record("kg.program call", ok, p and p.stderr)

# A good file next to them still reads (written by NumPy, version 1 and 2).
x = np.arange(6, dtype=np.float32).reshape(2, 3)
np.save(path("good.npy"), x)
with open(path("good2.npy"), "wb") as f:
    np.lib.format.write_array(f, x, version=(2, 0))
for name in ["good.npy", "good2.npy"]:
    out = path("out-" + name)
    p = kiln_run([path("f.mlir"), "--input=" + path(name),
                  "--output-dir=" + out])
    ok = (p.returncode == 0 and
          np.array_equal(np.load(os.path.join(out, "result0.npy")), 2 * x))
    s.record("valid " + name, ok, p.stderr)

s.finish()
