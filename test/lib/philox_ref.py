"""An independent NumPy implementation of the kt dialect's random-number
contract (Philox4x32-10, see KTCreationOps.td) for the random-op tests."""

import numpy as np
from kiln_testing import to_bf16

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)


def philox(seed, n):
    """Philox4x32-10 outputs (4 arrays of uint32) for counters 0..n-1."""
    seed = int(seed) & (2**64 - 1)
    idx = np.arange(n, dtype=np.uint64)
    c0 = (idx & MASK).astype(np.uint32)
    c1 = (idx >> np.uint64(32)).astype(np.uint32)
    c2 = np.zeros(n, np.uint32)
    c3 = np.zeros(n, np.uint32)
    k0, k1 = np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32)
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = M0 * c0.astype(np.uint64)
            p1 = M1 * c2.astype(np.uint64)
            hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), (p0 & MASK).astype(np.uint32)
            hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), (p1 & MASK).astype(np.uint32)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            k0 = np.uint32((int(k0) + int(W0)) & 0xFFFFFFFF)
            k1 = np.uint32((int(k1) + int(W1)) & 0xFFFFFFFF)
    return c0, c1, c2, c3


def u53(a, b):
    return ((a >> np.uint32(5)).astype(np.uint64) << np.uint64(26)) | (b >> np.uint32(6)).astype(np.uint64)


def uniform_ref(seed, n, elem):
    o = philox(seed, n)
    if elem == "f64":
        return u53(o[0], o[1]).astype(np.float64) * 2.0**-53
    return (o[0] >> np.uint32(8)).astype(np.float64) * 2.0**-24


def normal_ref(seed, n, elem):
    o = philox(seed, n)
    if elem == "f64":
        u1 = (u53(o[0], o[1]).astype(np.float64) + 1) * 2.0**-53
        u2 = u53(o[2], o[3]).astype(np.float64) * 2.0**-53
    else:
        u1 = ((o[0] >> np.uint32(8)).astype(np.float64) + 1) * 2.0**-24
        u2 = (o[1] >> np.uint32(8)).astype(np.float64) * 2.0**-24
    return np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)


def round_to(x, elem):
    if elem == "bf16":
        return to_bf16(np.asarray(x, np.float32).reshape(-1)).reshape(np.shape(x))
    return np.asarray(x).astype({"f32": np.float32, "f64": np.float64, "f16": np.float16}[elem])
