# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.scaled_dot_product_attention against an explicit float64 reference
# (torch 1.13 has no F.scaled_dot_product_attention; this is PyTorch 2's
# math definition): batch broadcasting, scale, is_causal (tril of ones(L, S),
# top-left aligned, L != S), bool and float masks (broadcast), fully masked
# rows (NaN), every float dtype, dynamic dims and run-time errors.

import numpy as np
import torch
from kiln_testing import Suite, ttype, to_bf16, single_op_module, func_text

s = Suite(__file__, cpu=True)


def T(x):
    x = np.asarray(x)
    return torch.from_numpy(x if x.dtype == np.bool_ else x.astype(np.float64))


def ref(q, k, v, mask=None, causal=False, scale=None):
    q, k, v = T(q), T(k), T(v)
    L, S = q.shape[-2], k.shape[-2]
    sc = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    bias = torch.zeros(L, S, dtype=torch.float64)
    if causal:
        keep = torch.ones(L, S, dtype=torch.bool).tril(0)
        bias = bias.masked_fill(~keep, float("-inf"))
    if mask is not None:
        m = T(mask)
        if m.dtype == torch.bool:
            bias = bias.masked_fill(~m, float("-inf"))
        else:
            bias = m + bias
    w = torch.matmul(q, k.transpose(-2, -1)) * sc + bias
    return torch.matmul(torch.softmax(w, -1), v).numpy()


def cast(x, elem):
    return {"f16": lambda a: a.astype(np.float16), "bf16": to_bf16,
            "f64": lambda a: a.astype(np.float64),
            "f32": lambda a: a.astype(np.float32)}[elem](x)


def check(qs, ks, vs, elem="f32", mask=None, causal=False, scale=None,
          **kw):
    q, k, v = (cast(s.randn(*sh), elem) for sh in (qs, ks, vs))
    ins = [q, k, v]
    elems = [elem] * 3
    if mask is not None:
        if mask.dtype != np.bool_:
            mask = cast(mask, elem)
        ins.append(mask)
        elems.append("i1" if mask.dtype == np.bool_ else elem)
    attrs = []
    if causal:
        attrs.append("is_causal = true")
    if scale is not None:
        attrs.append("scale = %r" % scale)
    exp = ref(q, k, v, mask, causal, scale)
    label = "sdpa %s q%s k%s v%s mask=%s causal=%s scale=%s" % (
        elem, qs, ks, vs, None if mask is None else (mask.dtype, mask.shape),
        causal, scale)
    s.check_op("kt.scaled_dot_product_attention", ins, exp,
               [ttype(exp.shape, elem)], attrs=", ".join(attrs), elems=elems,
               label=label, elem=elem if elem == "bf16" else None, **kw)
    return exp


for elem in ["f32", "f64"]:
    check((4, 8), (6, 8), (6, 5), elem)
    check((2, 4, 8), (2, 6, 8), (2, 6, 3), elem)
    check((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 4), elem, scale=0.7)
    # batch broadcasting (incl. different ranks)
    check((3, 1, 4, 8), (2, 6, 8), (1, 6, 5), elem)
    check((4, 8), (2, 6, 8), (6, 5), elem)
    # causal: L < S, L > S, L == S (top-left aligned tril)
    check((2, 3, 4), (2, 5, 4), (2, 5, 2), elem, causal=True)
    check((5, 4), (3, 4), (3, 2), elem, causal=True)
    check((2, 4, 4), (2, 4, 4), (2, 4, 4), elem, causal=True, scale=2.0)
    # bool masks (broadcast), float masks (broadcast, adds a batch dim)
    check((2, 4, 8), (2, 6, 8), (2, 6, 5), elem,
          mask=s.rng.random((4, 6)) > 0.3)
    check((2, 4, 8), (2, 6, 8), (2, 6, 5), elem,
          mask=s.rng.random((2, 1, 6)) > 0.3)
    check((4, 8), (6, 8), (6, 5), elem, mask=s.randn(4, 6))
    check((4, 8), (6, 8), (6, 5), elem, mask=s.randn(3, 1, 6))
    check((2, 4, 8), (2, 6, 8), (2, 6, 5), elem, mask=s.randn(6), scale=0.1)
check((2, 4, 8), (2, 6, 8), (2, 6, 5), "f16", rtol=5e-3, atol=5e-3)
check((4, 8), (6, 8), (6, 5), "f16", causal=True, rtol=5e-3, atol=5e-3)
check((2, 4, 8), (2, 6, 8), (2, 6, 5), "bf16", rtol=3e-2, atol=3e-2)
check((4, 8), (6, 8), (6, 5), "bf16", mask=s.randn(4, 6), rtol=3e-2, atol=3e-2)

# fully masked rows give NaN; -inf in a float mask; large scores
m = np.ones((4, 6), np.bool_)
m[1] = False
exp = check((4, 8), (6, 8), (6, 5), "f32", mask=m)
assert np.isnan(exp[1]).all() and not np.isnan(exp[0]).any()
fm = np.zeros((4, 6), np.float32)
fm[2, :] = -np.inf
fm[0, 1:] = -np.inf
check((4, 8), (6, 8), (6, 5), "f32", mask=fm)
check((4, 8), (6, 8), (6, 5), "f64", scale=300.0)
# empty S: the result is zeros
check((4, 8), (0, 8), (0, 5), "f32")

# dynamic dims and run-time errors
q, k, v = s.randn(2, 4, 8), s.randn(2, 6, 8), s.randn(2, 6, 5)
dyn = "tensor<?x?x?xf32>"
mlir = func_text("main", [dyn] * 3, [dyn], [
    "%%r = kt.scaled_dot_product_attention %%arg0, %%arg1, %%arg2 {is_causal = true} : (%s, %s, %s) -> %s"
    % (dyn, dyn, dyn, dyn), "return %%r : %s" % dyn])
s.check("sdpa dynamic", mlir, [q, k, v], ref(q, k, v, causal=True))
s.check_error("sdpa dynamic E mismatch", mlir, [q, s.randn(2, 6, 7), v],
              "embedding dims differ")
s.check_error("sdpa dynamic S mismatch", mlir, [q, k, s.randn(2, 5, 5)],
              "sequence lengths differ")
s.check_error("sdpa dynamic batch mismatch", mlir, [q, s.randn(3, 6, 8), v],
              "not broadcast-compatible")
s.finish()
