# RUN: %python %s
# REQUIRES: numpy
# Tests kt.rand, kt.randn and kt.dropout: exact values against an
# independent NumPy implementation of the documented Philox4x32-10 contract
# (see KTCreationOps.td), statistics on >= 100k elements, reproducibility,
# seed sensitivity, dynamic sizes and dropout's p / train handling.

import numpy as np
from kiln_testing import Suite, ttype, func_text, to_bf16
from philox_ref import philox, uniform_ref, normal_ref, round_to

s = Suite(__file__, cpu=True)

def run_random(op, seed, shape, elem, dyn=False):
    t = ttype([-1 if dyn else d for d in shape], elem)
    lines = ["%%s = kt.constant {value = dense<%d> : tensor<i64>} : () -> tensor<i64>" % seed]
    operands, otypes = "%s", "tensor<i64>"
    size = list(shape)
    if dyn:
        for i, d in enumerate(shape):
            lines.append("%%d%d = arith.constant %d : index" % (i, d))
            operands += ", %%d%d" % i
            otypes += ", index"
        size = [-1] * len(shape)
    lines.append("%%r = kt.%s %s {size = [%s], dtype = %s} : (%s) -> %s" %
                 (op, operands, ", ".join(map(str, size)), elem, otypes, t))
    lines.append("return %r : " + t)
    return func_text("main", [], [t], lines)


# Exact values (to the dtype's rounding) against the reference.
for op, fn in [("rand", uniform_ref), ("randn", normal_ref)]:
    for elem in ["f32", "f64", "f16", "bf16"]:
        for seed, shape, dyn in [(0, (3, 5), False), (42, (7,), True), (-1, (2, 3, 4), False),
                                 (2**40 + 7, (), False), (5, (0, 3), True)]:
            n = int(np.prod(shape))
            exp = round_to(fn(seed, n, elem).reshape(shape), elem)
            # the reference is computed in double like the kernel; allow 1 ulp of libm
            rtol = {"f64": 1e-13, "f32": 0, "f16": 0, "bf16": 0}[elem]
            s.check("%s %s seed=%d %s" % (op, elem, seed, shape), run_random(op, seed, shape, elem, dyn),
                    [], exp.astype(np.float32) if elem == "bf16" else exp, rtol=rtol,
                    atol=1e-300 if elem == "f64" else 0)

# Statistics, reproducibility, seed sensitivity.
N = 1 << 17
for elem in ["f32", "f64"]:
    from kiln_testing import run
    a = run(run_random("rand", 123, (N,), elem), [])[0].astype(np.float64)
    b = run(run_random("rand", 123, (N,), elem), [])[0].astype(np.float64)
    c = run(run_random("rand", 124, (N,), elem), [])[0].astype(np.float64)
    s.record("rand %s range" % elem, a.min() >= 0 and a.max() < 1, "min %g max %g" % (a.min(), a.max()))
    s.record("rand %s mean" % elem, abs(a.mean() - 0.5) < 0.005, "mean %g" % a.mean())
    s.record("rand %s std" % elem, abs(a.std() - (1 / 12) ** 0.5) < 0.005, "std %g" % a.std())
    s.record("rand %s reproducible" % elem, np.array_equal(a, b))
    s.record("rand %s seeds differ" % elem, (a != c).mean() > 0.99)
    z = run(run_random("randn", 7, (N,), elem), [])[0].astype(np.float64)
    z2 = run(run_random("randn", 8, (N,), elem), [])[0].astype(np.float64)
    s.record("randn %s mean" % elem, abs(z.mean()) < 0.01, "mean %g" % z.mean())
    s.record("randn %s std" % elem, abs(z.std() - 1) < 0.01, "std %g" % z.std())
    s.record("randn %s tails" % elem, abs((np.abs(z) > 1.96).mean() - 0.05) < 0.003)
    s.record("randn %s finite" % elem, np.isfinite(z).all())
    s.record("randn %s seeds differ" % elem, (z != z2).mean() > 0.99)


# kt.dropout
def dropout_mlir(shape, elem, seed, p=None, train=None):
    t = ttype(shape, elem)
    attrs = []
    if p is not None:
        attrs.append("p = %r" % p)
    if train is not None:
        attrs.append("train = %s" % ("true" if train else "false"))
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    return func_text("main", [t], [t], [
        "%%s = kt.constant {value = dense<%d> : tensor<i64>} : () -> tensor<i64>" % seed,
        "%%r = kt.dropout %%arg0, %%s%s : (%s, tensor<i64>) -> %s" % (attr, t, t),
        "return %r : " + t])


for elem in ["f32", "f64", "f16", "bf16"]:
    for p in [None, 0.0, 0.2, 0.9, 1.0]:
        pv = 0.5 if p is None else p
        shape = (4, 33)
        x = s.randn(*shape, dtype=np.float64)
        x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
        xe = round_to(x, elem)
        u = uniform_ref(9, x.size, elem).reshape(shape)
        keep = u >= pv
        scale = 1 / (1 - pv) if pv < 1 else 0.0
        with np.errstate(invalid="ignore"):
            exp = xe.astype(np.float64) * np.where(keep, scale, 0.0)
        s.check("dropout %s p=%s" % (elem, p), dropout_mlir(shape, elem, 9, p), [xe.astype(np.float32) if elem == "bf16" else xe],
                exp, elem=elem)
    x = round_to(s.randn(3, 4, dtype=np.float64), elem)
    xi = x.astype(np.float32) if elem == "bf16" else x
    s.check("dropout %s eval" % elem, dropout_mlir((3, 4), elem, 1, 0.7, False), [xi], xi, rtol=0, atol=0)
# keep fraction and scaling on many elements
x = np.ones((N,), np.float32)
for p in [0.1, 0.5, 0.8]:
    r = run(dropout_mlir((N,), "f32", 77, p), [x])[0]
    kept = r != 0
    s.record("dropout keep fraction p=%g" % p, abs(kept.mean() - (1 - p)) < 0.005, "kept %g" % kept.mean())
    s.record("dropout scale p=%g" % p, np.allclose(r[kept], 1 / (1 - p), rtol=1e-6))
    s.record("dropout mean p=%g" % p, abs(r.mean() - 1) < 0.02, "mean %g" % r.mean())
s.finish()
