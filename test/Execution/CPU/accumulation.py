# RUN: %python %s
# REQUIRES: numpy, torch
# The accumulation rule (docs/dialects/kt.md): float reductions accumulate in
# f64 and round once. Every reduction the CPU backend emits over long
# f32/f16/bf16 extents -- full, row, column and multi-dim sums and means,
# `?` dims, prod, var, logsumexp, softmax/log_softmax denominators (rows and
# columns), layer_norm statistics, attention's softmax, cross_entropy's
# mean, a reduction with a fused prologue -- against PyTorch in float64,
# on the CPU backend (with and without kt-level fusion) and the
# interpreter. Kiln's max error must be at most 2x PyTorch's own float32
# (or f16/bf16) error on the same input, plus one ulp of the result's
# magnitude (the final rounding).
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import KilnRunError, run, ttype, to_bf16

torch.set_num_threads(1)
rng = np.random.default_rng(0)
passed = failed = 0
NP = {"f32": np.float32, "f16": np.float16, "bf16": np.float32}
TORCH = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
EPS = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7}
BACKENDS = [("cpu", ["--backend=cpu"]), ("cpu fuse=false", ["--backend=cpu", "--cpu-fuse=false"]),
            ("interpreter", [])]


def func(args, body, result):
    """A module with @main(args) whose `body` ends in %r : result."""
    sig = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(args))
    return "func.func @main(%s) -> %s {\n%s\n  return %%r : %s\n}\n" % (sig, result, body, result)


def ulp(x, elem):
    m = float(np.max(np.abs(x))) if np.size(x) else 0.0
    return EPS[elem] * 2.0 ** np.floor(np.log2(m)) if m > 0 else 0.0


def check(label, mlir, inputs, torch_fn, elem="f32"):
    """Runs `mlir` on `inputs` on every backend; compares with torch_fn on
    the inputs in float64 (reference) and in `elem` (PyTorch's error)."""
    global passed, failed
    isf = [x.dtype.kind == "f" for x in inputs]
    t64 = [torch.from_numpy(x.astype(np.float64) if f else x) for x, f in zip(inputs, isf)]
    tlow = [torch.from_numpy(x).to(TORCH[elem]) if f else torch.from_numpy(x)
            for x, f in zip(inputs, isf)]
    with torch.no_grad():
        ref = torch_fn(*t64).numpy()
        theirs = torch_fn(*tlow).to(torch.float64).numpy()
    torch_err = float(np.max(np.abs(theirs - ref)))
    allowed = 2 * torch_err + ulp(ref, elem)
    for name, args in BACKENDS:
        try:
            got = run(mlir, inputs, extra_args=args)[0].astype(np.float64)
        except KilnRunError as e:
            failed += 1
            print("FAIL %s [%s]: %s" % (label, name, e))
            continue
        err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
        if got.shape == ref.shape and np.isfinite(err) and err <= allowed:
            passed += 1
        else:
            failed += 1
            print("FAIL %s [%s]: max err %.3g, PyTorch's %.3g (allowed %.3g), shape %s vs %s"
                  % (label, name, err, torch_err, allowed, got.shape, ref.shape))
        sys.stdout.flush()


def reduce_case(label, op, x, attrs, out_shape, torch_fn, elem="f32", arg_shape=None):
    arg = ttype(arg_shape or x.shape, elem)
    res = ttype(out_shape, elem)
    attr = (" {%s}" % attrs) if attrs else ""
    check(label, func([arg], "  %%r = %s %%a0%s : (%s) -> %s" % (op, attr, arg, res), res),
          [x], torch_fn, elem)


def randn(*shape, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(np.float32)


# -- sums and means -----------------------------------------------------------
# The case: the mean of 8x128x256 copies of 1.1 (a full reduction).
x = np.full((8, 128, 256), 1.1, np.float32)
reduce_case("mean of 8x128x256 x 1.1", "kt.mean", x, "", (), lambda t: t.mean())
x = randn(8, 128, 256, offset=1.0)
reduce_case("mean all dims, randn + 1", "kt.mean", x, "", (), lambda t: t.mean())
reduce_case("sum all dims, randn + 1", "kt.sum", x, "", (), lambda t: t.sum())
# The bias-gradient pattern: a column sum over 65536 rows.
x = randn(65536, 32, offset=1.0)
reduce_case("column sum over 65536 rows", "kt.sum", x, "dim = [0]", (32,),
            lambda t: t.sum(0))
reduce_case("column sum over 65536 rows, ? dims", "kt.sum", x, "dim = [0]", (32,),
            lambda t: t.sum(0), arg_shape=(None, None))
reduce_case("column mean keepdim", "kt.mean", x, "dim = [0], keepdim = true", (1, 32),
            lambda t: t.mean(0, keepdim=True))
# A long row sum.
x = randn(4, 262144, offset=1.0)
reduce_case("row sum over 262144", "kt.sum", x, "dim = [-1]", (4,), lambda t: t.sum(-1))
reduce_case("row sum over 262144, ? dims", "kt.sum", x, "dim = [1]", (4,),
            lambda t: t.sum(-1), arg_shape=(None, None))
# Many values with large cancellation: +-1e4 pairs plus small noise.
a = rng.standard_normal(1 << 19) * 1e4
x = np.concatenate([a, -a]) + rng.standard_normal(1 << 20)
x = x[rng.permutation(x.size)].astype(np.float32).reshape(1024, 1024)
reduce_case("sum with large cancellation", "kt.sum", x, "", (), lambda t: t.sum())
reduce_case("row sums with large cancellation", "kt.sum", x, "dim = [1]", (1024,),
            lambda t: t.sum(1))
# Multi-dim reductions (the reduced dims not adjacent; inner and outer).
x = randn(64, 16, 2048, offset=1.0)
reduce_case("mean over dims [0, 2]", "kt.mean", x, "dim = [0, 2]", (16,),
            lambda t: t.mean((0, 2)))
reduce_case("sum over dims [0, 1]", "kt.sum", x, "dim = [0, 1]", (2048,),
            lambda t: t.sum((0, 1)))
# Products of values near 1.
x = randn(4, 65536, scale=1e-3, offset=1.0)
reduce_case("prod over 65536", "kt.prod", x, "dim = [1]", (4,), lambda t: t.prod(1))
# var (two passes in f64), with an offset.
x = randn(65536, 8, offset=100.0)
reduce_case("var over 65536 rows", "kt.var", x, "dim = [0]", (8,),
            lambda t: t.var(0, unbiased=True))
# f16 / bf16 data: PyTorch accumulates them in f32.
x = randn(4, 65536, scale=0.01, offset=0.05).astype(np.float16)
reduce_case("f16 row sum over 65536", "kt.sum", x, "dim = [1]", (4,), lambda t: t.sum(1),
            elem="f16")
x = to_bf16(randn(16384, 16, offset=1.0))
reduce_case("bf16 column sum over 16384", "kt.sum", x, "dim = [0]", (16,),
            lambda t: t.sum(0), elem="bf16")

# -- sums inside other ops --------------------------------------------------------
x = randn(2, 262144, scale=3.0)
reduce_case("logsumexp over 262144", "kt.logsumexp", x, "dim = [1]", (2,),
            lambda t: t.logsumexp(1))
for op, fn in (("kt.softmax", F.softmax), ("kt.log_softmax", F.log_softmax)):
    reduce_case("%s over 262144" % op, op, x, "dim = -1", x.shape,
                lambda t, fn=fn: fn(t, -1))
    y = randn(65536, 8, scale=3.0)
    reduce_case("%s over 65536 rows (dim 0)" % op, op, y, "dim = 0", y.shape,
                lambda t, fn=fn: fn(t, 0))
# layer_norm statistics over long rows with an offset.
x = randn(4, 65536, offset=10.0)
w = randn(65536)
b = randn(65536)
ln = ("  %%r = kt.layer_norm %%a0 weight %%a1 bias %%a2 {normalized_shape = [65536]} : "
      "(%s, %s, %s) -> %s" % (ttype(x.shape, "f32"), ttype(w.shape, "f32"),
                              ttype(b.shape, "f32"), ttype(x.shape, "f32")))
check("layer_norm over 65536", func([ttype(x.shape, "f32"), ttype(w.shape, "f32"),
                                     ttype(b.shape, "f32")], ln, ttype(x.shape, "f32")),
      [x, w, b], lambda t, tw, tb: F.layer_norm(t, (65536,), tw, tb))
# Attention over a long key sequence (the softmax denominator).
q = randn(2, 4, 16)
k = randn(2, 32768, 16)
v = randn(2, 32768, 16, offset=1.0)
ty = [ttype(a.shape, "f32") for a in (q, k, v)]
sdpa = ("  %%r = kt.scaled_dot_product_attention %%a0, %%a1, %%a2 : (%s, %s, %s) -> %s"
        % (ty[0], ty[1], ty[2], ty[0]))
check("sdpa over 32768 keys", func(ty, sdpa, ty[0]), [q, k, v],
      lambda a, b_, c: F.softmax(a @ b_.transpose(-1, -2) / 4.0, -1) @ c)
# cross_entropy's mean over many rows.
x = randn(65536, 10, scale=2.0)
t = rng.integers(0, 10, 65536).astype(np.int64)
ce = ("  %%r = kt.cross_entropy %%a0, %%a1 : (%s, tensor<65536xi64>) -> tensor<f32>"
      % ttype(x.shape, "f32"))
check("cross_entropy mean over 65536", func([ttype(x.shape, "f32"), "tensor<65536xi64>"], ce,
                                            "tensor<f32>"),
      [x, t], lambda a, b_: F.cross_entropy(a, b_))
# A pointwise prologue fused into a full reduction (a loss).
x = randn(8, 128, 256)
w = randn(256, offset=1.0)
T3, T1 = ttype(x.shape, "f32"), ttype(w.shape, "f32")
body = ("  %%0 = kt.mul %%a0, %%a1 : (%s, %s) -> %s\n"
        "  %%1 = kt.mul %%0, %%0 : (%s, %s) -> %s\n"
        "  %%r = kt.mean %%1 : (%s) -> tensor<f32>" % (T3, T1, T3, T3, T3, T3, T3))
check("mean((x * w)^2) over 8x128x256", func([T3, T1], body, "tensor<f32>"), [x, w],
      lambda a, b_: ((a * b_) ** 2).mean())

print("accumulation.py: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or not passed else 0)
