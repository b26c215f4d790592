# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.cross_entropy with class-probability targets against
# torch.nn.functional.cross_entropy in float64: input layouts [C], [N, C],
# [N, C, d1, ...], every reduction, weights, label smoothing, every float
# dtype, and an empty batch.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, to_bf16, single_op_module

s = Suite(__file__)
RED = ["mean", "sum", "none"]


def T(x):
    if x is None:
        return None
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.integer):
        return torch.from_numpy(x.astype(np.int64))
    return torch.from_numpy(x.astype(np.float64))


def cast(x, elem):
    return {"f16": lambda a: a.astype(np.float16), "bf16": to_bf16,
            "f64": lambda a: a.astype(np.float64),
            "f32": lambda a: a.astype(np.float32)}[elem](x)


def targets(shape, c, ignore=None, dtype=np.int64):
    t = s.randint(0, c, *shape, dtype=dtype)
    if ignore is not None and t.size:
        t.flat[::3] = ignore
    return t


def run(op, x, t, w, elem, reduction, ignore_index=None, ls=None, **kw):
    ins = [x, t] + ([w] if w is not None else [])
    prob = np.issubdtype(t.dtype, np.floating)
    elems = [elem, elem if prob else ("i32" if t.dtype == np.int32 else "i64")]
    elems += [elem] if w is not None else []
    attrs = ["reduction = #kt<reduction %s>" % reduction]
    kwargs = dict(weight=T(w), reduction=reduction)
    if ignore_index is not None:
        attrs.append("ignore_index = %d" % ignore_index)
        kwargs["ignore_index"] = ignore_index
    if ls is not None:
        attrs.append("label_smoothing = %r" % ls)
        kwargs["label_smoothing"] = ls
    f = F.nll_loss if op == "kt.nll_loss" else F.cross_entropy
    exp = f(T(x), T(t), **kwargs).numpy()
    rshape = exp.shape
    label = "%s %s x%s t%s w=%s ii=%s ls=%s" % (op, elem, x.shape, t.shape,
                                                w is not None, ignore_index, ls)
    s.check_op(op, ins, exp, [ttype(rshape, elem)], attrs=", ".join(attrs),
               elems=elems, label=label, elem=elem if elem == "bf16" else None,
               **kw)
    return exp


LAYOUTS = [((5, 4), (5,)), ((4,), ()), ((3, 4, 5), (3, 5)),
           ((2, 3, 2, 3), (2, 2, 3))]


def cls(xs):
    return xs[1] if len(xs) > 1 else xs[0]


for i, (xs, _) in enumerate(LAYOUTS):
    cdim = 1 if len(xs) > 1 else 0
    c = xs[cdim]
    for red in RED:
        for elem in ["f32", "f64"] if i == 3 else ["f32"]:
            x = cast(s.randn(*xs), elem)
            p = cast(torch.softmax(T(s.randn(*xs)), cdim).numpy(), elem)
            w = cast(s.uniform(0.2, 2, c), elem)
            run("kt.cross_entropy", x, p, None, elem, red)
            run("kt.cross_entropy", x, p, w, elem, red)
            run("kt.cross_entropy", x, p, w, elem, red, ls=0.25)
            run("kt.cross_entropy", x, p, None, elem, red, -1, ls=1.0)
x = s.randn(6, 5)
p = torch.softmax(T(s.randn(6, 5)), 1).numpy()
run("kt.cross_entropy", x.astype(np.float16), p.astype(np.float16), None,
    "f16", "mean", rtol=5e-3, atol=5e-3)
run("kt.cross_entropy", to_bf16(x), to_bf16(p), None, "bf16", "none")
for red in RED:
    run("kt.cross_entropy", np.zeros((0, 5), np.float32),
        np.zeros((0, 5), np.float32), None, "f32", red)
s.finish()
