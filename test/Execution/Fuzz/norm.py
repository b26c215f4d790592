# RUN: %python %s
# REQUIRES: numpy, torch
# Differential fuzzing of kt.softmax, kt.log_softmax, kt.layer_norm,
# kt.batch_norm, kt.nll_loss, kt.cross_entropy, kt.scaled_dot_product_attention
# and kt.dropout (p = 0 / 1 / eval) against torch 1.13: random shapes and
# dims, -inf rows and NaN, weights, ignore_index (in and out of range),
# label_smoothing, reductions, probability targets, bool/float masks,
# is_causal with L != S, scale; static and dynamic types. References: torch
# in float64 rounded to the dtype (these ops accumulate), within a few ulps.

import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import math
import numpy as np
import torch
import torch.nn.functional as Fn
from fuzzlib import Fuzz, T, TN, TD, R, FLOATS, INTS, NUMERIC, ALL, cast_np, ttype

F = Fuzz(__file__, seed=31337)
rng = F.rng
EPS = {"f32": 2.0**-23, "f64": 2.0**-52, "f16": 2.0**-10, "bf16": 2.0**-7}


def t64(x):
    return torch.from_numpy(np.array(x, copy=True)).double()


def fcase(label, op, args, ref, e, attrs="", operands=None, k=16, dyn=True):
    F.case(label, op, args, R(ref, e), e, attrs=attrs, operands=operands, rtol=k * EPS[e],
           atol=k * EPS[e], dyn=dyn)


# softmax / log_softmax
for it in range(40):
    e = FLOATS[it % 4]
    s = F.shape()
    x = F.values(s, e, special=0.0, scale=3.0)
    if x.size and rng.random() < 0.5:
        flat = x.reshape(-1).astype(np.float64)
        m = rng.random(flat.size) < 0.3
        flat[m] = rng.choice([-np.inf, np.inf, np.nan, -np.inf], size=m.sum())
        x = cast_np(flat.reshape(s), e)
    r = max(len(s), 1)
    d = int(rng.integers(-r, r))
    op = "kt.softmax" if it % 2 == 0 else "kt.log_softmax"
    fn = torch.softmax if op == "kt.softmax" else torch.log_softmax
    fcase("%s %s %s %d" % (op, e, s, d), op, [(x, e)], fn(t64(x), d), e, "dim = %d" % d)
# an all -inf row and a +inf row
x = np.array([[-np.inf, -np.inf, -np.inf], [np.inf, 1.0, -np.inf], [np.inf, np.inf, 0.0],
              [1e30, -1e30, 0.0]], np.float32)
for op, fn in [("kt.softmax", torch.softmax), ("kt.log_softmax", torch.log_softmax)]:
    fcase(op + " inf rows", op, [(x, "f32")], fn(torch.from_numpy(x), 1), "f32", "dim = 1")

# layer_norm
for it in range(24):
    e = FLOATS[it % 4]
    s = F.shape(lo=1)
    k = int(rng.integers(1, len(s) + 1))
    ns = list(s[len(s) - k:])
    x = F.values(s, e, special=0.02, scale=2.0)
    eps = float(rng.choice([1e-5, 1e-3, 0.5]))
    args = [(x, e)]
    opnd = "{0}"
    w = b = None
    if rng.random() < 0.6:
        w = F.values(tuple(ns), e, special=0.0)
        args.append((w, e))
        opnd += " weight {%d}" % (len(args) - 1)
    if rng.random() < 0.6:
        b = F.values(tuple(ns), e, special=0.0)
        args.append((b, e))
        opnd += " bias {%d}" % (len(args) - 1)
    ref = Fn.layer_norm(t64(x), ns, None if w is None else t64(w), None if b is None else t64(b), eps)
    fcase("kt.layer_norm %s %s %s eps=%g w=%s b=%s" % (e, s, ns, eps, w is not None, b is not None),
          "kt.layer_norm", args, ref, e, "normalized_shape = [%s], eps = %.17e : f64" % (
              ", ".join(map(str, ns)), eps), operands=opnd, k=64)

# batch_norm (inference)
for it in range(16):
    e = FLOATS[it % 4]
    s = (F.dim(), int(rng.integers(1, 4))) + F.shape(hi=2)
    C = s[1]
    x = F.values(s, e, special=0.02)
    mean = F.values((C,), e, special=0.0)
    var = cast_np(np.abs(F.values((C,), "f64", special=0.0)) + 0.1, e)
    eps = float(rng.choice([1e-5, 0.1]))
    args = [(x, e), (mean, e), (var, e)]
    opnd = "{0}, {1}, {2}"
    w = b = None
    if rng.random() < 0.5:
        w = F.values((C,), e, special=0.0)
        args.append((w, e))
        opnd += " weight {3}"
    if rng.random() < 0.5:
        b = F.values((C,), e, special=0.0)
        args.append((b, e))
        opnd += " bias {%d}" % (len(args) - 1)
    ref = Fn.batch_norm(t64(x), t64(mean), t64(var), None if w is None else t64(w),
                        None if b is None else t64(b), False, 0.1, eps)
    fcase("kt.batch_norm %s %s" % (e, s), "kt.batch_norm", args, ref, e, "eps = %.17e : f64" % eps,
          operands=opnd, k=64)

# nll_loss / cross_entropy with class indices
RED = ["none", "mean", "sum"]
for it in range(60):
    e = FLOATS[it % 4]
    ce = it % 2 == 1
    C = int(rng.integers(1, 5))
    kind = rng.random()
    if kind < 0.2:
        s, ts = (C,), ()
    else:
        N = F.dim()
        extra = F.shape(hi=2)
        s, ts = (N, C) + extra, (N,) + extra
    x = F.values(s, e, special=0.0, scale=2.0)
    if not ce:
        x = cast_np(torch.log_softmax(t64(x), 0 if len(s) == 1 else 1).numpy(), e)
    red = str(rng.choice(RED))
    ii = int(rng.choice([-100, 0, 1, -1, C + 1, 2]))
    te = str(rng.choice(INTS))
    tgt = rng.integers(0, C, size=ts).astype(np.int64)
    if tgt.size and rng.random() < 0.5:
        flat = tgt.reshape(-1)
        flat[rng.random(flat.size) < 0.3] = ii
        if not (0 <= ii < C) and ii != -100:
            pass
        tgt = flat.reshape(ts)
    attrs = []
    if red != "mean" or rng.random() < 0.3:
        attrs.append("reduction = #kt.reduction<%s>" % red)
    if ii != -100 or rng.random() < 0.3:
        attrs.append("ignore_index = %d" % ii)
    args = [(x, e), (cast_np(tgt, te), te)]
    w = None
    if rng.random() < 0.5:
        w = cast_np(rng.uniform(0.0, 2.0, size=(C,)), e)
        args.append((w, e))
    ls = 0.0
    if ce and rng.random() < 0.6:
        ls = float(rng.choice([0.1, 0.5, 1.0]))
        attrs.append("label_smoothing = %r : f64" % ls)
    tt = torch.from_numpy(tgt)
    tw = None if w is None else t64(w)
    if ce:
        ref = Fn.cross_entropy(t64(x), tt, tw, ignore_index=ii, reduction=red, label_smoothing=ls)
    else:
        ref = Fn.nll_loss(t64(x), tt, tw, ignore_index=ii, reduction=red)
    op = "kt.cross_entropy" if ce else "kt.nll_loss"
    fcase("%s %s %s red=%s ii=%d w=%s ls=%s" % (op, e, s, red, ii, w is not None, ls), op, args,
          ref, e, ", ".join(attrs), k=64)

# cross_entropy with probabilities
for it in range(16):
    e = FLOATS[it % 4]
    C = int(rng.integers(1, 5))
    s = (C,) if rng.random() < 0.2 else (F.dim(), C) + F.shape(hi=2)
    x = F.values(s, e, special=0.0, scale=2.0)
    p = cast_np(torch.softmax(t64(F.values(s, "f64", special=0.0)), 0 if len(s) == 1 else 1).numpy(), e)
    red = str(rng.choice(RED))
    attrs = ["reduction = #kt.reduction<%s>" % red]
    args = [(x, e), (p, e)]
    w = None
    if rng.random() < 0.5:
        w = cast_np(rng.uniform(0.0, 2.0, size=(C,)), e)
        args.append((w, e))
    ls = 0.0
    if rng.random() < 0.5:
        ls = float(rng.choice([0.1, 0.5]))
        attrs.append("label_smoothing = %r : f64" % ls)
    ref = Fn.cross_entropy(t64(x), t64(p), None if w is None else t64(w), reduction=red,
                           label_smoothing=ls)
    fcase("kt.cross_entropy prob %s %s red=%s w=%s ls=%s" % (e, s, red, w is not None, ls),
          "kt.cross_entropy", args, ref, e, ", ".join(attrs), k=64)


# scaled_dot_product_attention (torch 1.13 has no F.sdpa: its definition)
def sdpa(q, k, v, mask=None, causal=False, scale=None):
    L, S = q.shape[-2], k.shape[-2]
    sc = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if causal:
        bias = bias.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -math.inf)
    if mask is not None:
        bias = (torch.zeros_like(mask, dtype=q.dtype).masked_fill(~mask, -math.inf)
                if mask.dtype == torch.bool else mask) + bias
    return torch.softmax(q @ k.transpose(-2, -1) * sc + bias, -1) @ v


for it in range(30):
    e = FLOATS[it % 4]
    batch = F.shape(hi=2)
    L, S, E_, Ev = int(rng.integers(1, 5)), int(rng.integers(1, 5)), F.dim() or 1, F.dim()
    qb = batch
    kb = tuple(1 if rng.random() < 0.3 else d for d in batch)
    q = F.values(qb + (L, E_), e, special=0.0)
    k = F.values(kb + (S, E_), e, special=0.0)
    v = F.values(batch + (S, Ev), e, special=0.0)
    attrs, args, mask = [], [(q, e), (k, e), (v, e)], None
    causal = False
    mk = rng.random()
    if mk < 0.25:
        causal = True
        attrs.append("is_causal = true")
    elif mk < 0.5:
        mask = rng.random((L, S)) < 0.7
        args.append((mask, "i1"))
    elif mk < 0.65:
        mask = F.values((1, S) if rng.random() < 0.5 else (L, S), e, special=0.0)
        args.append((mask, e))
    scale = None
    if rng.random() < 0.3:
        scale = float(rng.choice([0.5, 2.0, 0.125]))
        attrs.append("scale = %r : f64" % scale)
    tm = None if mask is None else (torch.from_numpy(mask) if mask.dtype == np.bool_ else t64(mask))
    ref = sdpa(t64(q), t64(k), t64(v), tm, causal, scale)
    fcase("kt.sdpa %s q%s k%s v%s %s mask=%s" % (e, q.shape, k.shape, v.shape, attrs,
                                                None if mask is None else mask.dtype),
          "kt.scaled_dot_product_attention", args, ref, e, ", ".join(attrs), k=64)

# dropout: eval and p = 0 are the identity, p = 1 multiplies by 0 (NaN*0 = NaN)
seed = np.array(1234, dtype=np.int64)
for it in range(8):
    e = FLOATS[it % 4]
    x = F.values(F.shape(), e, special=0.3)
    p, train = [(0.5, False), (0.0, True), (1.0, True), (0.3, False)][it % 4]
    ref = Fn.dropout(TN(x, e).float(), p, train) if e in ("f16", "bf16") else Fn.dropout(TN(x, e), p, train)
    F.case("kt.dropout %s %s p=%s train=%s" % (e, x.shape, p, train), "kt.dropout",
           [(x, e), (seed, "i64")], R(ref, e), e, attrs="p = %r : f64, train = %s" % (p, str(train).lower()),
           mode="exact")

# dropout in training: every element is 0 or x / (1 - p) (own stream, so
# only the property is checked), with about a fraction p dropped
for it, (p, e) in enumerate([(0.5, "f32"), (0.25, "f64"), (0.75, "bf16"), (0.1, "f16")]):
    x = cast_np(rng.uniform(1, 2, size=(40, 50)), e)
    keep = R(T(x, e) / (1 - p), e)

    def prop(out, x=x, keep=keep, p=p, e=e):
        # kept: x * (1 / (1 - p)); torch rounds the scale to the dtype first,
        # so allow one ulp
        o = out.astype(np.float64)
        k = keep.astype(np.float64)
        ok = (o == 0) | (np.abs(o - k) <= 1.01 * EPS[e] * np.abs(k))
        if not ok.all():
            return "%d elements neither 0 nor x/(1-p)" % (~ok).sum()
        frac = (o == 0).mean()
        return None if abs(frac - p) < 0.05 else "dropped fraction %g for p=%g" % (frac, p)
    F.case("kt.dropout train p=%s %s" % (p, e), "kt.dropout", [(x, e), (seed, "i64")], keep, e,
           attrs="p = %r : f64, train = true" % p, check=prop)

F.finish()
