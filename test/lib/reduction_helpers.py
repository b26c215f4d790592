"""Helpers shared by the reduction execution tests (test/Execution/KT/
reduction*.py): input makers, the torch float64 reference of every kt
reduction, and `check`, which runs one reduction through kiln-run and compares.
Call `use_suite(s)` first: the helpers draw inputs from and record into it."""

import numpy as np
import torch
from kiln_testing import ttype, single_op_module, to_bf16

s = None


def use_suite(suite):
    global s
    s = suite

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
