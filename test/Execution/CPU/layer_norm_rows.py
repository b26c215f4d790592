# RUN: %python %s
# REQUIRES: numpy, torch
# layer_norm's one-read row statistics on the CPU (kiln-cpu with kernel
# formation: the row mean and M2 from one generic, lowered to per-block
# vector loops, docs/codegen.md "layer_norm: the statistics in one read")
# against PyTorch in float64 (and the interpreter): row lengths 1 ... 32000
# (whole blocks of 1024 lanes, a partial last block, masked steps), `?`
# dims, two normalized dims, one row (rank 1), f64, rows with a large mean
# and a small variance (1e4 + N(0, 1e-2): compared after removing each
# row's mean, which the normalization takes in f32 as PyTorch does),
# constant rows (variance 0), +inf, -inf and NaN (NaN rows, as PyTorch),
# magnitudes of 1e15, and the forms that keep the two passes (an input
# computed in the same kernel, f16, bf16).
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
from cpu_compare import CPUSuite
from kiln_testing import ttype as T

s = CPUSuite(__file__)
rng = np.random.default_rng(3)


def ref(x, ns, w, b, elem="f32", eps=1e-5):
    t = torch.from_numpy(np.asarray(x, dtype=np.float32) if elem == "bf16" else x)
    if elem == "bf16":
        t = t.bfloat16()
    f = lambda a: None if a is None else torch.from_numpy(np.asarray(a)).double()
    return torch.nn.functional.layer_norm(t.double(), ns, f(w), f(b), eps).numpy()


def ln(x, ns, w=True, b=True, elem="f32", arg_type=None, label=None, eps=None,
       centered=False, prologue=False):
    """layer_norm of x over its trailing dims `ns`; with `centered` the
    function returns y - mean(y) over the last dim (w = 1, b = 0): what is
    left then is the variance's share of the result."""
    ns = tuple(ns)
    dt = x.dtype
    ins = [x]
    ty = arg_type or T(x.shape, elem)
    types = [ty]
    kw = ""
    wv = bv = None
    if w:
        wv = (rng.standard_normal(ns) if not centered else np.ones(ns)).astype(dt)
        ins.append(wv); types.append(T(ns, elem)); kw += " weight %arg1"
    if b:
        bv = (rng.standard_normal(ns) if not centered else np.zeros(ns)).astype(dt)
        ins.append(bv); types.append(T(ns, elem)); kw += " bias %%arg%d" % (len(ins) - 1)
    attrs = "normalized_shape = [%s]" % ", ".join(map(str, ns))
    if eps is not None:
        attrs += ", eps = %r : f64" % eps
    body = []
    src = "%arg0"
    if prologue:
        body.append("  %%p = kt.mul %%arg0, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty))
        src = "%p"
    body.append("  %%y = kt.layer_norm %s%s {%s} : (%s) -> %s" % (
        src, kw, attrs, ", ".join(types), ty))
    out = "%y"
    if centered:
        mt = ty.replace("x%d" % x.shape[-1], "x1") if arg_type is None else \
            ty.rsplit("x", 2)[0] + "x1x" + elem + ">"
        body.append("  %%m = kt.mean %%y {dim = [-1], keepdim = true} : (%s) -> %s" % (ty, mt))
        body.append("  %%c = kt.sub %%y, %%m : (%s, %s) -> %s" % (ty, mt, ty))
        out = "%c"
    mlir = "func.func @main(%s) -> %s {\n%s\n  return %s : %s\n}\n" % (
        ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(types)), ty,
        "\n".join(body), out, ty)
    want = ref(x * x if prologue else x, ns, wv, bv, elem, 1e-5 if eps is None else eps)
    if centered:
        want = want - want.mean(axis=-1, keepdims=True)
    s.check_reference(label or "layer_norm %s over %s %s" % (x.shape, ns, elem), mlir, ins,
                      want, elem)


def randn(*shape, scale=3.0, dtype=np.float32):
    return (rng.standard_normal(shape) * scale + 1).astype(dtype)


# Row lengths around the vector step (64 lanes at 512 bits) and the block
# (1024): whole blocks, a partial last block, masked steps, one element.
for c in [1, 2, 15, 17, 63, 64, 65, 1023, 1024, 1025, 2048, 4097, 32000]:
    ln(randn(5, c), [c])
ln(randn(37, 1000), [1000], arg_type="tensor<?x?xf32>", label="layer_norm 37x1000 as ?x?")
ln(randn(37, 1000), [1000], arg_type="tensor<37x?xf32>", label="layer_norm 37x1000 as 37x?")
ln(randn(9, 4097), [4097], w=False, b=False, arg_type="tensor<?x4097xf32>",
   label="layer_norm 9x4097 as ?x4097, no weight or bias")
ln(randn(3, 5, 70), [5, 70], label="layer_norm 3x5x70 over [5, 70]")
ln(randn(2, 3, 5, 7), [7], w=True, b=False)
ln(randn(4097), [4097], label="layer_norm one row of 4097 (rank 1)")
ln(randn(6, 4097, dtype=np.float64), [4097], elem="f64")
ln(randn(3, 17, dtype=np.float64), [17], elem="f64")
ln(np.zeros((0, 9), dtype=np.float32), [9])
ln(randn(5, 3000), [3000], eps=0.0, label="layer_norm 5x3000 eps 0")

# A large mean and a small variance: the statistics must not cancel the
# mean against itself. PyTorch's own f32 kernel, and Kiln's normalization,
# round the mean to f32 (an ulp of 1e4 is 1e-3, a tenth of the deviation),
# so each row's mean is removed from both sides; what is compared is then
# the deviations times 1/sqrt(var + eps).
for c in [17, 1024, 4097, 32000]:
    x = (1e4 + rng.standard_normal((4, c)) * 1e-2).astype(np.float32)
    ln(x, [c], centered=True, label="layer_norm 1e4 + N(0, 1e-2) %dx%d (centered)" % x.shape)
x = (-3e5 + rng.standard_normal((3, 4097)) * 0.5).astype(np.float32)
ln(x, [4097], centered=True, label="layer_norm -3e5 + N(0, 0.5) 3x4097 (centered)")
# Blocks of different means in one row (the merge of block statistics).
x = rng.standard_normal((3, 5000)).astype(np.float32)
x[:, 1024:2048] += 50
x[:, 4096:] -= 20
ln(x, [5000], label="layer_norm 3x5000 with shifted blocks")
x = np.concatenate([np.full((2, 1024), 7.0), np.full((2, 1024), -7.0),
                    np.full((2, 33), 3.0)], axis=1).astype(np.float32)
ln(x, [x.shape[1]], label="layer_norm constant blocks 2x2081")

# Special rows (1100 wide: a whole block and a masked partial one).
c = 1100
x = randn(9, c)
x[0, :] = 2.5                         # constant: variance 0, y = bias
x[1, 5] = np.inf                      # +inf: NaN row
x[2, 1090] = -np.inf                  # -inf in the partial block: NaN row
x[3, 700] = np.nan                    # NaN: NaN row
x[4, :] = np.nan
x[5, :] = rng.standard_normal(c) * 1e15   # large magnitudes
x[6, :1024] = 0.0                     # a zero block, then the rest
x[7, :] = 0.0
x[7, ::7] = -0.0
x[8, 1024:] = 1e6                     # the partial block far from the rest
ln(x, [c], label="layer_norm special rows 9x1100")
x = randn(4, 20)
x[0, :] = -1.25
x[1, 19] = np.inf
x[2, 0] = np.nan
ln(x, [20], label="layer_norm special rows 4x20")

# Forms that keep the two passes: an input computed in the same kernel,
# f16 / bf16 (scalar loops).
ln(randn(5, 1100), [1100], prologue=True, label="layer_norm of x * x (prologue) 5x1100")
ln(randn(5, 1100, dtype=np.float16), [1100], elem="f16")
ln(randn(5, 1100), [1100], elem="bf16")

s.finish()
