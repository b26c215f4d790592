# RUN: %python %s
# REQUIRES: numpy
# kt.rand, kt.randn and kt.dropout through the CPU backend: the results must
# be BIT-IDENTICAL to the interpreter's (same Philox4x32-10 counter layout,
# same f64 conversions and roundings, same libm log/cos/sqrt), and equal to
# the independent NumPy implementation of the contract (test/lib/philox_ref.py;
# exact for f32/f16/bf16, 1e-13 relative for f64 where NumPy's log/cos may
# differ from libm by an ulp). Odd and dynamic sizes, seeds above 2^32 and
# negative, NaN/inf through dropout.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import KilnRunError, run, ttype, func_text
from philox_ref import uniform_ref, normal_ref, round_to

s = CPUSuite(__file__)


def round_via_f32(x, elem):
    """Rounds f64 values to `elem` as the interpreter stores them: f16 and
    bf16 through f32 (two roundings)."""
    x = np.asarray(x, np.float64)
    return x if elem == "f64" else round_to(x.astype(np.float32), elem)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.dtype, a.shape, a.view(np.uint8).tobytes()


def check_exact(label, mlir, inputs, ref=None, rtol=0.0):
    try:
        want = run(mlir, inputs)
        got = run(mlir, inputs, extra_args=["--backend=cpu"])
    except KilnRunError as e:
        s.record(label, False, str(e))
        return
    same = bits(got[0]) == bits(want[0])
    msg = ""
    if not same:
        g, w = got[0].astype(np.float64), want[0].astype(np.float64)
        bad = np.argwhere(~((g == w) | (np.isnan(g) & np.isnan(w))))
        msg = "%d elements differ from the interpreter, first at %s: %r vs %r" % (
            len(bad), tuple(bad[0]), g[tuple(bad[0])], w[tuple(bad[0])]) if len(bad) else "bytes differ"
    s.record(label + " == interpreter", same, msg)
    if ref is not None:
        g = got[0].astype(np.float64)
        r = np.asarray(ref, dtype=np.float64)
        ok = g.shape == r.shape and np.allclose(g, r, rtol=rtol, atol=0, equal_nan=True)
        s.record(label + " == numpy", ok, "" if ok else "differs from the NumPy reference")


def random_mlir(op, seed, shape, elem, dyn):
    t = ttype([-1 if dyn else d for d in shape], elem)
    args, operands, otypes = ["tensor<i64>"], "%arg0", "tensor<i64>"
    lines = []
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
    return func_text("main", args, [t], lines)


for op, fn in [("rand", uniform_ref), ("randn", normal_ref)]:
    for elem in ["f32", "f64", "f16", "bf16"]:
        for seed, shape, dyn in [(0, (3, 5), False), (42, (7,), True),
                                 (-1, (2, 3, 4), False), (2**40 + 7, (), False),
                                 (5, (0, 3), True), (-987654321012, (13, 1, 17), True)]:
            n = int(np.prod(shape))
            ref = round_via_f32(fn(seed, n, elem).reshape(shape), elem)
            check_exact("%s %s seed=%d %s%s" % (op, elem, seed, shape, " dyn" if dyn else ""),
                        random_mlir(op, seed, shape, elem, dyn), [np.array(seed, np.int64)],
                        ref, rtol=1e-13 if elem == "f64" else 0.0)

# Many elements (a tiled/vectorized loop must not change the numbers).
for op in ["rand", "randn"]:
    for elem in ["f32", "f64"]:
        check_exact("%s %s 1<<16" % (op, elem), random_mlir(op, 99, (1 << 16,), elem, False),
                    [np.array(99, np.int64)])


def dropout_mlir(t, p, train=True):
    return func_text("main", [t, "tensor<i64>"], [t], [
        "%%r = kt.dropout %%arg0, %%arg1 {p = %r, train = %s} : (%s, tensor<i64>) -> %s"
        % (p, "true" if train else "false", t, t),
        "return %r : " + t])


for elem in ["f32", "f64", "f16", "bf16"]:
    for p in [0.0, 0.2, 0.5, 0.9, 1.0]:
        shape = (4, 33)
        x = s.randn(*shape, dtype=np.float64)
        x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
        xe = round_to(x, elem)
        u = uniform_ref(9, x.size, elem).reshape(shape)
        scale = 1 / (1 - p) if p < 1 else 0.0
        with np.errstate(invalid="ignore"):
            ref = round_via_f32(xe.astype(np.float64) * np.where(u >= p, scale, 0.0), elem)
        xin = xe.astype(np.float32) if elem == "bf16" else xe
        check_exact("dropout %s p=%g" % (elem, p), dropout_mlir(ttype(shape, elem), p),
                    [xin, np.array(9, np.int64)], ref)
    x = round_to(s.randn(5, 7, dtype=np.float64), elem)
    xin = x.astype(np.float32) if elem == "bf16" else x
    check_exact("dropout %s dynamic" % elem, dropout_mlir(ttype((-1, 7), elem), 0.3),
                [xin, np.array(3, np.int64)])
    check_exact("dropout %s eval" % elem, dropout_mlir(ttype((5, 7), elem), 0.3, False),
                [xin, np.array(3, np.int64)], xin)
s.finish()
