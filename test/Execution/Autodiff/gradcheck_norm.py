# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of softmax, log_softmax, layer_norm,
# nll_loss and cross_entropy (class indices with weights, ignore_index and
# label smoothing under every reduction; probability targets, whose gradient
# also flows to the target) against finite differences and torch.autograd in
# f64.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


for shape, dim in [((3, 4), 1), ((2, 3, 4), 0), ((5,), -1), ((2, 3, 4), -2)]:
    for op, fn in [("kt.softmax", F.softmax), ("kt.log_softmax", F.log_softmax)]:
        t = ttype(shape, "f64")
        s.gradcheck("%s %s dim=%d" % (op, shape, dim),
                    ["%%0 = %s %%arg0 {dim = %d : i64} : (%s) -> %s" % (op, dim, t, t),
                     "return %%0 : %s" % t], [rnd(*shape)], [t],
                    lambda x: fn(x, dim=dim))

for shape, ns in [((3, 4), [4]), ((2, 3, 4), [3, 4]), ((4,), [4])]:
    for affine in ["none", "weight", "both"]:
        x, w, b = rnd(*shape), rnd(*ns), rnd(*ns)
        t, tn = ttype(shape, "f64"), ttype(ns, "f64")
        ins, opnds, types = [x], "%arg0", [t]
        if affine in ("weight", "both"):
            ins.append(w)
            opnds += " weight %arg1"
            types.append(tn)
        if affine == "both":
            ins.append(b)
            opnds += " bias %arg2"
            types.append(tn)
        s.gradcheck("layer_norm %s %s %s" % (shape, ns, affine),
                    ["%%0 = kt.layer_norm %s {normalized_shape = [%s], eps = 1.0e-3 : f64} : (%s) -> %s"
                     % (opnds, ", ".join(map(str, ns)), ", ".join(types), t),
                     "return %%0 : %s" % t], ins, [t],
                    lambda *a: F.layer_norm(a[0], ns, *(list(a[1:]) + [None] * (3 - len(a))), eps=1e-3))


def loss_case(op, x, target, weight, reduction, ignore, ls, torch_fn):
    ins = [x, target] + ([weight] if weight is not None else [])
    types = [ttype(v.shape, "f64" if v.dtype.kind == "f" else "i64") for v in ins]
    opnds = "%arg0, %arg1" + (", %arg2" if weight is not None else "")
    attrs = "reduction = #kt.reduction<%s>, ignore_index = %d : i64" % (reduction, ignore)
    if ls is not None:
        attrs += ", label_smoothing = %s : f64" % ls
    rs = target.shape if reduction == "none" and target.dtype.kind != "f" else (
        (x.shape[:1] + x.shape[2:]) if reduction == "none" and x.ndim > 1 else ())
    tr = ttype(rs, "f64")
    s.gradcheck("%s %s w=%s %s ignore=%d ls=%s %s" % (
        op, x.shape, weight is not None, reduction, ignore, ls,
        "prob" if target.dtype.kind == "f" else "index"),
        ["%%0 = %s %s {%s} : (%s) -> %s" % (op, opnds, attrs, ", ".join(types), tr),
         "return %%0 : %s" % tr], ins, [tr], torch_fn,
        # class weights are not differentiable in PyTorch
        requires=[True, target.dtype.kind == "f"] + [False] * (len(ins) - 2))


for xs in [(4, 5), (5,), (2, 3, 2)]:
    ts = xs[:1] + xs[2:] if len(xs) > 1 else ()
    for weighted in [False, True]:
        for reduction in ["mean", "sum", "none"]:
            x, w = rnd(*xs), s.uniform(0.5, 2.0, xs[1 if len(xs) > 1 else 0],
                                       dtype=np.float64)
            t = s.randint(0, x.shape[1 if len(xs) > 1 else 0], *ts)
            ignore = -100
            if len(xs) > 1:
                t.reshape(-1)[0] = 2
                ignore = 2  # some targets ignored
            wt = w if weighted else None
            lp = F.log_softmax(torch.from_numpy(x), 1 if len(xs) > 1 else 0).numpy()
            loss_case("kt.nll_loss", lp, t, wt, reduction, ignore, None,
                      lambda *a: F.nll_loss(a[0], a[1], a[2] if len(a) > 2 else None,
                                            ignore_index=ignore, reduction=reduction))
            for ls in [0.0, 0.2]:
                loss_case("kt.cross_entropy", x, t, wt, reduction, ignore, ls,
                          lambda *a: F.cross_entropy(a[0], a[1], a[2] if len(a) > 2 else None,
                                                     ignore_index=ignore, reduction=reduction,
                                                     label_smoothing=ls))
            # probability targets
            p = F.softmax(torch.from_numpy(rnd(*xs)), 1 if len(xs) > 1 else 0).numpy()
            for ls in [0.0, 0.1]:
                loss_case("kt.cross_entropy", x, p, wt, reduction, -100, ls,
                          lambda *a: F.cross_entropy(a[0], a[1], a[2] if len(a) > 2 else None,
                                                     reduction=reduction, label_smoothing=ls))
s.finish()
