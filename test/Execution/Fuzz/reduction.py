# RUN: %python %s
# REQUIRES: numpy, torch
# Differential fuzzing of the kt reductions against torch 1.13: random
# shapes (rank 0-4, empty dims), dim lists (negative, several, absent,
# empty), keepdim, correction, every allowed dtype, NaN/inf/ties, static and
# dynamic types. Float sums/means are compared with torch in float64 rounded
# to the dtype, within the rounding bound of a float accumulation
# (n * eps * sum|x|); everything else (max/min/arg*/all/any/integer sums)
# exactly.

import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import numpy as np
import torch
from fuzzlib import Fuzz, T, TN, TD, R, FLOATS, INTS, NUMERIC, ALL, cast_np

F = Fuzz(__file__, seed=77)
rng = F.rng
EPS = {"f32": 2.0**-23, "f64": 2.0**-52, "f16": 2.0**-10, "bf16": 2.0**-7}


def dims_for(rank):
    """(kiln attr text fragment or None, torch dim tuple)."""
    r = max(rank, 1)
    choice = rng.random()
    if choice < 0.2:
        return None, tuple(range(rank))
    if choice < 0.3:
        return "dim = []", tuple(range(rank))
    k = int(rng.integers(1, r + 1))
    ds = list(rng.permutation(r)[:k]) if rank else [0]
    ds = [int(d) - (r if rng.random() < 0.5 else 0) for d in ds]
    return "dim = [%s]" % ", ".join(map(str, ds)), tuple(d % r for d in ds) if rank else ()


def attrs_of(*parts):
    return ", ".join(p for p in parts if p)


def reduce_seq(t, dims, keepdim, fn):
    """Applies a one-dim torch reduction over several dims."""
    for d in sorted(dims, reverse=True):
        t = fn(t, d, True)
    if not keepdim:
        for d in sorted(dims, reverse=True):
            t = t.squeeze(d)
    return t


for op in ["kt.sum", "kt.mean", "kt.prod", "kt.amax", "kt.amin", "kt.logsumexp", "kt.all",
           "kt.any", "kt.var"]:
    elems = {"kt.sum": ALL, "kt.prod": ALL, "kt.amax": ALL, "kt.amin": ALL,
             "kt.all": ALL, "kt.any": ALL}.get(op, FLOATS)
    for it in range(14):
        e = elems[it % len(elems)]
        shape = F.shape()
        dtext, dims = dims_for(len(shape))
        keepdim = bool(rng.random() < 0.4)
        ktext = "keepdim = true" if keepdim else ("keepdim = false" if rng.random() < 0.3 else None)
        reduced_n = int(np.prod([shape[d] for d in dims])) if shape else 1
        if op in ("kt.amax", "kt.amin") and reduced_n == 0:
            x = F.values(shape, e)
            rshape = [1 if (d in dims) else s for d, s in enumerate(shape)] if keepdim else \
                [s for d, s in enumerate(shape) if d not in dims]
            from fuzzlib import ttype
            F.expect_error("%s empty %s %s" % (op, shape, dtext), op, [(x, e)], ttype(rshape, e),
                           attrs=attrs_of(dtext, ktext))
            continue
        sp = 0.1 if op in ("kt.sum", "kt.mean", "kt.var", "kt.prod") else 0.3
        x = F.values(shape, e, special=sp, scale=1.0)
        if op == "kt.prod" and e in INTS:
            x = F.values(shape, e, special=0.05, lo=-3, hi=3)
        t = TN(x, e)
        t64 = t.double() if e in FLOATS else t
        mode, rtol, atol = "exact", None, None
        extra = None
        if op == "kt.sum":
            ref = torch.sum(t64, dim=dims, keepdim=keepdim) if shape else t64.sum()
            if keepdim and not shape:
                ref = ref.reshape(())
            out = e if e in FLOATS else "i64"
            ref = R(ref, out) if e in FLOATS else ref.to(torch.int64).numpy()
        elif op == "kt.mean":
            ref = R(torch.mean(t64, dim=dims, keepdim=keepdim), e)
            out = e
        elif op == "kt.prod":
            ref = reduce_seq(t64 if e in FLOATS else t.to(torch.int64), dims, keepdim,
                             lambda a, d, k: torch.prod(a, d, keepdim=k))
            out = e if e in FLOATS else "i64"
            ref = R(ref, out)
        elif op in ("kt.amax", "kt.amin"):
            fn = torch.amax if op == "kt.amax" else torch.amin
            tt = t.to(torch.uint8) if e == "i1" else t
            ref = fn(tt, dim=dims, keepdim=keepdim).to(TD[e])
            out = e
            ref = R(ref, e)
        elif op == "kt.logsumexp":
            ref = R(torch.logsumexp(t64, dim=dims, keepdim=keepdim), e)
            out = e
            mode = "close"
        elif op in ("kt.all", "kt.any"):
            b = t != 0
            ref = reduce_seq(b, dims, keepdim,
                             (lambda a, d, k: torch.all(a, d, keepdim=k)) if op == "kt.all"
                             else (lambda a, d, k: torch.any(a, d, keepdim=k))).numpy()
            out = "i1"
        elif op == "kt.var":
            corr = int(rng.choice([0, 1, 1, 2, 5]))
            extra = "correction = %s" % float(corr) if (corr != 1 or rng.random() < 0.5) else None
            ref = R(torch.var(t64, dim=dims, correction=corr, keepdim=keepdim), e)
            out = e
            mode = "close"
        if op in ("kt.sum", "kt.mean", "kt.prod", "kt.var") and e in FLOATS:
            mode = "close"
            if op in ("kt.sum", "kt.mean"):
                s = torch.sum(t64.abs(), dim=dims, keepdim=keepdim) if shape else t64.abs()
                n = max(reduced_n, 1)
                atol_arr = (4 * n * EPS[e] * s).numpy()
                atol = float(np.nanmax(np.where(np.isfinite(atol_arr), atol_arr, 0), initial=0))
                if op == "kt.mean":
                    atol /= n
                rtol = 2 * EPS[e]
            else:
                rtol, atol = 64 * EPS[e], 1e-30
        F.case("%s %s %s %s keepdim=%s %s" % (op, e, shape, dtext, keepdim, extra or ""), op,
               [(x, e)], ref, out, attrs=attrs_of(dtext, ktext, extra), mode=mode, rtol=rtol,
               atol=atol)

# argmax / argmin: ties, NaN, with and without dim
for op in ["kt.argmax", "kt.argmin"]:
    for it in range(24):
        e = NUMERIC[it % len(NUMERIC)]
        shape = F.shape(nonempty=True)
        x = F.values(shape, e, special=0.3, scale=1.0)
        if e in FLOATS:
            x = cast_np(np.round(x.astype(np.float64)), e)  # ties
        t = TN(x, e)
        keepdim = bool(rng.random() < 0.4)
        fn = torch.argmax if op == "kt.argmax" else torch.argmin
        if rng.random() < 0.3:
            dtext = None
            ref = fn(t)
            if keepdim:
                ref = ref.reshape([1] * len(shape))
        else:
            r = max(len(shape), 1)
            d = int(rng.integers(-r, r))
            dtext = "dim = %d" % d
            ref = fn(t, dim=d, keepdim=keepdim)
        F.case("%s %s %s %s keepdim=%s" % (op, e, shape, dtext, keepdim), op, [(x, e)],
               ref.numpy(), "i64", attrs=attrs_of(dtext, "keepdim = true" if keepdim else None))

# sums that overflow / wrap, i1 sums, f16 sum that overflows the f16 range
x = np.array([2**62, 2**62, 2**62, 5], dtype=np.int64)
F.case("kt.sum wrap i64", "kt.sum", [(x, "i64")], np.array(torch.tensor(x).sum().item()), "i64")
x = np.full((3, 40000), 2**31 - 1, dtype=np.int32)
F.case("kt.sum i32 to i64", "kt.sum", [(x, "i32")], torch.from_numpy(x).sum(1).numpy(), "i64",
       attrs="dim = [1]")
x = np.full((8,), 30000.0, dtype=np.float16)
F.case("kt.sum f16 overflow", "kt.sum", [(x, "f16")], R(torch.from_numpy(x).float().sum(), "f16"),
       "f16", mode="exact")
x = np.full((8,), 30000.0, dtype=np.float16)
F.case("kt.mean f16 big", "kt.mean", [(x, "f16")], R(torch.from_numpy(x).float().mean(), "f16"),
       "f16", mode="exact")
x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.inf, -np.inf], [np.nan, np.inf]], dtype=np.float32)
F.case("kt.logsumexp inf", "kt.logsumexp", [(x, "f32")],
       torch.logsumexp(torch.from_numpy(x), 1).numpy(), "f32", attrs="dim = [1]")
x = np.array([[1e30, 1e30], [3.0, 3.0], [-1e30, 0.0]], dtype=np.float32)
F.case("kt.var big", "kt.var", [(x, "f32")], R(torch.var(torch.from_numpy(x).double(), 1), "f32"),
       "f32", attrs="dim = [1]")
x = np.array([[2.0], [np.inf]], dtype=np.float64)
F.case("kt.var N=1", "kt.var", [(x, "f64")], torch.var(torch.from_numpy(x), 1).numpy(), "f64",
       attrs="dim = [1]")
F.case("kt.var N=1 c=0", "kt.var", [(x, "f64")], torch.var(torch.from_numpy(x), 1, correction=0).numpy(),
       "f64", attrs="dim = [1], correction = 0.0")

F.finish()
