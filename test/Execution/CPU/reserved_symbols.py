# RUN: %python %s
# REQUIRES: numpy
# User functions named like the external functions compiled code calls
# (libm's exp/log/cos with f64 math inside them, malloc, cblas_sgemm,
# kiln_cpu_runtime_error) are compiled by the CPU backend without being taken
# for those functions (kiln-cpu-rename-reserved-symbols): each entry runs
# through `kiln-run --backend=cpu`, compared with NumPy in float64, and a
# run-time check inside @kiln_cpu_runtime_error still reports its error.
import numpy as np
from kiln_testing import KilnRunError, Suite, run

s = Suite(__file__)

MODULE = """
func.func @exp(%x: tensor<5xf64>) -> tensor<5xf64> {
  %0 = kt.exp %x : (tensor<5xf64>) -> tensor<5xf64>
  return %0 : tensor<5xf64>
}
func.func @log(%x: tensor<5xf64>) -> tensor<5xf64> {
  %a = kt.abs %x : (tensor<5xf64>) -> tensor<5xf64>
  %0 = kt.log %a : (tensor<5xf64>) -> tensor<5xf64>
  %1 = kt.exp %0 : (tensor<5xf64>) -> tensor<5xf64>
  return %1 : tensor<5xf64>
}
func.func @cos(%x: tensor<5xf64>) -> tensor<5xf64> {
  %0 = kt.cos %x : (tensor<5xf64>) -> tensor<5xf64>
  %1 = func.call @exp(%0) : (tensor<5xf64>) -> tensor<5xf64>
  %2 = kt.log %1 : (tensor<5xf64>) -> tensor<5xf64>
  return %2 : tensor<5xf64>
}
func.func @malloc(%x: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
  %0 = kt.add %x, %x : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  %1 = kt.exp %0 : (tensor<5xf64>) -> tensor<5xf64>
  return %0, %1 : tensor<5xf64>, tensor<5xf64>
}
func.func @cblas_sgemm(%a: tensor<32x40xf32>, %b: tensor<40x48xf32>) -> tensor<32x48xf32> {
  %0 = kt.matmul %a, %b : (tensor<32x40xf32>, tensor<40x48xf32>) -> tensor<32x48xf32>
  return %0 : tensor<32x48xf32>
}
func.func @kiln_cpu_runtime_error(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
"""

x = s.randn(5, dtype=np.float64)
a32, b32 = s.randn(32, 40), s.randn(40, 48)
ia, ib = np.array([7, -7, 9, 0], np.int64), np.array([2, 2, -4, 3], np.int64)
cases = [
    ("exp", [x], [np.exp(x)]),
    ("log", [x], [np.abs(x)]),
    ("cos", [x], [np.cos(x)]),
    ("malloc", [x], [2 * x, np.exp(2 * x)]),
    ("cblas_sgemm", [a32, b32], [a32.astype(np.float64) @ b32.astype(np.float64)]),
    ("kiln_cpu_runtime_error", [ia, ib], [np.floor_divide(ia, ib)]),
]
for entry, inputs, refs in cases:
    for matmul in ("openblas", "generated"):
        label = "@%s cpu matmul=%s" % (entry, matmul)
        try:
            got = run(MODULE, inputs, entry=entry,
                      extra_args=["--backend=cpu", "--matmul=" + matmul])
        except KilnRunError as e:
            s.record(label, False, str(e))
            continue
        s.record(label + " result count", len(got) == len(refs), "%d results" % len(got))
        for i, (g, r) in enumerate(zip(got, refs)):
            ok = g.shape == r.shape and np.allclose(g, r, rtol=1e-5, atol=1e-5)
            s.record("%s result%d" % (label, i), ok, "got %s, expected %s" % (g, r))

# The run-time check of the integer division still reaches the backend's
# error function, not the user's @kiln_cpu_runtime_error.
try:
    run(MODULE, [ia, ia * 0], entry="kiln_cpu_runtime_error", extra_args=["--backend=cpu"])
    s.record("@kiln_cpu_runtime_error by zero on cpu", False, "no error")
except KilnRunError as e:
    s.record("@kiln_cpu_runtime_error by zero on cpu",
             "integer division by zero" in e.stderr, e.stderr)

s.finish()
