# RUN: %python %s
# REQUIRES: numpy, torch
# kt.nll_loss and kt.cross_entropy through the CPU backend against
# torch.nn.functional in float64 (independent reference) and the
# interpreter: every layout ([C], [N, C], [N, C, d...]), weights,
# ignore_index (incl. all targets ignored: mean is NaN), reductions,
# i32/i64 targets, label smoothing, class-probability targets, every float
# dtype and dynamic dims.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_compare import CPUSuite
from kiln_testing import ttype, to_bf16

s = CPUSuite(__file__)
NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32}


def fl(shape, elem, scale=1.0):
    x = (s.randn(*shape, dtype=np.float64) * scale).astype(NP[elem])
    return to_bf16(x) if elem == "bf16" else x


def T(x):
    x = np.asarray(x)
    return torch.from_numpy(x.astype(np.int64 if x.dtype.kind == "i" else np.float64))


def case(op, x, t, w, elem, red, ignore=None, ls=None, dyn=False):
    prob = t.dtype.kind == "f"
    ins = [x, t] + ([w] if w is not None else [])
    telem = elem if prob else ("i32" if t.dtype == np.int32 else "i64")
    elems = [elem, telem] + ([elem] if w is not None else [])
    shapes = [[-1 if dyn else d for d in a.shape] for a in ins]
    if dyn and w is not None:
        shapes[2] = list(w.shape)
    arg_types = [ttype(sh, e) for sh, e in zip(shapes, elems)]
    attrs = ["reduction = #kt.reduction<%s>" % red]
    kw = dict(weight=T(w) if w is not None else None, reduction=red)
    if ignore is not None:
        attrs.append("ignore_index = %d" % ignore)
        kw["ignore_index"] = ignore
    if ls is not None:
        attrs.append("label_smoothing = %r" % ls)
        kw["label_smoothing"] = ls
    f = F.nll_loss if op == "kt.nll_loss" else F.cross_entropy
    want = f(T(x), T(t), **kw).numpy()
    rshape = [-1 if dyn else d for d in want.shape]
    rt = ttype(rshape, elem)
    args = ", ".join("%%arg%d: %s" % (i, a) for i, a in enumerate(arg_types))
    operands = ", ".join("%%arg%d" % i for i in range(len(ins)))
    mlir = ("func.func @main(%s) -> %s {\n  %%r = %s %s {%s} : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (args, rt, op, operands, ", ".join(attrs),
                                         ", ".join(arg_types), rt, rt)
    label = "%s %s x%s t%s(%s) w=%s %s ii=%s ls=%s%s" % (
        op, elem, x.shape, t.shape, telem, w is not None, red, ignore, ls,
        " dyn" if dyn else "")
    s.check_reference(label, mlir, ins, want, elem)


LAYOUTS = [((5, 4), (5,)), ((4,), ()), ((3, 4, 5), (3, 5)), ((2, 3, 2, 3), (2, 2, 3))]
for op in ["kt.nll_loss", "kt.cross_entropy"]:
    for xs, ts in LAYOUTS:
        c = xs[1] if len(xs) > 1 else xs[0]
        for red in ["mean", "sum", "none"]:
            x = fl(xs, "f32")
            if op == "kt.nll_loss":
                x = np.log(np.abs(x) + 0.1).astype(np.float32)
            t = s.randint(0, c, *ts)
            case(op, x, t, None, "f32", red)
            w = np.abs(fl((c,), "f32")) + 0.1
            t2 = t.copy()
            if t2.size:
                t2.flat[::2] = 1
            case(op, x, t2, w, "f32", red, ignore=1)
            if op == "kt.cross_entropy":
                case(op, x, t2, w, "f32", red, ignore=1, ls=0.2)
                case(op, x, t, None, "f32", red, ls=0.1)
                p = np.abs(fl(xs, "f32"))
                p = (p / p.sum(axis=1 if len(xs) > 1 else 0, keepdims=True)).astype(np.float32)
                case(op, x, p, None, "f32", red)
                case(op, x, p, w, "f32", red, ls=0.3)
# every target ignored: mean is NaN, sum 0
for op in ["kt.nll_loss", "kt.cross_entropy"]:
    x = fl((4, 3), "f32")
    t = np.full((4,), -100, np.int64)
    for red in ["mean", "sum", "none"]:
        case(op, x, t, None, "f32", red)
    if op == "kt.cross_entropy":
        case(op, x, t, np.ones(3, np.float32), "f32", "mean", ls=0.2)
# dtypes and i32 targets
for elem in ["f64", "f16", "bf16"]:
    for op in ["kt.nll_loss", "kt.cross_entropy"]:
        x = fl((6, 5), elem, 2.0)
        t = s.randint(0, 5, 6, dtype=np.int32)
        w = np.abs(fl((5,), elem)) + np.array(0.1, NP[elem])
        w = w.astype(NP[elem])
        case(op, x, t, w, elem, "mean", ignore=2)
        case(op, x, t, None, elem, "none")
    p = np.abs(fl((3, 4, 2), "f64"))
    p = p / p.sum(axis=1, keepdims=True)
    p = p.astype(NP[elem])
    if elem == "bf16":
        p = to_bf16(p)
    case("kt.cross_entropy", fl((3, 4, 2), elem), p, None, elem, "sum", ls=0.25)
# dynamic dims
x = fl((7, 5, 3), "f32")
t = s.randint(0, 5, 7, 3)
for red in ["mean", "none"]:
    case("kt.cross_entropy", x, t, np.abs(fl((5,), "f32")), "f32", red, ignore=0, ls=0.1, dyn=True)
    case("kt.nll_loss", x, t, None, "f32", red, dyn=True)
p = np.abs(fl((7, 5), "f32"))
case("kt.cross_entropy", fl((7, 5), "f32"), (p / p.sum(1, keepdims=True)).astype(np.float32),
     None, "f32", "mean", dyn=True)
s.finish()
