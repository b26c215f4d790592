# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.scatter (torch.scatter, scatter_add, scatter_reduce with every
# reduce and include_self) against PyTorch through kiln-run, in the
# interpreter and (the cpu sweep) on the CPU backend: every dtype it takes,
# repeated indices (they accumulate in PyTorch's CPU order), index smaller
# than src and self, negative dims, rank 0, empty index, NaN, integer
# wrap-around and floor mean, `?` dims and run-time errors.

import warnings

import numpy as np
import torch
from kiln_testing import Suite, ttype, to_bf16, func_text

s = Suite(__file__, cpu=True)
warnings.filterwarnings("ignore", "scatter_reduce")  # beta in PyTorch 1.13

DTYPES = ["f32", "f64", "f16", "bf16", "i64", "i32", "i1"]
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def make(shape, elem):
    if elem in ("f32", "f64", "f16"):
        return s.randn(*shape, dtype={"f32": np.float32, "f64": np.float64,
                                      "f16": np.float16}[elem])
    if elem == "bf16":
        return to_bf16(s.randn(*shape))
    if elem == "i1":
        return s.randint(0, 2, *shape).astype(np.bool_)
    return s.randint(-100, 100, *shape,
                     dtype=np.int64 if elem == "i64" else np.int32)


def T(x):
    t = torch.from_numpy(np.array(x))
    return t


def torch_of(x, elem):
    t = T(x)
    if elem == "bf16":  # to_bf16 gives float32 values exact in bf16
        t = t.to(torch.bfloat16)
    return t


def to_np(t):
    if t.dtype == torch.bfloat16:
        return t.float()
    return t


def attrs(dim, reduce=None, include_self=True):
    a = "dim = %d : i64" % dim
    if reduce:
        a += ", reduce = #kt.scatter_reduce<%s>" % reduce
    if not include_self:
        a += ", include_self = false"
    return a


def module(arg_types, res_type, attr):
    body = ["%%r = kt.scatter %%arg0, %%arg1, %%arg2 {%s} : (%s) -> %s" % (
        attr, ", ".join(arg_types), res_type), "return %%r : %s" % res_type]
    return func_text("main", arg_types, [res_type], body)


def expected_of(x, i, src, elem, dim, reduce, include_self):
    tx, ti, ts = torch_of(x, elem), T(i).long(), torch_of(src, elem)
    if reduce is None:
        r = torch.scatter(tx, dim, ti, ts)
    else:
        r = torch.scatter_reduce(tx, dim, ti, ts, reduce,
                                 include_self=include_self)
    return to_np(r).contiguous().numpy()


def check(x, i, src, elem, dim, reduce=None, include_self=True, ielem="i64",
          shapes=None, label=None):
    shapes = shapes or [x.shape, i.shape, src.shape]
    types = [ttype(shapes[0], elem), ttype(shapes[1], ielem),
             ttype(shapes[2], elem)]
    a = attrs(dim, reduce, include_self)
    expected = expected_of(x, i, src, elem, dim, reduce, include_self)
    s.check(label or "kt.scatter {%s} %s" % (a, types),
            module(types, types[0], a), [x, i, src], expected, elem=elem)


def check_err(x, i, src, elem, dim, shapes, substring, reduce=None):
    types = [ttype(shapes[0], elem), ttype(shapes[1], "i64"),
             ttype(shapes[2], elem)]
    a = attrs(dim, reduce)
    s.check_error("kt.scatter {%s} %s error %s" % (a, types, substring),
                  module(types, types[0], a), [x, i, src], substring)


# ---- every dtype, every reduce, include_self, repeated indices ---------------
for elem in DTYPES:
    x = make((4, 3), elem)
    src = make((5, 3), elem)
    # Rows 0..3 of x receive from 5 rows of src: some twice, one never.
    i = np.array([[0, 1, 2], [0, 1, 0], [3, 3, 3], [0, 2, 2], [1, 1, 0]],
                 dtype=np.int64)
    check(x, i, src, elem, 0)
    check(x, i, src, elem, 0, "sum")
    for red in REDUCES:
        if red == "mean" and elem == "i1":
            continue  # PyTorch: not implemented for Bool (a verifier error)
        for inc in (True, False):
            check(x, i, src, elem, 0, red, inc)
    # i32 index, dim -1, index smaller than src and self.
    src2 = make((3, 6), elem)
    i2 = np.array([[2, 0, 2, 1], [0, 0, 0, 0]], dtype=np.int32)
    for red in (None, "sum", "amax"):
        check(x, i2, src2, elem, -1, red, ielem="i32")

# ---- rank 3, each dim, middle-dim duplicates ----------------------------------
x = make((3, 4, 5), "f64")
for dim in (0, 1, 2, -2):
    n = x.shape[dim]
    i = s.randint(0, n, 2, 3, 4)
    src = make((3, 3, 4), "f64")
    for red in (None, "sum", "mean", "prod", "amin"):
        check(x, i, src, "f64", dim, red)
        check(x, i, src, "f64", dim, red, False)

# ---- rank 0 and empty index ------------------------------------------------------
x0, s0 = np.array(1.5, dtype=np.float32), np.array(-2.0, dtype=np.float32)
check(x0, np.array(0, dtype=np.int64), s0, "f32", 0, "sum")
check(x0, np.array([0], dtype=np.int64), np.array([4.0], dtype=np.float32),
      "f32", -1, "prod")
x = make((4, 3), "f32")
check(x, np.zeros((0, 3), dtype=np.int64), make((2, 3), "f32"), "f32", 0, "sum")
check(x, np.zeros((0, 3), dtype=np.int64), make((2, 3), "f32"), "f32", 0,
      "amax", False)
check(make((0, 3), "f32"), np.zeros((0, 3), dtype=np.int64),
      make((0, 3), "f32"), "f32", 0)

# ---- NaN, infinities, signed zeros -----------------------------------------------
nan, inf = float("nan"), float("inf")
x = np.array([1.0, nan, 3.0, -0.0, 5.0], dtype=np.float32)
src = np.array([nan, 2.0, 7.0, -inf, 0.0, inf, 9.0], dtype=np.float32)
i = np.array([0, 1, 1, 2, 3, 3, 0], dtype=np.int64)
for red in REDUCES:
    for inc in (True, False):
        check(x, i, src, "f32", 0, red, inc)

# ---- integer wrap-around and floor mean --------------------------------------------
x = np.array([2**62, -7, 5, 0], dtype=np.int64)
src = np.array([2**62, 2**62, -2, -3, 4, 3], dtype=np.int64)
i = np.array([0, 0, 1, 1, 2, 2], dtype=np.int64)
for red in REDUCES:
    for inc in (True, False):
        check(x, i, src, "i64", 0, red, inc)
x = np.array([2**30, -7, 5, 0], dtype=np.int32)
src = np.array([2**30, 2**30, -2, -3, 4, 3], dtype=np.int32)
for red in REDUCES:
    for inc in (True, False):
        check(x, i, src, "i32", 0, red, inc)

# ---- half accumulation: each step rounded as PyTorch's CPU kernel ------------------
x = np.array([2048.0, 0.0], dtype=np.float16)
src = np.ones(6, dtype=np.float16)
i = np.array([0, 0, 0, 1, 1, 1], dtype=np.int64)
check(x, i, src, "f16", 0, "sum")
check(x, i, src, "f16", 0, "mean")

# ---- dynamic dims ------------------------------------------------------------------
x = make((4, 3), "f32")
i = np.array([[0, 1, 2], [0, 1, 0], [3, 3, 3]], dtype=np.int64)
src = make((3, 3), "f32")
check(x, i, src, "f32", 0, "sum", shapes=[(None, 3), (None, None), (3, None)])
check(x, i, src, "f32", 0, "mean", False,
      shapes=[(None, None), (None, 3), (None, None)])

# ---- run-time errors -----------------------------------------------------------------
x = make((3, 4), "f64")
check_err(x, np.array([[0, 3]], dtype=np.int64), make((1, 2), "f64"), "f64", 0,
          [(3, 4), (1, 2), (1, 2)], "index 3 is out of bounds for dim 0 with size 3")
check_err(x, np.array([[0, -1]], dtype=np.int64), make((1, 2), "f64"), "f64", 1,
          [(3, 4), (1, 2), (1, 2)], "index -1 is out of bounds for dim 1 with size 4",
          reduce="sum")
check_err(x, s.randint(0, 2, 4, 2), make((4, 2), "f64"), "f64", 1,
          [(None, 4), (4, 2), (4, 2)], "exceeds self size")
check_err(x, s.randint(0, 2, 2, 3), make((2, 2), "f64"), "f64", 0,
          [(3, 4), (2, 3), (None, None)], "exceeds src size")

s.finish()
