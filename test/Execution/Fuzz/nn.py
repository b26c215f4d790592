# RUN: %python %s
# REQUIRES: numpy, torch
# Differential fuzzing of kt.matmul, kt.linear, kt.conv2d, kt.max_pool2d and
# kt.avg_pool2d against torch 1.13: random rank combinations (1-D/N-D
# matmul, broadcast batches, empty dims), conv stride/padding/dilation/
# groups/unbatched input, pooling kernel/stride/padding/dilation/ceil_mode/
# count_include_pad/divisor_override, every allowed dtype, NaN/inf; static
# and dynamic types. Float references: torch in float64 rounded to the
# dtype, within the bound of a float accumulation; integers exact.

import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import numpy as np
import torch
import torch.nn.functional as Fn
from fuzzlib import Fuzz, T, TN, TD, R, FLOATS, INTS, NUMERIC, ALL, cast_np, ttype

F = Fuzz(__file__, seed=999)
rng = F.rng
EPS = {"f32": 2.0**-23, "f64": 2.0**-52, "f16": 2.0**-10, "bf16": 2.0**-7}


def arr(l):
    return "[" + ", ".join(str(int(v)) for v in l) + "]"


def fcase(label, op, args, fn, e, attrs="", operands=None, special=False):
    """Float case: reference fn on float64 tensors, tolerance from the same
    computation on |x| (the accumulation bound)."""
    t64 = [torch.from_numpy(np.array(a, copy=True)).double() for a, _ in args]
    ref = fn(*t64)
    bound = fn(*[t.abs() for t in t64]).abs()
    n = 1
    atol_arr = (bound * 8 * EPS[e]).numpy()
    fin = np.isfinite(atol_arr)
    atol = float(np.max(np.where(fin, atol_arr, 0), initial=0)) + 1e-30
    F.case(label, op, args, R(ref, e), e, attrs=attrs, operands=operands, rtol=4 * EPS[e],
           atol=atol)


# matmul
for it in range(40):
    e = NUMERIC[it % len(NUMERIC)]
    ra, rb = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    m, k, n = F.dim(), F.dim(), F.dim()
    batch = F.shape(rank=int(rng.integers(0, 3)))
    sa = (k,) if ra == 1 else tuple(batch[len(batch) - min(len(batch), ra - 2):]) + (m, k)
    sb = (k,) if rb == 1 else tuple(1 if rng.random() < 0.3 else d for d in batch[len(batch) - min(len(batch), rb - 2):]) + (k, n)
    if e in INTS:
        a, b = F.values(sa, e, lo=-50, hi=50), F.values(sb, e, lo=-50, hi=50)
        F.case("kt.matmul %s %s %s" % (e, sa, sb), "kt.matmul", [(a, e), (b, e)],
               torch.matmul(TN(a, e), TN(b, e)).numpy(), e)
    else:
        a, b = F.values(sa, e, special=0.03, scale=1.0), F.values(sb, e, special=0.03, scale=1.0)
        fcase("kt.matmul %s %s %s" % (e, sa, sb), "kt.matmul", [(a, e), (b, e)], torch.matmul, e)
# integer matmul wraps
a = np.array([[2**62, 2**62], [3, 4]], np.int64)
F.case("kt.matmul i64 wrap", "kt.matmul", [(a, "i64"), (a, "i64")],
       torch.matmul(torch.from_numpy(a), torch.from_numpy(a)).numpy(), "i64")
a = np.array([[2**30, 2**30], [3, 4]], np.int32)
F.case("kt.matmul i32 wrap", "kt.matmul", [(a, "i32"), (a, "i32")],
       torch.matmul(torch.from_numpy(a), torch.from_numpy(a)).numpy(), "i32")

# linear
for it in range(16):
    e = FLOATS[it % 4]
    s = F.shape(rank=int(rng.integers(1, 4)))
    fin, fout = s[-1], F.dim()
    x = F.values(s, e, special=0.03, scale=1.0)
    w = F.values((fout, fin), e, special=0.0, scale=1.0)
    if rng.random() < 0.5:
        b = F.values((fout,), e, special=0.0, scale=1.0)
        fcase("kt.linear %s %s %s bias" % (e, s, w.shape), "kt.linear", [(x, e), (w, e), (b, e)],
              Fn.linear, e)
    else:
        fcase("kt.linear %s %s %s" % (e, s, w.shape), "kt.linear", [(x, e), (w, e)], Fn.linear, e)

# conv2d
for it in range(40):
    e = FLOATS[it % 4]
    g = int(rng.choice([1, 1, 2, 3]))
    cin = g * int(rng.integers(1, 3))
    cout = g * int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    st = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    pd = [int(rng.integers(0, 3)), int(rng.integers(0, 3))]
    dl = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    H = max(1, dl[0] * (kh - 1) + 1 - 2 * pd[0]) + int(rng.integers(0, 5))
    W = max(1, dl[1] * (kw - 1) + 1 - 2 * pd[1]) + int(rng.integers(0, 5))
    unbatched = rng.random() < 0.2
    N = F.dim()
    xs = (cin, H, W) if unbatched else (N, cin, H, W)
    x = F.values(xs, e, special=0.02, scale=1.0)
    w = F.values((cout, cin // g, kh, kw), e, special=0.0, scale=1.0)
    attrs = []
    one = lambda l: [l[0]] if (l[0] == l[1] and rng.random() < 0.5) else l
    if st != [1, 1] or rng.random() < 0.3:
        attrs.append("stride = " + arr(one(st)))
    if pd != [0, 0] or rng.random() < 0.3:
        attrs.append("padding = " + arr(one(pd)))
    if dl != [1, 1] or rng.random() < 0.3:
        attrs.append("dilation = " + arr(one(dl)))
    if g != 1 or rng.random() < 0.3:
        attrs.append("groups = %d" % g)
    args = [(x, e), (w, e)]
    if rng.random() < 0.5:
        args.append((F.values((cout,), e, special=0.0), e))
    fn = lambda x, w, b=None: Fn.conv2d(x, w, b, st, pd, dl, g)
    fcase("kt.conv2d %s x%s w%s %s" % (e, xs, w.shape, attrs), "kt.conv2d", args, fn, e,
          attrs=", ".join(attrs))

# pooling
for it in range(60):
    e = FLOATS[it % 4]
    avg = it % 2 == 1
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    st = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    pd = [int(rng.integers(0, kh // 2 + 1)), int(rng.integers(0, kw // 2 + 1))]
    dl = [1, 1] if avg else [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    ceil = bool(rng.random() < 0.5)
    H = max(1, dl[0] * (kh - 1) + 1 - 2 * pd[0]) + int(rng.integers(0, 6))
    W = max(1, dl[1] * (kw - 1) + 1 - 2 * pd[1]) + int(rng.integers(0, 6))
    unbatched = rng.random() < 0.2
    xs = (F.dim() + 1, H, W) if unbatched else (F.dim(), int(rng.integers(1, 3)), H, W)
    x = F.values(xs, e, special=0.1, scale=1.0)
    attrs = ["kernel_size = " + arr([kh, kw] if kh != kw or rng.random() < 0.5 else [kh])]
    default_stride = rng.random() < 0.25
    if default_stride:
        st = [kh, kw]
        if rng.random() < 0.5:
            attrs.append("stride = []")
    else:
        attrs.append("stride = " + arr(st))
    if pd != [0, 0] or rng.random() < 0.3:
        attrs.append("padding = " + arr(pd))
    if ceil or rng.random() < 0.3:
        attrs.append("ceil_mode = %s" % str(ceil).lower())
    t = torch.from_numpy(np.array(x, copy=True)).double()
    label = "%s %s %s %s" % ("avg" if avg else "max", e, xs, attrs)
    try:
        if avg:
            cip = bool(rng.random() < 0.6)
            div = int(rng.choice([0, 0, 0, 3, -2]))
            if not cip or rng.random() < 0.3:
                attrs.append("count_include_pad = %s" % str(cip).lower())
            if div:
                attrs.append("divisor_override = %d" % div)
            ref = Fn.avg_pool2d(t, [kh, kw], st, pd, ceil, cip, div or None)
        else:
            if dl != [1, 1] or rng.random() < 0.3:
                attrs.append("dilation = " + arr(dl))
            ref = Fn.max_pool2d(t, [kh, kw], st, pd, dl, ceil)
    except RuntimeError as err:
        continue
    if ref.numel() == 0 and min(ref.shape[-2:]) == 0:
        continue
    op = "kt.avg_pool2d" if avg else "kt.max_pool2d"
    F.case("%s %s" % (op, label), op, [(x, e)], R(ref, e), e, attrs=", ".join(attrs),
           mode="close" if avg else "exact", rtol=4 * EPS[e], atol=4 * EPS[e])

# dense pooling sweep in f64 (ceil_mode windows at the border, padding,
# count_include_pad, divisor_override, dilation)
n = 0
while n < 200:
    kh, kw = [int(v) for v in rng.integers(1, 5, 2)]
    st = [int(v) for v in rng.integers(1, 5, 2)]
    pd = [int(rng.integers(0, kh // 2 + 1)), int(rng.integers(0, kw // 2 + 1))]
    ceil = bool(rng.random() < 0.6)
    H, W = [int(v) for v in rng.integers(1, 9, 2)]
    x = rng.standard_normal((1, 2, H, W))
    avg = rng.random() < 0.6
    attrs = ["kernel_size = " + arr([kh, kw]), "stride = " + arr(st), "padding = " + arr(pd),
             "ceil_mode = %s" % str(ceil).lower()]
    t = torch.from_numpy(x)
    try:
        if avg:
            cip = bool(rng.random() < 0.5)
            div = int(rng.choice([0, 0, 5]))
            attrs.append("count_include_pad = %s" % str(cip).lower())
            if div:
                attrs.append("divisor_override = %d" % div)
            ref = Fn.avg_pool2d(t, [kh, kw], st, pd, ceil, cip, div or None)
        else:
            dl = [int(v) for v in rng.integers(1, 3, 2)]
            attrs.append("dilation = " + arr(dl))
            ref = Fn.max_pool2d(t, [kh, kw], st, pd, dl, ceil)
    except RuntimeError:
        continue
    if ref.numel() == 0:
        continue
    n += 1
    op = "kt.avg_pool2d" if avg else "kt.max_pool2d"
    F.case("%s sweep %s %s" % (op, (H, W), attrs), op, [(x, "f64")], ref.numpy(), "f64",
           attrs=", ".join(attrs), dyn=False)

F.finish()
