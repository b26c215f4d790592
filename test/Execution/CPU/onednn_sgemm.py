# RUN: %python_dlopen %s
# REQUIRES: numpy, onednn
# libkiln_onednn's kiln_onednn_sgemm (cblas_sgemm's arguments; what
# kiln-matmul-to-blas calls for large f32 products, docs/codegen.md "Which
# BLAS"), called directly through ctypes against NumPy in float64: row major
# (oneDNN's sgemm) and column major (the library's own loop, which the
# lowering never emits: the only way to reach it), every transpose pair,
# leading dimensions larger than the rows, alpha and beta (beta = 0 must not
# read C: NaN there is overwritten), odd sizes, k = 1, and the thread
# argument.
import ctypes
import os
import sys

import numpy as np

lib_dir = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "..", "lib")
lib = ctypes.CDLL(os.path.join(lib_dir, "libkiln_onednn.so"))
f = lib.kiln_onednn_sgemm
P = ctypes.POINTER(ctypes.c_float)
i32 = ctypes.c_int32
f.argtypes = [i32, i32, i32, i32, i32, i32, ctypes.c_float, P, i32, P, i32,
              ctypes.c_float, P, i32, ctypes.c_int64]
f.restype = None
ROW, COL, NO, YES = 101, 102, 111, 112

rng = np.random.default_rng(53)
passed = failed = 0


def ptr(a):
    return a.ctypes.data_as(P)


def check(label, order, ta, tb, m, n, k, alpha, beta, pad, threads):
    global passed, failed
    # Logical operands A (m x k), B (k x n), C (m x n) in float64.
    A = rng.standard_normal((m, k))
    B = rng.standard_normal((k, n))
    C0 = rng.standard_normal((m, n))
    want = alpha * (A @ B) + (beta * C0 if beta != 0 else 0)

    # Storage: row major stores X as given; column major stores X^T. A
    # transposed operand is stored as its transpose. Rows padded by `pad`.
    def store(X, trans):
        S = X.T if trans else X
        if order == COL:
            S = S.T
        buf = np.full((S.shape[0], S.shape[1] + pad), np.nan, np.float32)
        buf[:, :S.shape[1]] = S
        return np.ascontiguousarray(buf), S.shape[1] + pad

    a, lda = store(A, ta == YES)
    b, ldb = store(B, tb == YES)
    c, ldc = store(C0, False)
    if beta == 0:
        c[:] = np.nan  # must not be read
    f(order, ta, tb, m, n, k, alpha, ptr(a), lda, ptr(b), ldb, beta, ptr(c),
      ldc, threads)
    got = c[:, :(n if order == ROW else m)]
    if order == COL:
        got = got.T
    ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4,
                                                 atol=1e-4 * np.sqrt(k))
    if ok:
        passed += 1
    else:
        failed += 1
        err = np.nanmax(np.abs(got - want)) if got.shape == want.shape else "shape"
        print("FAIL %s: max error %s" % (label, err))


for order in (ROW, COL):
    for ta in (NO, YES):
        for tb in (NO, YES):
            for (m, n, k) in ((7, 5, 3), (33, 17, 64), (1, 9, 1), (64, 1, 29)):
                for alpha, beta in ((1.0, 0.0), (0.5, 1.0), (-2.0, 0.25)):
                    for pad in (0, 3):
                        label = "order %d ta %d tb %d %dx%dx%d a %g b %g pad %d" % (
                            order, ta, tb, m, n, k, alpha, beta, pad)
                        check(label, order, ta, tb, m, n, k, alpha, beta,
                              pad, 2 if pad else 0)

print("onednn_sgemm.py: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or not passed else 0)
