"""Helpers shared by the loss execution tests (test/Execution/KT/norm_nll_loss.py,
norm_cross_entropy*.py): dtype casts, target makers, and `run`, which checks
kt.nll_loss / kt.cross_entropy against torch.nn.functional in float64.
Call `use_suite(s)` first: the helpers draw inputs from and record into it."""

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import ttype, to_bf16

s = None


def use_suite(suite):
    global s
    s = suite


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
    attrs = ["reduction = #kt.reduction<%s>" % reduction]
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
