# RUN: %python %s
# REQUIRES: numpy, torch
# cross_entropy's row kernel through the CPU backend (kiln-cpu with kernel
# formation: max, sum of exp with f32 exp and an f64 sum, log(sum) and the
# per-row loss in one kernel over blocks of rows, the mean after it;
# docs/codegen.md "cross_entropy") against PyTorch's F.cross_entropy in
# float64 (and the interpreter): rows with -inf logits (also at the target:
# inf), a row of -inf (NaN, as PyTorch), +inf, NaN, magnitudes of 1e30, one
# class, one row, rows longer than the caches (1 x 1M classes), `?` rows and
# classes, f16 / bf16 / f64 inputs, ignore_index on every row (mean of
# nothing: NaN), weights, label smoothing, probability targets, spatial
# dims, reductions none / mean / sum, blocks of rows with a partial tile;
# the online (one-read) row kernel at odd class counts (1 ... 32000), with
# special values in its first and masked last steps, rows whose max grows
# at every element, ignore_index rows and `?` dims.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from cpu_compare import CPUSuite
from kiln_testing import ttype, to_bf16

s = CPUSuite(__file__)
rng = np.random.default_rng(7)


def T(x):
    x = np.asarray(x)
    return torch.from_numpy(x.astype(np.int64 if x.dtype.kind == "i" else np.float64))


def case(x, t, elem="f32", red="mean", w=None, ignore=None, ls=None, dyn=(), label=""):
    """kt.cross_entropy on x ([N, C, d...] or [C]) and t (class indices or
    probabilities); `dyn` lists the dims of x made `?` (with the target's
    matching dims)."""
    prob = t.dtype.kind == "f"
    ins = [x, t] + ([w] if w is not None else [])
    telem = elem if prob else "i64"
    xs = [-1 if i in dyn else d for i, d in enumerate(x.shape)]
    if prob:
        ts = list(xs)
    else:
        ts = [d for i, d in enumerate(xs) if i != (1 if x.ndim > 1 else 0)]
    types = [ttype(xs, elem), ttype(ts, telem)]
    if w is not None:
        types.append(ttype([-1 if 1 in dyn or (x.ndim == 1 and 0 in dyn) else w.shape[0]], elem))
    attrs = ["reduction = #kt.reduction<%s>" % red]
    kw = dict(weight=T(w) if w is not None else None, reduction=red)
    if ignore is not None:
        attrs.append("ignore_index = %d" % ignore)
        kw["ignore_index"] = ignore
    if ls is not None:
        attrs.append("label_smoothing = %r" % ls)
        kw["label_smoothing"] = ls
    want = F.cross_entropy(T(x), T(t), **kw).numpy()
    if red == "none":
        rt = ttype(ts if not prob else [d for i, d in enumerate(xs)
                                        if i != (1 if x.ndim > 1 else 0)], elem)
    else:
        rt = ttype([], elem)
    args = ", ".join("%%arg%d: %s" % (i, a) for i, a in enumerate(types))
    ops = ", ".join("%%arg%d" % i for i in range(len(ins)))
    mlir = ("func.func @main(%s) -> %s {\n  %%r = kt.cross_entropy %s {%s} : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (args, rt, ops, ", ".join(attrs),
                                         ", ".join(types), rt, rt)
    name = "%s x%s %s %s w=%s ii=%s ls=%s dyn=%s %s" % (
        label, x.shape, "prob" if prob else "index", red, w is not None, ignore, ls,
        list(dyn), elem)
    s.check_reference(name, mlir, ins, want, elem)


def probs(shape, axis=1):
    p = np.abs(rng.standard_normal(shape)) + 0.01
    return (p / p.sum(axis=axis, keepdims=True)).astype(np.float32)


# Special rows, 37 classes (not a multiple of the vector width).
x = (rng.standard_normal((12, 37)) * 3).astype(np.float32)
x[0, [1, 5, 30]] = -np.inf          # some -inf: exp gives 0 there
x[1, :] = -np.inf                   # all -inf: NaN, as PyTorch
x[2, 4] = np.inf                    # +inf: NaN (inf - inf)
x[3, 7] = np.nan                    # NaN: NaN
x[4, :] = 0
x[4, [0, 3]] = [1e30, -1e30]        # huge magnitudes
x[5, :] = rng.standard_normal(37).astype(np.float32) * 1e30
x[6, :] = -1e30                     # all equal and huge
x[7, :] = np.nan                    # all NaN (the max skips NaN: still NaN)
x[8, :] = 0.0
x[8, ::3] = -0.0                    # +0 and -0 as the max
x[9, :] = -np.inf
x[9, 11] = np.nan                   # NaN among -inf
x[10, 2] = -np.inf                  # the target's logit is -inf: loss inf
t = rng.integers(0, 37, 12)
t[10] = 2
t[4] = 3                            # the target at -1e30: loss 1e30
w = (np.abs(rng.standard_normal(37)) + 0.1).astype(np.float32)
finite = [0, 4, 5, 6, 8, 11]        # rows without NaN / inf losses
for red in ["none", "mean", "sum"]:
    case(x, t, red=red, label="special rows")
    case(x, t, red=red, w=w, ls=0.1, label="special rows")
    case(x[finite], t[finite], red=red, w=w, ignore=int(t[5]), ls=0.2, label="huge rows")
    p = probs((12, 37))
    case(x, p, red=red, label="special rows")
    case(x[finite], p[finite], red=red, w=w, ls=0.3, label="huge rows")

# Blocks of rows with a partial last tile (37 rows of 1000 classes).
x = (rng.standard_normal((37, 1000)) * 2).astype(np.float32)
t = rng.integers(0, 1000, 37)
w = (np.abs(rng.standard_normal(1000)) + 0.1).astype(np.float32)
for red in ["none", "mean", "sum"]:
    case(x, t, red=red, label="blocks")
    case(x, t, red=red, w=w, ignore=int(t[3]), label="blocks")
    case(x, t, red=red, w=w, ls=0.1, label="blocks")
    case(x, t, red=red, ls=0.25, ignore=int(t[0]), label="blocks")
    case(x, probs((37, 1000)), red=red, label="blocks")
    case(x, probs((37, 1000)), red=red, w=w, ls=0.1, label="blocks")
# ignore_index on every row: mean of nothing is NaN (sum 0), as PyTorch.
for red in ["none", "mean", "sum"]:
    case(x, np.full(37, 5, np.int64), red=red, ignore=5, label="all ignored")
    case(x, np.full(37, 5, np.int64), red=red, w=w, ignore=5, ls=0.1, label="all ignored")
# One class (loss 0), one row, one element.
case(rng.standard_normal((9, 1)).astype(np.float32), np.zeros(9, np.int64), red="none",
     label="one class")
case(rng.standard_normal((9, 1)).astype(np.float32), np.zeros(9, np.int64), ls=0.5,
     label="one class")
case(rng.standard_normal((1, 500)).astype(np.float32), np.array([17]), red="none",
     label="one row")
case(rng.standard_normal((1, 500)).astype(np.float32), probs((1, 500)), label="one row")
case(rng.standard_normal((300,)).astype(np.float32), np.array(4), label="rank 1")
# A row longer than the caches: 1 x 1M classes (and 3 rows of 400K).
big = (rng.standard_normal((1, 1 << 20)) * 4).astype(np.float32)
case(big, np.array([123457]), red="none", label="1M classes")
case(big, np.array([123457]), ls=0.1, label="1M classes")
case(big, probs((1, 1 << 20)), label="1M classes")
case((rng.standard_normal((3, 400000)) * 4).astype(np.float32),
     rng.integers(0, 400000, 3), red="sum", label="400K classes")
# `?` rows and classes.
x = rng.standard_normal((45, 77)).astype(np.float32)
t = rng.integers(0, 77, 45)
w = (np.abs(rng.standard_normal(77)) + 0.1).astype(np.float32)
for dyn in [(0,), (1,), (0, 1)]:
    case(x, t, dyn=dyn, label="dynamic")
    case(x, t, red="none", w=w, ignore=int(t[1]), ls=0.1, dyn=dyn, label="dynamic")
    case(x, probs((45, 77)), dyn=dyn, label="dynamic")
# Spatial dims: [N, C, d], the class dim in the middle.
x = rng.standard_normal((3, 50, 7)).astype(np.float32)
t = rng.integers(0, 50, (3, 7))
for red in ["none", "mean"]:
    case(x, t, red=red, label="spatial")
    case(x, t, red=red, w=(np.abs(rng.standard_normal(50)) + 0.1).astype(np.float32),
         ls=0.1, ignore=int(t[0, 0]), label="spatial")
    case(x, probs((3, 50, 7)), red=red, label="spatial")
# f64, f16, bf16 inputs (f16/bf16 computed in f32).
for elem, dt in [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]:
    x = (rng.standard_normal((40, 130)) * 3).astype(dt)
    if elem == "bf16":
        x = to_bf16(x)
    x[0, 3] = -np.inf
    t = rng.integers(0, 130, 40)
    w = np.abs(rng.standard_normal(130)).astype(dt) + dt(0.1)
    if elem == "bf16":
        w = to_bf16(w)
    for red in ["none", "mean"]:
        case(x, t, elem=elem, red=red, label="dtype")
        case(x, t, elem=elem, red=red, w=w, ls=0.1, ignore=int(t[2]), label="dtype")
    p = probs((40, 130)).astype(dt)
    if elem == "bf16":
        p = to_bf16(p)
    case(x, p, elem=elem, red="sum", label="dtype")
# The online row kernel (kiln-cpu: cross_entropy's max and sum of exp in one
# read of the row, per lane a running max and sum rescaled when the max
# grows; blocks of 16 vector steps summed in f32, then f64; the last partial
# step masked and padded with -inf; docs/codegen.md "one read"): class counts
# around the vector width (64 f32 lanes here, 32 with AVX2) and the block
# (1024), a 4097 and a 32000 row, with the special values at the first
# element, in the masked tail and in the middle of a block.
for c in [1, 2, 15, 17, 63, 64, 65, 1023, 1024, 1025, 4097, 32000]:
    x = (rng.standard_normal((6, c)) * 3).astype(np.float32)
    t = rng.integers(0, c, 6)
    case(x, t, red="none", label="online %d classes" % c)
    if c >= 2:
        x[0, 0] = -np.inf               # first element -inf (max still -inf)
        x[1, -1] = np.inf               # +inf in the last (masked) step: NaN
        x[2, c // 2] = np.nan           # NaN: NaN
        x[3, :] = -np.inf               # all -inf: NaN
        x[4, 0] = np.inf                # +inf first: NaN
        x[5, -1] = 80.0                 # the max in the tail: rescale there
        t[0] = c - 1
        case(x, t, red="none", label="online special %d classes" % c)
        case(x, t, red="mean", w=(np.abs(rng.standard_normal(c)) + 0.1).astype(np.float32),
             ls=0.1, label="online special %d classes" % c)
# Rows whose max grows at every step (a rescale per element and lane) or
# only at the start, with a large offset (exp(x - max) underflows for most
# elements), and -inf before the first finite element.
c = 32000
up = np.linspace(-20, 20, c, dtype=np.float32)
rows = np.stack([up, up[::-1], up + 1e4, np.where(np.arange(c) < 5000, -np.inf, up),
                 np.where(np.arange(c) % 2 == 0, up, -up)]).astype(np.float32)
tr = np.array([c - 1, 0, 123, 4999 + 7, 31999])
case(rows, tr, red="none", label="online monotone rows")
case(rows, tr, red="sum", ls=0.2, label="online monotone rows")
# ignore_index rows, `?` rows and classes, odd sizes.
x = (rng.standard_normal((33, 4097)) * 2).astype(np.float32)
t = rng.integers(0, 4097, 33)
t[[0, 5, 32]] = -7
for dyn in [(), (0,), (1,), (0, 1)]:
    case(x, t, red="mean", ignore=-7, dyn=dyn, label="online ignore")
    case(x, t, red="none", ignore=-7, ls=0.3, dyn=dyn, label="online ignore")
# f64 (its own vector loops, 32 lanes) and f16/bf16 (the generic's scalar
# loop) at the odd sizes.
for elem, dt in [("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]:
    for c in [17, 4097]:
        x = (rng.standard_normal((5, c)) * 3).astype(dt)
        if elem == "bf16":
            x = to_bf16(x)
        x[1, 0] = -np.inf
        x[2, -1] = np.inf
        t = rng.integers(0, c, 5)
        case(x, t, elem=elem, red="none", label="online dtype")
s.finish()
