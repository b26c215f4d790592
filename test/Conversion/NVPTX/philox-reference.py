# RUN: %python %s
# REQUIRES: numpy
# scripts/gpu/philox_ref.py, the NumPy Philox4x32-10 that the GPU check
# (scripts/gpu/run_checks.py) compares the device's kt.rand / kt.randn /
# kt.dropout with, against the interpreter and the CPU backend here:
# bit-identical for rand (f32, f64, f16, bf16 via f32, 0-d), randn f32 and
# dropout; randn f64 within 4e-15 (NumPy's log/cos are not libm's). So a
# GPU result equal to the reference is the interpreter's value.
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "gpu"))
import philox_ref as P  # noqa: E402

KILN_RUN = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-run")
PROGRAM = """
func.func @r(%seed: tensor<i64>, %x: tensor<37x29xf32>, %y: tensor<513xf64>) -> (tensor<1000xf32>, tensor<1000xf64>, tensor<1000xf32>, tensor<1000xf64>, tensor<f32>, tensor<37x29xf32>, tensor<513xf64>, tensor<3x5xf16>) {
  %0 = kt.rand %seed {size = [1000], dtype = f32} : (tensor<i64>) -> tensor<1000xf32>
  %1 = kt.rand %seed {size = [1000], dtype = f64} : (tensor<i64>) -> tensor<1000xf64>
  %2 = kt.randn %seed {size = [1000], dtype = f32} : (tensor<i64>) -> tensor<1000xf32>
  %3 = kt.randn %seed {size = [1000], dtype = f64} : (tensor<i64>) -> tensor<1000xf64>
  %4 = kt.rand %seed {size = [], dtype = f32} : (tensor<i64>) -> tensor<f32>
  %5 = kt.dropout %x, %seed {p = 0.3} : (tensor<37x29xf32>, tensor<i64>) -> tensor<37x29xf32>
  %6 = kt.dropout %y, %seed {p = 0.75} : (tensor<513xf64>, tensor<i64>) -> tensor<513xf64>
  %7 = kt.rand %seed {size = [3, 5], dtype = f16} : (tensor<i64>) -> tensor<3x5xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<1000xf32>, tensor<1000xf64>, tensor<1000xf32>, tensor<1000xf64>, tensor<f32>, tensor<37x29xf32>, tensor<513xf64>, tensor<3x5xf16>
}
"""

failed = 0
rng = np.random.default_rng(5)
x = rng.standard_normal((37, 29)).astype(np.float32)
y = rng.standard_normal(513)
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "r.mlir")
    open(src, "w").write(PROGRAM)
    np.save(os.path.join(tmp, "x.npy"), x)
    np.save(os.path.join(tmp, "y.npy"), y)
    for seed in (0, 42, -1234567890123, 2**63 - 1):
        np.save(os.path.join(tmp, "seed.npy"), np.array(seed, dtype=np.int64))
        ref = [P.uniform(seed, 1000, False).astype(np.float32),
               P.uniform(seed, 1000, True),
               P.normal(seed, 1000, False).astype(np.float32),
               P.normal(seed, 1000, True),
               P.uniform(seed, 1, False).astype(np.float32).reshape(()),
               P.dropout(x, seed, 0.3).astype(np.float32),
               P.dropout(y, seed, 0.75),
               P.uniform(seed, 15, False).astype(np.float32).astype(
                   np.float16).reshape(3, 5)]
        for backend in ("interpreter", "cpu"):
            out = os.path.join(tmp, "%s-%d" % (backend, seed))
            os.makedirs(out)
            subprocess.run([KILN_RUN, src, "--backend=" + backend,
                            "--input=" + os.path.join(tmp, "seed.npy"),
                            "--input=" + os.path.join(tmp, "x.npy"),
                            "--input=" + os.path.join(tmp, "y.npy"),
                            "--output-dir=" + out], check=True)
            for i, r in enumerate(ref):
                a = np.load(os.path.join(out, "result%d.npy" % i))
                if a.dtype != r.dtype or a.shape != r.shape:
                    ok = False
                elif i == 3:
                    ok = np.abs(a - r).max() <= 4e-15
                else:
                    ok = np.array_equal(np.atleast_1d(a).view(np.uint8),
                                        np.atleast_1d(r).view(np.uint8))
                if not ok:
                    failed += 1
                    print("FAIL seed %d %s result %d" % (seed, backend, i))
print("philox-reference: %d failed" % failed)
sys.exit(1 if failed else 0)
