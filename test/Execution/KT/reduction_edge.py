# RUN: %python %s
# REQUIRES: numpy, torch
# Edge cases of the kt reductions (sum mean amax amin prod var logsumexp any all
# argmax argmin) against PyTorch in float64: shapes (rank 0, empty dims),
# dim lists (absent, negative, several), keepdim, every supported dtype, NaN /
# inf / ties, and the run-time errors of empty amax/argmax.
# (reduction.py has the dtype x shape sweep.)

import numpy as np
import torch
from kiln_testing import Suite, ttype, single_op_module, to_bf16

s = Suite(__file__)
NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
      "bf16": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}


def make(shape, elem):
    if elem in ("i64", "i32"):
        return s.randint(-5, 6, *shape, dtype=NP[elem])
    if elem == "i1":
        return s.randint(0, 2, *shape).astype(np.bool_)
    x = s.randn(*shape, dtype=NP[elem])
    return bf16(x) if elem == "bf16" else x


def bf16(x):
    """to_bf16 that also accepts rank-0 arrays."""
    x = np.asarray(x, dtype=np.float32)
    return to_bf16(x.reshape(-1)).reshape(x.shape)


def module(op, x, elem, result_types, attrs):
    """single_op_module, except that a rank-0 operand (which kiln-run cannot
    read from .npy) comes from a kt.constant."""
    if x.ndim != 0:
        return single_op_module(op, [x], result_types, attrs, elems=[elem]), [x]
    v = x.item()
    lit = ("true" if v else "false") if elem == "i1" else (
        repr(float(v)) if elem in ("f32", "f64", "f16", "bf16") else str(int(v)))
    if lit == "nan":
        lit = "0x7FF8000000000000" if elem == "f64" else "0x7FC00000"
    t = ttype((), elem)
    attr = (" {" + attrs + "}") if attrs else ""
    text = ("func.func @main() -> %s {\n"
            "  %%c = kt.constant {value = dense<%s> : %s} : () -> %s\n"
            "  %%r = %s %%c%s : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (result_types[0], lit, t, t, op, attr, t,
                                         result_types[0], result_types[0])
    return text, []


def norm_dims(dims, rank):
    if dims is None or len(dims) == 0:
        return list(range(rank))
    b = max(rank, 1)
    return sorted(set(d % b for d in dims)) if rank else []


def ref(op, x, dims, keepdim, correction=1.0):
    """Reference in float64 (int64 for integer sums/prods)."""
    rank = x.ndim
    nd = norm_dims(dims, rank)
    t = torch.from_numpy(np.array(x))
    if t.dtype in (torch.float32, torch.float16):
        t = t.double()
    alld = dims is None or len(dims) == 0
    if op in ("sum", "prod") and t.dtype in (torch.bool, torch.int32):
        t = t.long()
    if op == "sum":
        r = t.sum(dim=nd, keepdim=keepdim) if nd else (t.clone() if not keepdim else t.clone())
        if not nd and t.dim() == 0:
            r = t.clone()
    elif op == "prod":
        r = t
        for d in sorted(nd, reverse=True):
            r = r.prod(dim=d, keepdim=keepdim)
    elif op == "mean":
        r = t.mean(dim=nd, keepdim=keepdim) if nd else t.clone()
    elif op in ("amax", "amin"):
        f = torch.amax if op == "amax" else torch.amin
        r = f(t, dim=nd, keepdim=keepdim) if nd else t.clone()
    elif op == "var":
        if rank == 0:
            # one element: sum of squares 0, divisor max(0, 1 - correction)
            div = max(0.0, 1 - correction)
            r = torch.tensor(0.0 / div if div else float("nan"), dtype=torch.float64)
            if np.isnan(x) or np.isinf(x):
                r = torch.tensor(float("nan"), dtype=torch.float64)
        else:
            n = int(np.prod([x.shape[d] for d in nd])) if nd else 1
            mean = t.mean(dim=nd, keepdim=True)
            m2 = ((t - mean) ** 2).sum(dim=nd, keepdim=keepdim)
            r = m2 / max(0.0, n - correction)
    elif op == "logsumexp":
        r = torch.logsumexp(t, dim=nd, keepdim=keepdim) if nd else t.clone()
    elif op in ("any", "all"):
        b = t != 0
        r = b
        for d in sorted(nd, reverse=True):
            r = (r.any if op == "any" else r.all)(dim=d, keepdim=keepdim)
    out = r.numpy()
    return out


def result_elem(op, elem):
    if op in ("sum", "prod") and elem in ("i64", "i32", "i1"):
        return "i64"
    if op in ("any", "all"):
        return "i1"
    return elem


def check(op, x, elem, dims=None, keepdim=False, correction=None, dyn=False,
          expected=None):
    rank = x.ndim
    nd = norm_dims(dims, rank)
    shape = [1 if i in nd else d for i, d in enumerate(x.shape)] if keepdim else \
        [d for i, d in enumerate(x.shape) if i not in nd]
    attrs = []
    if dims is not None:
        attrs.append("dim = [%s]" % ", ".join(map(str, dims)))
    if keepdim:
        attrs.append("keepdim = true")
    if correction is not None:
        attrs.append("correction = %r" % float(correction))
    relem = result_elem(op, elem)
    if expected is None:
        expected = ref(op, x, dims, keepdim, 1.0 if correction is None else correction)
    expected = np.asarray(expected).reshape(shape)
    if relem == "i1":
        expected = expected.astype(np.bool_)
    elif relem in ("i64", "i32"):
        expected = expected.astype(np.int64 if relem == "i64" else np.int32)
    rt = [ttype([-1 if dyn and i == 0 else d for i, d in enumerate(shape)], relem)]
    mlir, ins = module("kt." + op, x, elem, rt, ", ".join(attrs))
    if dyn:  # make the operand type dynamic in dim 0 too
        mlir = mlir.replace(ttype(x.shape, elem), ttype([-1] + list(x.shape[1:]), elem))
    s.check("%s %s %s dim=%s keepdim=%s corr=%s" % (op, elem, x.shape, dims, keepdim, correction),
            mlir, ins, expected, elem=relem)


FLOATS = ["f32", "f64", "f16", "bf16"]
# dynamic dims
x = s.randn(3, 5)
for op in ["sum", "mean", "amax", "var", "logsumexp", "prod", "any"]:
    check(op, x, "f32", [1], False, dyn=True)
    check(op, x, "f32", [0, 1], True, dyn=False)

# var corrections, incl. N - correction <= 0 (inf / nan)
x = s.randn(4, 3, dtype=np.float64)
for c in [0.0, 1.0, 2.5, 4.0, 5.0]:
    check("var", x, "f64", [0], False, correction=c)
check("var", np.array([1.0, 2.0]), "f64", [0], correction=2.0, expected=np.inf)
check("var", np.array([3.0]), "f64", [0], expected=np.nan)
check("var", np.zeros((0, 2)), "f64", [0], expected=[np.nan, np.nan])
check("var", np.array([1.0, np.inf]), "f64", [0], expected=np.nan)

# empty reductions
check("sum", np.zeros((0, 3), np.float32), "f32", [0], expected=[0, 0, 0])
check("prod", np.zeros((0, 3), np.int32), "i32", [0], expected=[1, 1, 1])
check("mean", np.zeros((0, 3), np.float32), "f32", [0], expected=[np.nan] * 3)
check("any", np.zeros((0, 3), np.float32), "f32", [0], expected=[False] * 3)
check("all", np.zeros((0, 3), np.float32), "f32", [0], expected=[True] * 3)
check("logsumexp", np.zeros((0, 3), np.float32), "f32", [0], expected=[-np.inf] * 3)
check("amax", np.zeros((0, 3), np.float32), "f32", [1], expected=np.zeros((0,)))

# NaN / inf
nan, inf = np.nan, np.inf
xv = np.array([[1.0, nan, 3.0], [-inf, -inf, -inf], [1.0, inf, 2.0], [inf, -inf, 0.0]])
for elem in ["f64", "f32"]:
    xe = xv.astype(NP[elem])
    for op in ["amax", "amin", "sum", "mean", "logsumexp", "var", "prod", "any", "all"]:
        check(op, xe, elem, [1])
check("logsumexp", np.array([[-inf, -inf]]), "f64", [1], expected=[-inf])
check("logsumexp", np.array([[inf, 1.0]]), "f64", [1], expected=[inf])
check("logsumexp", np.array([[1000.0, 1000.0]]), "f64", [1], expected=[1000.0 + np.log(2.0)])
check("any", np.array([0.0, nan]), "f64", [0], expected=True)
check("all", np.array([nan, 1.0]), "f64", [0], expected=True)
check("all", np.array([nan, 0.0]), "f64", [0], expected=False)
# integer wrap-around and large values
big = np.array([2**62, 2**62, 2**62], dtype=np.int64)
check("sum", big, "i64", [0], expected=np.array(-(2**62), dtype=np.int64))
check("amax", np.array([2**62 + 1, 2**62], dtype=np.int64), "i64", None,
      expected=np.array(2**62 + 1, dtype=np.int64))
check("prod", np.array([2**32, 2**32], dtype=np.int64), "i64", None, expected=np.int64(0))
check("sum", np.array([True, True, False]), "i1", None, expected=np.int64(2))


# argmax / argmin
def check_arg(op, x, elem, dim=None, keepdim=False, expected=None):
    t = torch.from_numpy(np.array(x))
    f = torch.argmax if op == "argmax" else torch.argmin
    if expected is None:
        expected = f(t, dim=dim, keepdim=keepdim).numpy() if dim is not None else f(t).numpy()
        if dim is None and keepdim:
            expected = expected.reshape([1] * x.ndim)
    expected = np.asarray(expected, dtype=np.int64)
    attrs = []
    if dim is not None:
        attrs.append("dim = %d" % dim)
    if keepdim:
        attrs.append("keepdim = true")
    mlir, ins = module("kt." + op, x, elem, [ttype(expected.shape, "i64")], ", ".join(attrs))
    s.check("%s %s %s dim=%s keepdim=%s" % (op, elem, x.shape, dim, keepdim), mlir, ins,
            expected)


for op in ["argmax", "argmin"]:
    for elem in ["f32", "f64", "f16", "bf16", "i64", "i32"]:
        for shape, dim, keepdim in [((3, 4), 1, False), ((3, 4), -2, True), ((2, 3, 4), None, False),
                                    ((2, 3, 4), None, True), ((), None, False), ((), 0, True),
                                    ((5,), 0, False), ((0, 3), 1, False)]:
            check_arg(op, make(shape, elem), elem, dim, keepdim)
    # ties -> first index
    check_arg(op, np.array([[1, 3, 3, 1], [2, 2, 2, 2]], dtype=np.int64), "i64", 1)
    check_arg(op, np.array([1.0, 3.0, 3.0, 1.0, 1.0]), "f64", None)
    # NaN wins (first NaN)
    check_arg(op, np.array([[1.0, nan, 5.0, nan], [nan, 1.0, 2.0, 3.0], [-inf, inf, 0, 0]]),
              "f64", 1, expected=[1, 0, 1 if op == "argmax" else 0])

# run-time errors: empty reduced dims
for op in ["amax", "amin"]:
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((3,), "f32")], "dim = [0]")
    s.check_error(op + " empty dim", mlir, [np.zeros((0, 3), np.float32)], "non-zero size")
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((), "f32")])
    s.check_error(op + " empty all", mlir, [np.zeros((0, 3), np.float32)], "empty")
for op in ["argmax", "argmin"]:
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((3,), "i64")], "dim = 0")
    s.check_error(op + " empty dim", mlir, [np.zeros((0, 3), np.float32)], "non-zero size")
    mlir = single_op_module("kt." + op, [np.zeros((0, 3), np.float32)], [ttype((), "i64")])
    s.check_error(op + " empty all", mlir, [np.zeros((0, 3), np.float32)], "empty")
s.finish()
