# RUN: %python %s
# REQUIRES: numpy
# A function that returns many kernel results, as a training forward graph
# returns its saved activations: kiln-cpu-early-dealloc hands each fresh
# buffer the function returns to the return (it leaves the end-of-block
# bufferization.dealloc), so no dealloc of them all is simplified pairwise
# or checked at run time. The values are compared with NumPy, including
# the aliasing cases the hand-over must leave to the dealloc: a result
# returned twice, a result returned with a view of it (a reshape), a
# returned input, and a result that is also a later kernel's operand.
import os, sys
import numpy as np
from kiln_testing import KILN_OPT, KilnRunError, Suite, close, run
from tool_server import tool_run

s = Suite(__file__)
N = 24  # steps: a matmul kernel and a tanh kernel each (matmuls are not fused)

x = s.randn(4, 8)
w = (s.randn(8, 8) * 0.3).astype(np.float32)

lines, results, types, want = [], [], [], []
h, hv = "%x", x.astype(np.float64)
for i in range(N):
    lines.append("  %%m%d = kt.matmul %s, %%w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>" % (i, h))
    lines.append("  %%t%d = kt.tanh %%m%d : (tensor<4x8xf32>) -> tensor<4x8xf32>" % (i, i))
    mv = hv @ w.astype(np.float64)
    tv = np.tanh(mv)
    results += ["%%m%d" % i, "%%t%d" % i]
    types += ["tensor<4x8xf32>"] * 2
    want += [mv, tv]
    h, hv = "%%t%d" % i, tv
# the last result twice, a reshape of it, and the input
lines.append("  %%r = kt.reshape %s {shape = [8, 4]} : (tensor<4x8xf32>) -> tensor<8x4xf32>" % h)
results += [h, "%r", "%x"]
types += ["tensor<4x8xf32>", "tensor<8x4xf32>", "tensor<4x8xf32>"]
want += [hv, hv.reshape(8, 4), x.astype(np.float64)]

mlir = ("func.func @main(%%x: tensor<4x8xf32>, %%w: tensor<8x8xf32>) -> (%s) {\n%s\n"
        "  return %s : %s\n}\n") % (", ".join(types), "\n".join(lines),
                                    ", ".join(results), ", ".join(types))

# The CPU backend, three calls (the results of each are freed by the caller).
try:
    outs = run(mlir, [x, w], extra_args=["--backend=cpu", "--repeat=3"])
except KilnRunError as e:
    s.record("cpu run", False, str(e))
    outs = []
s.record("result count", len(outs) == len(want), "%d vs %d" % (len(outs), len(want)))
for i, (g, e) in enumerate(zip(outs, want)):
    ok, msg = close(g, e, 1e-4, 1e-5)
    s.record("result %d (%s)" % (i, results[i]), ok, msg)

# The IR: every kernel result leaves the end-of-block dealloc; what stays
# is the twice-returned tanh (returned with its reshape view).
path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "kiln-returned-results-%d.mlir" % os.getpid())
with open(path, "w") as f:
    f.write(mlir)
try:
    proc = tool_run([KILN_OPT, path, "-kiln-cpu", "-o", os.devnull,
                     "--mlir-print-ir-after=kiln-cpu-early-dealloc"])
finally:
    os.unlink(path)
ir = proc.stderr
main = ir[ir.index("func.func @main"):]
main = main[:main.index("\n  }\n")]
deallocs = [l for l in main.splitlines() if "bufferization.dealloc" in l]
s.record("one dealloc left in @main", len(deallocs) == 1, "\n".join(deallocs))
retained = deallocs[0].split("retain (")[1].split(":")[0].split(",") if deallocs and "retain (" in deallocs[0] else []
# the tanh returned twice and its view: 2 retained values; before, all
# 2N + 3 results were retained.
s.record("retained: the twice-returned buffer and its view only",
         len(retained) == 2, deallocs[0] if deallocs else "")
s.finish()
