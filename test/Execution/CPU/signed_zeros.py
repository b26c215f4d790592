# RUN: %python %s
# REQUIRES: numpy, torch
# Signed zeros and NaN (docs/dialects/kt.md rule 7) on the interpreter and
# the CPU backend, bit-exact in the sign: pointwise functions against
# PyTorch (erf(-0.0) = -0.0, so 1 / erf(-0.0) = -inf; tanh, sin, expm1,
# log1p, sqrt, rsqrt, reciprocal, abs, neg, sign, relu, silu, gelu, floor,
# ceil, round of -0.0 and -0.5); clamp against PyTorch (a bound equal to the
# element leaves it; NaN bounds); maximum, minimum, amax, amin and
# max_pool2d against an independent NumPy model of IEEE 754-2019
# maximum/minimum (-0.0 < +0.0, NaN propagates), with PyTorch on the
# elements where it is consistent. f32, f64 and f16; sizes with a vector
# part and a tail.
import os, sys
import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import KilnRunError, run, ttype

torch.set_num_threads(1)
passed = failed = 0
BACKENDS = [("interpreter", []), ("cpu", ["--backend=cpu"])]
NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
TDT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}


def record(label, ok, msg=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: %s" % (label, msg))
        sys.stdout.flush()


def same_bits(got, want, rtol):
    """NaN where NaN; zeros and infinities equal with the same sign; other
    values close. Returns the first mismatching index or None."""
    got = np.asarray(got, np.float64).ravel()
    want = np.asarray(want, np.float64).ravel()
    for i, (g, w) in enumerate(zip(got, want)):
        if np.isnan(w):
            ok = np.isnan(g)
        elif w == 0 or np.isinf(w):
            ok = g == w and np.signbit(g) == np.signbit(w)
        else:
            ok = abs(g - w) <= rtol * abs(w)
        if not ok:
            return i
    return None if got.shape == want.shape else -1


def check_module(label, mlir, inputs, wants, rtol):
    """Runs @main on both backends; result k must match wants[k] (a label,
    the expected array) bit-exactly in sign (same_bits)."""
    for name, args in BACKENDS:
        try:
            got = run(mlir, inputs, extra_args=args)
        except KilnRunError as e:
            record("%s [%s]" % (label, name), False, str(e))
            continue
        for (what, want), g in zip(wants, got):
            i = same_bits(g, want, rtol)
            record("%s %s [%s]" % (label, what, name), i is None,
                   "" if i is None else "element %d: got %r, want %r (input %r)" % (
                       i, np.ravel(g)[i], np.ravel(want)[i],
                       [np.ravel(x)[i] if np.size(x) == np.size(g) else "" for x in inputs]))


def func(arg_types, lines, results):
    sig = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(arg_types))
    res = ", ".join(t for _, t in results)
    rets = ", ".join(v for v, _ in results)
    return "func.func @main(%s) -> (%s) {\n%s\n  return %s : %s\n}\n" % (
        sig, res, "\n".join("  " + l for l in lines), rets, res)


SPECIAL = [-0.0, 0.0, np.nan, -0.5, 0.5, -1.5, 2.5, -0.3, -1e-30, 1e-30, -np.inf, np.inf,
           -2.0, 0.75]


def gelu_ref(t, approximate):
    # x * Phi(x): -0.0 for -0.0 in both forms (PyTorch 1.13's CPU kernel
    # gives +0.0 without approximation: kt.md, kt.gelu).
    r = F.gelu(t, approximate=approximate)
    return torch.where(t == 0, t, r)


UNARY = [("erf", torch.erf), ("tanh", torch.tanh), ("sin", torch.sin), ("expm1", torch.expm1),
         ("log1p", torch.log1p), ("sqrt", torch.sqrt), ("rsqrt", torch.rsqrt),
         ("reciprocal", torch.reciprocal), ("abs", torch.abs), ("neg", torch.neg),
         ("sign", torch.sign), ("relu", torch.relu), ("silu", F.silu),
         ("gelu", lambda t: gelu_ref(t, "none")), ("floor", torch.floor), ("ceil", torch.ceil),
         ("round", torch.round), ("sigmoid", torch.sigmoid), ("exp", torch.exp)]

for elem in ("f32", "f64", "f16"):
    rtol = {"f32": 2e-5, "f64": 1e-12, "f16": 2e-3}[elem]
    # 3 x 14 = 42 elements: vectors and a masked tail on the CPU backend.
    x = np.array(SPECIAL * 3, NP[elem])
    T = ttype(x.shape, elem)
    lines, results, wants = [], [], []
    xt = torch.from_numpy(x.astype(np.float64)).to(TDT[elem])
    for k, (op, fn) in enumerate(UNARY):
        lines.append("%%u%d = kt.%s %%a0 : (%s) -> %s" % (k, op, T, T))
        results.append(("%%u%d" % k, T))
        want = fn(xt if elem != "f16" else xt.float()).to(torch.float64).numpy()
        if elem == "f16":
            want = want.astype(np.float16).astype(np.float64)
        wants.append((op, want))
    # gelu with tanh, and 1 / erf(x): the sign of erf(-0.0) as an infinity.
    lines.append("%%g = kt.gelu %%a0 {approximate = #kt.approximate<tanh>} : (%s) -> %s" % (T, T))
    results.append(("%g", T))
    wants.append(("gelu tanh", gelu_ref(xt.double(), "tanh").numpy()))
    lines.append("%%e = kt.erf %%a0 : (%s) -> %s" % (T, T))
    lines.append("%%r = kt.reciprocal %%e : (%s) -> %s" % (T, T))
    results.append(("%r", T))
    wants.append(("1 / erf", torch.reciprocal(torch.erf(xt.double())).numpy()))
    check_module("%s unary" % elem, func([T], lines, results), [x], wants, rtol)

    # maximum / minimum: every pair of (-0, +0, NaN, 1, -1), in a 2 x 40 layout.
    vals = [-0.0, 0.0, np.nan, 1.0, -1.0]
    pairs = [(p, q) for p in vals for q in vals]
    a = np.array([p for p, _ in pairs] * 2, NP[elem])
    b = np.array([q for _, q in pairs] * 2, NP[elem])
    T = ttype(a.shape, elem)

    def ieee(p, q, mx):
        if np.isnan(p) or np.isnan(q):
            return np.nan
        if p == q:
            return p if np.signbit(p) != mx else q
        return max(p, q) if mx else min(p, q)
    want_max = np.array([ieee(p, q, True) for p, q in zip(a, b)])
    want_min = np.array([ieee(p, q, False) for p, q in zip(a, b)])
    # PyTorch agrees wherever the operands are not two zeros.
    tmax = torch.maximum(torch.from_numpy(a), torch.from_numpy(b)).double().numpy()
    tie = (a == 0) & (b == 0)
    assert same_bits(want_max[~tie], tmax[~tie], 0) is None
    mm = func([T, T], ["%%mx = kt.maximum %%a0, %%a1 : (%s, %s) -> %s" % (T, T, T),
                       "%%mn = kt.minimum %%a0, %%a1 : (%s, %s) -> %s" % (T, T, T)],
              [("%mx", T), ("%mn", T)])
    check_module("%s maximum/minimum" % elem, mm, [a, b],
                 [("maximum", want_max), ("minimum", want_min)], 0)

    # clamp against PyTorch: bounds of either zero, NaN bounds.
    x = np.array([-0.0, 0.0, np.nan, 1.0, -1.0, 0.5] * 7, NP[elem])
    T = ttype(x.shape, elem)
    nan = "0x7FF8000000000000 : f64"
    for lo, hi in [(0.0, None), (-0.0, None), (None, 0.0), (None, -0.0), (-0.0, 0.0),
                   (0.0, -0.0), (float("nan"), None), (None, float("nan")),
                   (0.0, float("nan")), (float("nan"), 1.0), (0.25, 0.75)]:
        attrs = []
        if hi is not None:
            attrs.append("max = %s" % (nan if np.isnan(hi) else "%r : f64" % hi))
        if lo is not None:
            attrs.append("min = %s" % (nan if np.isnan(lo) else "%r : f64" % lo))
        want = torch.clamp(torch.from_numpy(x).float(), min=lo, max=hi).double().numpy()
        m = func([T], ["%%c = kt.clamp %%a0 {%s} : (%s) -> %s" % (", ".join(attrs), T, T)],
                 [("%c", T)])
        check_module("%s clamp(min=%r, max=%r)" % (elem, lo, hi), m, [x], [("clamp", want)], 0)

    # amax / amin over all dims and over dim 1: the result must not depend on
    # where -0.0 and +0.0 sit.
    for pat in ([-0.0, 0.0], [0.0, -0.0], [-0.0, -0.0], [0.0, 0.0], [-0.0, np.nan]):
        x = np.array(pat * 24, NP[elem]).reshape(2, 24)
        T = ttype(x.shape, elem)
        R = ttype((2,), elem)
        S = ttype((), elem)

        def red(v, mx):
            v = list(np.ravel(v))
            r = v[0]
            for e in v[1:]:
                r = ieee(r, e, mx)
            return r
        m = func([T], ["%%x = kt.amax %%a0 : (%s) -> %s" % (T, S),
                       "%%n = kt.amin %%a0 : (%s) -> %s" % (T, S),
                       "%%xr = kt.amax %%a0 {dim = [1]} : (%s) -> %s" % (T, R),
                       "%%nr = kt.amin %%a0 {dim = [1]} : (%s) -> %s" % (T, R)],
                 [("%x", S), ("%n", S), ("%xr", R), ("%nr", R)])
        check_module("%s amax/amin of %s" % (elem, pat), m, [x],
                     [("amax", np.array(red(x, True))), ("amin", np.array(red(x, False))),
                      ("amax dim 1", np.array([red(r, True) for r in x])),
                      ("amin dim 1", np.array([red(r, False) for r in x]))], 0)

    # max_pool2d over windows of two zeros in either order (and a NaN).
    x = np.array([-0.0, 0.0, 0.0, -0.0, -0.0, -0.0, np.nan, 0.0] * 5, NP[elem]).reshape(1, 1, 1, 40)
    want = np.array([red(x.ravel()[i:i + 2], True) for i in range(0, 40, 2)]).reshape(1, 1, 1, 20)
    T, R = ttype(x.shape, elem), ttype(want.shape, elem)
    m = func([T], ["%%p = kt.max_pool2d %%a0 {kernel_size = [1, 2]} : (%s) -> %s" % (T, R)],
             [("%p", R)])
    check_module("%s max_pool2d" % elem, m, [x], [("max_pool2d", want)], 0)

print("signed_zeros.py: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or not passed else 0)
