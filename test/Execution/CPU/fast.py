# RUN: %python %s
# REQUIRES: numpy
# The optimized kiln-cpu pipeline (tiling, vectorization, OpenMP threads,
# OpenBLAS / generated matmuls) vs NumPy on odd sizes (partial vector tiles,
# masks), f32 and f64, batch matmuls; threads=2 must give bit-identical
# results to threads=1 (each output element is computed by one thread in a
# fixed order).
import numpy as np
from kiln_testing import KilnRunError, close, run, ttype

rng = np.random.default_rng(7)
passed = failed = 0


def record(label, ok, msg=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: %s" % (label, msg))


def cpu(mlir, inputs, *args):
    return run(mlir, inputs, extra_args=("--backend=cpu",) + args)


def compare(label, mlir, inputs, expected, rtol, atol, variants):
    results = {}
    for name, args in variants:
        try:
            results[name] = cpu(mlir, inputs, *args)[0]
        except KilnRunError as e:
            record(label + " " + name, False, str(e)[:300])
            return
        r = results[name]
        ok = r.shape == expected.shape and close(r, expected, rtol, atol)[0]
        record(label + " " + name, ok,
               "max abs err %g" % (np.max(np.abs(r.astype(np.float64) - expected))
                                   if r.shape == expected.shape else -1))
    if "t1" in results and "t2" in results:
        record(label + " threads=2 == threads=1",
               np.array_equal(results["t1"], results["t2"], equal_nan=True))


THREADS = [("t1", ("--cpu-threads=1",)), ("t2", ("--cpu-threads=2",))]

# Pointwise chain with broadcasting: odd inner sizes (masked tails).
for shape, elem, dt in [((37, 1003), "f32", np.float32), ((5, 3, 77), "f64", np.float64),
                        ((70001,), "f32", np.float32)]:
    x = rng.standard_normal(shape).astype(dt)
    y = rng.standard_normal(shape[-1:]).astype(dt)
    T, Y = ttype(shape, elem), ttype(shape[-1:], elem)
    mlir = """func.func @main(%x: {T}, %y: {Y}) -> {T} {{
  %0 = kt.add %x, %y : ({T}, {Y}) -> {T}
  %1 = kt.exp %0 : ({T}) -> {T}
  %2 = kt.tanh %1 : ({T}) -> {T}
  %3 = kt.mul %2, %x : ({T}, {T}) -> {T}
  %4 = kt.gelu %3 : ({T}) -> {T}
  return %4 : {T}
}}""".format(T=T, Y=Y)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    import math
    t = np.tanh(np.exp(xd + yd)) * xd
    erf = np.vectorize(math.erf)
    ref = 0.5 * t * (1 + erf(t / math.sqrt(2)))
    tol = 1e-5 if elem == "f32" else 1e-12
    compare("chain %s %s" % (shape, elem), mlir, [x, y], ref, tol, tol, THREADS)

# Row reductions: softmax and layer_norm over odd last dims.
for shape, elem, dt in [((33, 1001), "f32", np.float32), ((4, 7, 130), "f64", np.float64),
                        ((3, 5), "f32", np.float32)]:
    x = (rng.standard_normal(shape) * 3).astype(dt)
    T = ttype(shape, elem)
    mlir = """func.func @main(%x: {T}) -> {T} {{
  %0 = kt.softmax %x {{dim = -1}} : ({T}) -> {T}
  return %0 : {T}
}}""".format(T=T)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(-1, keepdims=True))
    tol = 1e-5 if elem == "f32" else 1e-12
    compare("softmax %s %s" % (shape, elem), mlir, [x], e / e.sum(-1, keepdims=True),
            tol, tol, THREADS)
    n = shape[-1]
    mlir = """func.func @main(%x: {T}) -> {T} {{
  %0 = kt.layer_norm %x {{normalized_shape = [{n}]}} : ({T}) -> {T}
  return %0 : {T}
}}""".format(T=T, n=n)
    mu = xd.mean(-1, keepdims=True)
    var = ((xd - mu) ** 2).mean(-1, keepdims=True)
    compare("layer_norm %s %s" % (shape, elem), mlir, [x], (xd - mu) / np.sqrt(var + 1e-5),
            tol * 10, tol * 10, THREADS)

# Column sum (reduction outside the vectorized dim) and a full sum.
x = rng.standard_normal((301, 67)).astype(np.float32)
mlir = """func.func @main(%x: tensor<301x67xf32>) -> tensor<67xf32> {
  %0 = kt.sum %x {dim = [0]} : (tensor<301x67xf32>) -> tensor<67xf32>
  return %0 : tensor<67xf32>
}"""
compare("column sum", mlir, [x], x.astype(np.float64).sum(0), 1e-4, 1e-4, THREADS)
mlir = """func.func @main(%x: tensor<301x67xf32>) -> tensor<f32> {
  %0 = kt.sum %x : (tensor<301x67xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
compare("full sum", mlir, [x], np.asarray(x.astype(np.float64).sum()), 1e-4, 1e-3, THREADS)

# Matmuls: both implementations, odd sizes, f32/f64, batch, dynamic M.
MM = [("openblas", ("--matmul=openblas",)), ("generated", ("--matmul=generated",)),
      ("gen-t2", ("--matmul=generated", "--cpu-threads=2"))]
for (m, k, n), elem, dt in [((67, 131, 45), "f32", np.float32), ((9, 3, 70), "f64", np.float64),
                            ((130, 257, 100), "f32", np.float32), ((1, 17, 1), "f32", np.float32)]:
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    A, B, C = ttype((m, k), elem), ttype((k, n), elem), ttype((m, n), elem)
    mlir = """func.func @main(%a: {A}, %b: {B}) -> {C} {{
  %0 = kt.matmul %a, %b : ({A}, {B}) -> {C}
  return %0 : {C}
}}""".format(A=A, B=B, C=C)
    tol = 1e-4 if elem == "f32" else 1e-11
    compare("matmul %dx%dx%d %s" % (m, k, n, elem), mlir, [a, b],
            a.astype(np.float64) @ b.astype(np.float64), tol, tol, MM)
for elem, dt in [("f32", np.float32), ("f64", np.float64)]:
    a = rng.standard_normal((3, 19, 37)).astype(dt)
    b = rng.standard_normal((3, 37, 50)).astype(dt)
    A, B, C = ttype(a.shape, elem), ttype(b.shape, elem), ttype((3, 19, 50), elem)
    mlir = """func.func @main(%a: {A}, %b: {B}) -> {C} {{
  %0 = kt.matmul %a, %b : ({A}, {B}) -> {C}
  return %0 : {C}
}}""".format(A=A, B=B, C=C)
    tol = 1e-4 if elem == "f32" else 1e-11
    compare("batch matmul %s" % elem, mlir, [a, b], a.astype(np.float64) @ b.astype(np.float64),
            tol, tol, MM)
a = rng.standard_normal((70, 33)).astype(np.float32)
w = rng.standard_normal((21, 33)).astype(np.float32)
bias = rng.standard_normal((21,)).astype(np.float32)
mlir = """func.func @main(%a: tensor<?x33xf32>, %w: tensor<21x33xf32>, %b: tensor<21xf32>) -> tensor<?x21xf32> {
  %0 = kt.linear %a, %w, %b : (tensor<?x33xf32>, tensor<21x33xf32>, tensor<21xf32>) -> tensor<?x21xf32>
  return %0 : tensor<?x21xf32>
}"""
compare("linear dynamic batch", mlir, [a, w, bias],
        a.astype(np.float64) @ w.astype(np.float64).T + bias, 1e-4, 1e-4, MM)

print("%s: %d passed, %d failed" % ("fast.py", passed, failed))
raise SystemExit(1 if failed else 0)
