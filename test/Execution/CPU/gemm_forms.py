# RUN: %python %s
# REQUIRES: numpy
# Contractions that go to OpenBLAS in other forms than a plain row-major
# matmul (docs/codegen.md, "Matmul"): a transposed operand folded into the
# cblas transpose flags (kt.linear's weight, kt.transpose / kt.t inputs,
# attention's Q K^T), a batch operand shared by every batch element (batch
# stride 0), a zero-filled C replaced by beta = 0 (with an empty K, C must
# still be zeros), f32 and f64, static and `?` dims. Each runs with
# --matmul=openblas, auto and generated, and where the build has
# libkiln_onednn with --sgemm=onednn (f32 products on oneDNN's sgemm) and
# --sgemm=openblas, and is compared with NumPy in f64. Under the default
# (--sgemm=auto) f32 products of >= 2^23 multiply-adds take oneDNN's sgemm,
# smaller ones OpenBLAS; with a `?` size the code chooses per call: the
# "threshold" cases below run both sides of that test.
import os
import numpy as np
from kiln_testing import KILN_RUN, KilnRunError, close, run, ttype

rng = np.random.default_rng(11)
passed = failed = 0
IMPLS = [("openblas", ("--matmul=openblas",)), ("auto", ()),
         ("generated", ("--matmul=generated",)),
         ("openblas-t1", ("--matmul=openblas", "--cpu-threads=1"))]
# libkiln_onednn sits beside the tools' lib directory when it was built.
if os.path.exists(os.path.join(os.path.dirname(os.path.dirname(KILN_RUN)),
                               "lib", "libkiln_onednn.so.0")):
    IMPLS += [("sgemm-onednn", ("--matmul=openblas", "--sgemm=onednn")),
              ("sgemm-openblas", ("--matmul=openblas", "--sgemm=openblas"))]


def check(label, mlir, inputs, expected, tol):
    global passed, failed
    for name, args in IMPLS:
        try:
            r = run(mlir, inputs, extra_args=("--backend=cpu",) + args)[0]
        except KilnRunError as e:
            failed += 1
            print("FAIL %s %s: %s" % (label, name, str(e)[:300]))
            continue
        ok = r.shape == expected.shape and close(r, expected, tol, tol)[0]
        if ok:
            passed += 1
        else:
            failed += 1
            err = (np.max(np.abs(r.astype(np.float64) - expected))
                   if r.shape == expected.shape and r.size else r.shape)
            print("FAIL %s %s: max abs err / shape %s" % (label, name, err))


def rand(shape, dt):
    return rng.standard_normal(shape).astype(dt)


def dyn(shape, which):
    return tuple(None if i in which else d for i, d in enumerate(shape))


for elem, dt, tol in [("f32", np.float32, 2e-4), ("f64", np.float64, 1e-11)]:
    # kt.linear: y = x W^T + b (W read transposed, bias as C's start).
    for (m, k, n), dims in [((70, 33, 45), ()), ((64, 100, 30), (0,)), ((40, 50, 60), (0, 1))]:
        x, w, b = rand((m, k), dt), rand((n, k), dt), rand((n,), dt)
        X, W = ttype(dyn((m, k), dims), elem), ttype((n, k), elem)
        Bt, Y = ttype((n,), elem), ttype(dyn((m, n), dims[:1]), elem)
        mlir = """func.func @main(%x: {X}, %w: {W}, %b: {B}) -> {Y} {{
  %0 = kt.linear %x, %w, %b : ({X}, {W}, {B}) -> {Y}
  return %0 : {Y}
}}""".format(X=X, W=W, B=Bt, Y=Y)
        xd, wd = x.astype(np.float64), w.astype(np.float64)
        check("linear %s %s dyn%s" % ((m, k, n), elem, dims), mlir, [x, w, b],
              xd @ wd.T + b, tol)
        # Without bias: C starts as zeros (beta = 0).
        mlir = """func.func @main(%x: {X}, %w: {W}) -> {Y} {{
  %0 = kt.linear %x, %w : ({X}, {W}) -> {Y}
  return %0 : {Y}
}}""".format(X=X, W=W, Y=Y)
        check("linear nobias %s %s dyn%s" % ((m, k, n), elem, dims), mlir, [x, w], xd @ wd.T, tol)

    # Both operands transposed: t(a) @ t(b), a: [K, M], b: [N, K].
    a, b = rand((37, 29), dt), rand((41, 37), dt)
    mlir = """func.func @main(%a: {A}, %b: {B}) -> {C} {{
  %0 = kt.transpose %a {{dim0 = 0, dim1 = 1}} : ({A}) -> {AT}
  %1 = kt.transpose %b {{dim0 = 0, dim1 = 1}} : ({B}) -> {BT}
  %2 = kt.matmul %0, %1 : ({AT}, {BT}) -> {C}
  return %2 : {C}
}}""".format(A=ttype((37, 29), elem), B=ttype((41, 37), elem), AT=ttype((29, 37), elem),
             BT=ttype((37, 41), elem), C=ttype((29, 41), elem))
    check("t(a) @ t(b) %s" % elem, mlir, [a, b],
          a.astype(np.float64).T @ b.astype(np.float64).T, tol)

    # Batched with a shared operand: [B, M, K] @ [K, N] and [M, K] @ [B, K, N].
    a, b = rand((3, 30, 40), dt), rand((40, 25), dt)
    mlir = """func.func @main(%a: {A}, %b: {B}) -> {C} {{
  %0 = kt.matmul %a, %b : ({A}, {B}) -> {C}
  return %0 : {C}
}}""".format(A=ttype(a.shape, elem), B=ttype(b.shape, elem), C=ttype((3, 30, 25), elem))
    check("batch @ shared %s" % elem, mlir, [a, b], a.astype(np.float64) @ b.astype(np.float64), tol)
    a, b = rand((30, 40), dt), rand((4, 40, 26), dt)
    mlir = """func.func @main(%a: {A}, %b: {B}) -> {C} {{
  %0 = kt.matmul %a, %b : ({A}, {B}) -> {C}
  return %0 : {C}
}}""".format(A=ttype(a.shape, elem), B=ttype(b.shape, elem), C=ttype((4, 30, 26), elem))
    check("shared @ batch %s" % elem, mlir, [a, b], a.astype(np.float64) @ b.astype(np.float64), tol)

    # Batched Q K^T (transposed batched operand) with `?` batch and length.
    q, k = rand((5, 33, 24), dt), rand((5, 31, 24), dt)
    mlir = """func.func @main(%q: {Q}, %k: {K}) -> {S} {{
  %0 = kt.transpose %k {{dim0 = 1, dim1 = 2}} : ({K}) -> {KT}
  %1 = kt.matmul %q, %0 : ({Q}, {KT}) -> {S}
  return %1 : {S}
}}""".format(Q=ttype((None, None, 24), elem), K=ttype((None, None, 24), elem),
             KT=ttype((None, 24, None), elem), S=ttype((None, None, None), elem))
    check("q @ k^T dyn %s" % elem, mlir, [q, k],
          q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1), tol)

    # Attention (its two batched contractions).
    q, k, v = rand((4, 40, 32), dt), rand((4, 40, 32), dt), rand((4, 40, 32), dt)
    T = ttype(q.shape, elem)
    mlir = """func.func @main(%q: {T}, %k: {T}, %v: {T}) -> {T} {{
  %0 = kt.scaled_dot_product_attention %q, %k, %v : ({T}, {T}, {T}) -> {T}
  return %0 : {T}
}}""".format(T=T)
    qd, kd, vd = (t.astype(np.float64) for t in (q, k, v))
    s = qd @ kd.transpose(0, 2, 1) / np.sqrt(32)
    e = np.exp(s - s.max(-1, keepdims=True))
    check("sdpa %s" % elem, mlir, [q, k, v], (e / e.sum(-1, keepdims=True)) @ vd, tol * 10)

    # Empty K with a `?` dim: C must be zeros (the zero fill was folded into
    # beta = 0, cblas is skipped for empty products).
    a, b = rand((30, 0), dt), rand((0, 26), dt)
    mlir = """func.func @main(%a: {A}, %b: {B}) -> {C} {{
  %0 = kt.matmul %a, %b : ({A}, {B}) -> {C}
  return %0 : {C}
}}""".format(A=ttype((30, None), elem), B=ttype((None, 26), elem), C=ttype((30, 26), elem))
    check("empty K %s" % elem, mlir, [a, b], np.zeros((30, 26)), tol)

# Both sides of sgemm=auto's bound (2^23 multiply-adds) with `?` sizes: the
# per-call choice between oneDNN's sgemm and OpenBLAS, kt.linear (a
# transposed weight, the bias as C's start) and a plain product.
for (m, k, n) in [(256, 256, 128), (255, 256, 128), (8, 1280, 1000)]:
    x, w, b = rand((m, k), np.float32), rand((n, k), np.float32), \
        rand((n,), np.float32)
    X, W, Y = ttype((None, None), "f32"), ttype((n, None), "f32"), \
        ttype((None, n), "f32")
    B = ttype((n,), "f32")
    mlir = """func.func @main(%x: {X}, %w: {W}, %b: {B}) -> {Y} {{
  %0 = kt.linear %x, %w, %b : ({X}, {W}, {B}) -> {Y}
  return %0 : {Y}
}}""".format(X=X, W=W, B=B, Y=Y)
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    check("threshold linear %s" % ((m, k, n),), mlir, [x, w, b],
          xd @ wd.T + b, 1e-3)
    wt = np.ascontiguousarray(w.T)
    mlir = """func.func @main(%x: {X}, %w: {W}) -> {Y} {{
  %0 = kt.matmul %x, %w : ({X}, {W}) -> {Y}
  return %0 : {Y}
}}""".format(X=X, W=ttype((None, n), "f32"), Y=Y)
    check("threshold matmul %s" % ((m, k, n),), mlir, [x, wt], xd @ wd.T, 1e-3)

print("gemm_forms.py: %d passed, %d failed" % (passed, failed))
raise SystemExit(1 if failed else 0)
