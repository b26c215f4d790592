# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of kt.batch_norm (inference form: input,
# weight, bias; the running statistics get none, as PyTorch refuses
# requires_grad on them with training=False), kt.batch_norm_train (through
# kt.batch_norm_backward; cotangents of save_mean / save_invstd too; a
# following relu / relu6 whose mask the rule folds into it) and
# kt.scaled_dot_product_attention (query, key, value; a float mask gets a
# gradient, a bool mask none; is_causal; scale; batch broadcasting) against
# finite differences and torch.autograd in f64; attention both expanded
# into its math ops (kiln-autodiff's default) and through its own rule
# (expand-attention=false).

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


def t64(shape):
    return ttype(shape, "f64")


def sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """torch.nn.functional.scaled_dot_product_attention's math form (the
    installed torch may predate it)."""
    if hasattr(F, "scaled_dot_product_attention"):
        kw = {} if scale is None else {"scale": scale}
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                              is_causal=is_causal, **kw)
    L, S = q.shape[-2], k.shape[-2]
    sc = 1.0 / (q.shape[-1] ** 0.5) if scale is None else scale
    s_ = q @ k.transpose(-2, -1) * sc
    if is_causal:
        attn_mask = torch.ones(L, S, dtype=torch.bool).tril()
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            s_ = s_.masked_fill(~attn_mask, float("-inf"))
        else:
            s_ = s_ + attn_mask
    return torch.softmax(s_, dim=-1) @ v


# batch_norm: rank 2..4, with and without weight/bias, eps.
for xs in [(4, 3), (2, 3, 4), (2, 3, 2, 2)]:
    for wb in [(False, False), (True, False), (False, True), (True, True)]:
        for eps in [None, 1e-3]:
            c = xs[1]
            x, m = rnd(*xs), rnd(c)
            v = np.abs(rnd(c)) + 0.5
            ins = [x, m, v]
            ops = "%arg0, %arg1, %arg2"
            k = 3
            if wb[0]:
                ins.append(rnd(c))
                ops += " weight %%arg%d" % k
                k += 1
            if wb[1]:
                ins.append(rnd(c))
                ops += " bias %%arg%d" % k
            attr = " {eps = %r : f64}" % eps if eps is not None else ""
            types = ", ".join(t64(a.shape) for a in ins)
            req = [True, False, False] + [True] * (len(ins) - 3)

            def ref(x_, m_, v_, *rest, wb=wb, eps=eps):
                w_ = rest[0] if wb[0] else None
                b_ = rest[-1] if wb[1] else None
                return F.batch_norm(x_, m_, v_, w_, b_, training=False,
                                    eps=1e-5 if eps is None else eps)
            s.gradcheck("batch_norm %s weight=%s bias=%s eps=%s" % (xs, wb[0], wb[1], eps),
                        ["%%0 = kt.batch_norm %s%s : (%s) -> %s" % (ops, attr, types, t64(xs)),
                         "return %%0 : %s" % t64(xs)],
                        ins, [t64(xs)], ref, requires=req)

# batch_norm_train: rank 2..5, N = 1 with spatial dims, with and without
# weight/bias, eps; the result alone (its backward is one
# kt.batch_norm_backward) against F.batch_norm(training=True), and the
# result with save_mean and save_invstd (cotangents on all three) against
# the same statistics written with torch primitives.
def bn_train_stats(x_, w_, b_, eps):
    dims = [0] + list(range(2, x_.dim()))
    view = [1, -1] + [1] * (x_.dim() - 2)
    mean = x_.mean(dims)
    invstd = 1 / torch.sqrt(x_.var(dims, unbiased=False) + eps)
    y = (x_ - mean.view(view)) * invstd.view(view)
    if w_ is not None:
        y = y * w_.view(view)
    if b_ is not None:
        y = y + b_.view(view)
    return y, mean, invstd


for xs, wb, eps, stats in [
        ((4, 3), (True, True), None, False),
        ((2, 3, 4), (False, False), None, False),
        ((2, 3, 2, 2), (True, False), 1e-3, False),
        ((1, 2, 3, 3), (False, True), None, False),
        ((2, 2, 2, 1, 3), (True, True), 0.1, False),
        ((3, 2, 2), (True, True), None, True),
        ((1, 3, 2, 2), (False, False), 1e-3, True)]:
    c = xs[1]
    ins = [rnd(*xs)]
    ops = "%arg0"
    if wb[0]:
        ins.append(rnd(c))
        ops += " weight %arg1"
    if wb[1]:
        ops += " bias %%arg%d" % len(ins)
        ins.append(rnd(c))
    attr = " {eps = %r : f64}" % eps if eps is not None else ""
    types = ", ".join(t64(a.shape) for a in ins)
    res = "(%s, %s, %s)" % (t64(xs), t64((c,)), t64((c,)))
    outs = [t64(xs), t64((c,)), t64((c,))] if stats else [t64(xs)]
    ret = ("return %0#0, %0#1, %0#2 : " + ", ".join(outs)) if stats else \
        "return %%0#0 : %s" % t64(xs)

    def ref(x_, *rest, wb=wb, eps=eps, stats=stats):
        w_ = rest[0] if wb[0] else None
        b_ = rest[-1] if wb[1] else None
        e = 1e-5 if eps is None else eps
        if stats:
            return bn_train_stats(x_, w_, b_, e)
        return F.batch_norm(x_, None, None, w_, b_, training=True, eps=e)
    s.gradcheck("batch_norm_train %s weight=%s bias=%s eps=%s stats=%s" % (
        xs, wb[0], wb[1], eps, stats),
        ["%%0:3 = kt.batch_norm_train %s%s : (%s) -> %s" % (ops, attr, types,
                                                           res), ret],
        ins, outs, ref)

# batch_norm_train followed by kt.relu / kt.clamp 0..6, differentiated with
# kiln-autodiff's fold-norm-activation, which folds the activation's mask
# into kt.batch_norm_backward (activation = relu /
# relu6 with the bias); odd channel counts, batch 1, a `?` batch (no finite
# differences then), weight / bias absent. Weights ~3 and biases ~2 put
# results on both sides of 0 and 6.
for xs, wb, act, dyn in [
        ((4, 3), (True, True), "relu", False),
        ((2, 17, 3), (True, True), "relu6", False),
        ((1, 5, 3, 3), (True, True), "relu6", False),
        ((3, 2, 5), (False, True), "relu", False),
        ((3, 2, 5), (True, False), "relu6", False),
        ((2, 3, 4), (False, False), "relu6", False),
        ((3, 19, 2), (True, True), "relu6", True),
        ((3, 19, 2), (True, True), "relu", True)]:
    c = xs[1]
    ins = [rnd(*xs) * 1.5]
    ops = "%arg0"
    if wb[0]:
        ins.append(rnd(c) * 3)
        ops += " weight %arg1"
    if wb[1]:
        ops += " bias %%arg%d" % len(ins)
        ins.append(rnd(c) + 2)
    xt = t64(xs)
    dxs = ("?",) + tuple(xs[1:])
    dt = "tensor<%sxf64>" % "x".join(str(d) for d in dxs)
    at = [dt] + [t64((c,))] * (len(ins) - 1) if dyn else None
    ty = dt if dyn else xt
    types = ", ".join([ty] + [t64((c,))] * (len(ins) - 1))
    line = ("%%r = kt.clamp %%0#0 {min = 0.0, max = 6.0} : (%s) -> %s" % (ty, ty)
            if act == "relu6" else "%%r = kt.relu %%0#0 : (%s) -> %s" % (ty, ty))

    def ref(x_, *rest, wb=wb, act=act):
        w_ = rest[0] if wb[0] else None
        b_ = rest[-1] if wb[1] else None
        y = F.batch_norm(x_, None, None, w_, b_, training=True)
        return F.relu6(y) if act == "relu6" else F.relu(y)
    s.gradcheck("batch_norm_train + %s %s weight=%s bias=%s dyn=%s" % (
        act, xs, wb[0], wb[1], dyn),
        ["%%0:3 = kt.batch_norm_train %s : (%s) -> (%s, %s, %s)" % (
            ops, types, ty, t64((c,)), t64((c,))), line,
         "return %%r : %s" % ty],
        ins, [ty], ref, arg_types=at,
        autodiff_options="fold-norm-activation=true")

# scaled_dot_product_attention
CASES = [
    # q, k, v shapes, mask shape/kind, is_causal, scale
    ((3, 4), (5, 4), (5, 2), None, False, None),
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), None, False, None),
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), None, False, 0.7),
    ((2, 4, 3), (2, 4, 3), (2, 4, 2), None, True, None),
    ((2, 3, 5, 3), (2, 1, 4, 3), (1, 3, 4, 2), None, True, 0.5),
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), ((3, 5), "f64"), False, None),
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), ((2, 3, 5), "f64"), False, 0.3),
    ((2, 2, 3, 4), (2, 1, 5, 4), (2, 1, 5, 3), ((1, 1, 5), "f64"), False, None),
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), ((3, 5), "i1"), False, None),
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), ((2, 1, 5), "i1"), False, 1.5),
]
for qs, ks, vs, mask, causal, scale in CASES:
    q, k, v = rnd(*qs), rnd(*ks), rnd(*vs)
    ins = [q, k, v]
    if mask is not None:
        ms, kind = mask
        if kind == "i1":
            mm = s.rng.random(ms) < 0.6
            mm[..., 0] = True  # no fully masked row (NaN)
            ins.append(mm)
        else:
            ins.append(rnd(*ms))
    attrs = []
    if causal:
        attrs.append("is_causal = true")
    if scale is not None:
        attrs.append("scale = %r : f64" % scale)
    a = (" {" + ", ".join(attrs) + "}") if attrs else ""
    out = sdpa(
        *[torch.from_numpy(np.asarray(t)) for t in ins[:3]],
        attn_mask=torch.from_numpy(ins[3]) if mask is not None else None,
        is_causal=causal, scale=scale)
    tr = t64(tuple(out.shape))
    types = ", ".join(ttype(t.shape, "i1" if t.dtype == np.bool_ else "f64") for t in ins)
    ops = ", ".join("%%arg%d" % i for i in range(len(ins)))

    def ref(q_, k_, v_, *m, causal=causal, scale=scale):
        return sdpa(q_, k_, v_, attn_mask=m[0] if m else None,
                                              is_causal=causal, scale=scale)
    # Expanded into its math ops before differentiating (kiln-autodiff's
    # default), and kept as one op with its own rule.
    for opts in ("", "expand-attention=false"):
        s.gradcheck("sdpa q%s k%s v%s mask=%s causal=%s scale=%s %s" % (qs, ks, vs, mask, causal, scale, opts or "expanded"),
                    ["%%0 = kt.scaled_dot_product_attention %s%s : (%s) -> %s" % (ops, a, types, tr),
                     "return %%0 : %s" % tr], ins, [tr], ref,
                    autodiff_options=opts)
s.finish()
