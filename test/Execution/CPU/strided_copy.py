# RUN: %python %s
# REQUIRES: numpy, torch
# Copies between strided views that compiled code leaves to the runtime's
# memrefCopy (the zero-interleaved gradient of a grouped transposed conv,
# slices with a step: kiln/rt/MemrefCopy.h, a row-by-row copy that the JIT
# binds instead of MLIR's element loop) give the reference's values for
# 1, 2, 4 and 8-byte elements. Each program is first checked to call
# memrefCopy after kiln-cpu, so that the copy is what the test exercises.
import os
import subprocess
import tempfile

import numpy as np
import torch
from kiln_testing import KILN_OPT, KilnRunError, close, run

rng = np.random.default_rng(3)
failed = 0


def t(shape, elem):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), elem)


def calls_memref_copy(mlir):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
    try:
        out = subprocess.run([KILN_OPT, f.name, "-kiln-cpu=threads=2"],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return out.returncode == 0 and "llvm.call @memrefCopy" in out.stdout


def check(name, mlir, inputs, want, tol):
    global failed
    if not calls_memref_copy(mlir):
        print("FAIL %s: no memrefCopy call after kiln-cpu" % name)
        failed += 1
        return
    for extra in [(), ("--cpu-threads=1", "--repeat=2")]:
        try:
            got = run(mlir, inputs, extra_args=("--backend=cpu",) + extra)
        except KilnRunError as e:
            print("FAIL %s %s: %s" % (name, extra, str(e)[:300]))
            failed += 1
            continue
        g = got[0]
        ok = g.shape == want.shape and (
            np.array_equal(g, want) if tol is None
            else close(g.astype(np.float64), want.astype(np.float64), tol, tol)[0])
        print(("ok" if ok else "FAIL") + " %s %s" % (name, " ".join(extra)))
        failed += not ok


# Grouped transposed convolutions (cpg input channels per group, output
# multiplier 1 or 2), stride 2 and 3, odd and non-square sizes, f32 and f64:
# the zero interleave of x. (An f32 one with one input channel per group, a
# depthwise conv's input gradient, runs whole without the interleave since
# tr23: conv_onednn_grad.py; f64 keeps it.)
for (N, C, cpg, H, W, mult, k, s, p, elem, dt, tol) in [
        (2, 3, 1, 5, 7, 1, 3, (2, 2), (1, 1), "f64", np.float64, 1e-12),
        (1, 4, 2, 6, 5, 2, 3, (3, 2), (0, 1), "f32", np.float32, 1e-5),
        (3, 6, 2, 9, 4, 1, 5, (2, 3), (2, 1), "f32", np.float32, 1e-5)]:
    x = rng.standard_normal((N, C, H, W)).astype(dt)
    w = rng.standard_normal((C, mult, k, k)).astype(dt)
    want = torch.nn.functional.conv_transpose2d(
        torch.from_numpy(x), torch.from_numpy(w), stride=s, padding=p,
        groups=C // cpg).numpy()
    ot = t(want.shape, elem)
    mlir = ("func.func @main(%%x: %s, %%w: %s) -> %s {\n"
            "  %%0 = kt.conv_transpose2d %%x, %%w {stride = [%d, %d], "
            "padding = [%d, %d], groups = %d : i64} : (%s, %s) -> %s\n"
            "  return %%0 : %s\n}\n" % (
                t(x.shape, elem), t(w.shape, elem), ot, s[0], s[1], p[0], p[1],
                C // cpg, t(x.shape, elem), t(w.shape, elem), ot, ot))
    check("conv_transpose2d %s groups %d stride %s" % (elem, C // cpg, s), mlir,
          [x, w], want, tol)

# Slices with a step on two dims: 1, 2, 4 (a rank-3 view with a
# contiguous inner dim) and 8-byte elements.
for elem, dt, shape in [("i8", np.int8, (7, 10)), ("f16", np.float16, (6, 9)),
                        ("i32", np.int32, (5, 8, 6)),
                        ("i64", np.int64, (9, 11))]:
    if np.issubdtype(dt, np.integer):
        x = rng.integers(-100, 100, shape).astype(dt)
    else:
        x = rng.standard_normal(shape).astype(dt)
    want = x[::2, 1::3]
    mid = (x.shape[0],) + want.shape[1:]
    mlir = ("func.func @main(%%x: %s) -> %s {\n"
            "  %%0 = kt.slice %%x {dim = 1, start = 1, end = %d, step = 3} : "
            "(%s) -> %s\n"
            "  %%1 = kt.slice %%0 {dim = 0, start = 0, end = %d, step = 2} : "
            "(%s) -> %s\n"
            "  return %%1 : %s\n}\n" % (
                t(x.shape, elem), t(want.shape, elem), x.shape[1],
                t(x.shape, elem), t(mid, elem), x.shape[0], t(mid, elem),
                t(want.shape, elem), t(want.shape, elem)))
    check("slice %s %s" % (elem, "x".join(map(str, shape))), mlir, [x], want,
          None)

print("strided_copy.py: %d failed" % failed)
raise SystemExit(1 if failed else 0)
