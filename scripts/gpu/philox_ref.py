"""Philox4x32-10 of the kt dialect's contract (KTCreationOps.td; the
interpreter's lib/Interpreter/Kernels/CreationKernels.cpp and the lowering's
lib/Conversion/KTToLinalg/Random.cpp) in NumPy: an independent reference
for kt.rand / kt.randn / kt.dropout on any backend (scripts/gpu/run_checks.py
compares the GPU's values with it bit for bit; test/Conversion/NVPTX/
philox-reference.test checks it against the interpreter and the CPU backend).
"""

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)


def philox(seed, n):
    """The four output words (uint64 arrays holding 32-bit values) for the
    linear indices 0..n-1 under `seed` (an int, taken as uint64)."""
    s = np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
    k0, k1 = s & MASK, s >> np.uint64(32)
    idx = np.arange(n, dtype=np.uint64)
    c0, c1 = idx & MASK, idx >> np.uint64(32)
    c2 = np.zeros(n, np.uint64)
    c3 = np.zeros(n, np.uint64)
    for r in range(10):
        p0 = M0 * c0
        p1 = M1 * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ k1
        c0, c1, c2, c3 = n0, p1 & MASK, n2, p0 & MASK
        if r != 9:
            k0 = (k0 + W0) & MASK
            k1 = (k1 + W1) & MASK
    return c0, c1, c2, c3


def _u53(x, y):
    return (((x >> np.uint64(5)) << np.uint64(26)) | (y >> np.uint64(6))).astype(np.float64)


def uniform(seed, n, f64):
    o = philox(seed, n)
    if f64:
        return _u53(o[0], o[1]) * (1.0 / 9007199254740992.0)
    return (o[0] >> np.uint64(8)).astype(np.float64) * (1.0 / 16777216.0)


def normal(seed, n, f64):
    o = philox(seed, n)
    if f64:
        s = 1.0 / 9007199254740992.0
        u1 = (_u53(o[0], o[1]) + 1.0) * s
        u2 = _u53(o[2], o[3]) * s
    else:
        s = 1.0 / 16777216.0
        u1 = ((o[0] >> np.uint64(8)).astype(np.float64) + 1.0) * s
        u2 = (o[1] >> np.uint64(8)).astype(np.float64) * s
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def dropout(x, seed, p):
    """x (float64 array of the values) * mask, in f64 (round to the dtype
    after)."""
    f64 = x.dtype == np.float64
    u = uniform(seed, x.size, f64).reshape(x.shape)
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    return x.astype(np.float64) * np.where(u >= p, scale, 0.0)
