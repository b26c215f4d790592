# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of kt shape ops (reshape, transpose,
# permute, expand, squeeze, unsqueeze, slice with steps and negative bounds,
# select, concat, stack, pad with negative pads, flip, gather and
# index_select with repeated indices, scatter with every reduce that has a
# gradient) against finite differences and
# torch.autograd in f64.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


def one(op, x, attrs, torch_fn, extra_inputs=(), extra_types=()):
    """`op` on x (and extra inputs), result type from torch_fn."""
    ins = [x] + list(extra_inputs)
    ts = [torch.from_numpy(np.asarray(v)) for v in ins]
    rs = tuple(torch_fn(*ts).shape)
    tr = ttype(rs, "f64")
    types = [ttype(x.shape, "f64")] + list(extra_types)
    operands = ", ".join("%%arg%d" % i for i in range(len(ins)))
    s.gradcheck("%s {%s} %s" % (op, attrs, x.shape),
                ["%%0 = %s %s {%s} : (%s) -> %s" % (op, operands, attrs,
                                                    ", ".join(types), tr),
                 "return %%0 : %s" % tr], ins, [tr], torch_fn)


x = rnd(2, 3, 4)
one("kt.reshape", x, "shape = [4, -1]", lambda t: t.reshape(4, -1))
one("kt.transpose", x, "dim0 = 0 : i64, dim1 = -1 : i64", lambda t: t.transpose(0, -1))
one("kt.permute", x, "dims = [1, 2, 0]", lambda t: t.permute(1, 2, 0))
one("kt.expand", rnd(3, 1), "size = [2, -1, 4]", lambda t: t.expand(2, -1, 4))
one("kt.squeeze", rnd(2, 1, 3, 1), "dim = [1]", lambda t: t.squeeze(1))
one("kt.squeeze", rnd(2, 1, 3, 1), "", lambda t: t.squeeze())
one("kt.unsqueeze", x, "dim = -2 : i64", lambda t: t.unsqueeze(-2))
for start, end, step in [(1, 3, 1), (0, 7, 2), (-5, None, 3), (1, -1, 2), (None, None, 4)]:
    attrs = ["dim = 1 : i64", "step = %d : i64" % step]
    if start is not None:
        attrs.append("start = %d : i64" % start)
    if end is not None:
        attrs.append("end = %d : i64" % end)
    one("kt.slice", rnd(2, 7), ", ".join(attrs),
        lambda t: t[:, slice(start, end, step)])
one("kt.select", x, "dim = 1 : i64, index = -1 : i64", lambda t: t.select(1, -1))
one("kt.select", rnd(5), "dim = 0 : i64, index = 2 : i64", lambda t: t.select(0, 2))
one("kt.pad", rnd(3, 4), "pad = [1, 2, -1, 0]", lambda t: F.pad(t, [1, 2, -1, 0]))
one("kt.pad", rnd(2, 3, 4), "pad = [0, 1, 2, 0], value = 3.0 : f64",
    lambda t: F.pad(t, [0, 1, 2, 0], value=3.0))
one("kt.flip", x, "dims = [0, 2]", lambda t: t.flip([0, 2]))

# concat / stack of three operands.
a, b, c = rnd(2, 3), rnd(2, 1), rnd(2, 2)
s.gradcheck("concat dim 1",
            ["%0 = kt.concat %arg0, %arg1, %arg2 {dim = 1 : i64} : (tensor<2x3xf64>, tensor<2x1xf64>, tensor<2x2xf64>) -> tensor<2x6xf64>",
             "return %0 : tensor<2x6xf64>"], [a, b, c], ["tensor<2x6xf64>"],
            lambda *t: torch.cat(t, 1))
a, b = rnd(2, 3), rnd(2, 3)
s.gradcheck("stack dim -1",
            ["%0 = kt.stack %arg0, %arg1, %arg0 {dim = -1 : i64} : (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3x3xf64>",
             "return %0 : tensor<2x3x3xf64>"], [a, b], ["tensor<2x3x3xf64>"],
            lambda p, q: torch.stack([p, q, p], -1))

# gather: repeated indices accumulate; index smaller than self in other dims.
x = rnd(3, 4)
for dim, idx in [(1, np.array([[0, 0, 3], [1, 2, 1]])), (0, np.array([[2, 0, 2, 1]])),
                 (-1, np.array([[3], [3], [0]]))]:
    one("kt.gather", x, "dim = %d : i64" % dim, lambda t, i: torch.gather(t, dim, i),
        [idx], [ttype(idx.shape, "i64")])
# gather with `?` dims (its rule scatters the gradient back with kt.scatter;
# the one-hot rule before needed static shapes), and rank 0.
gi = np.array([[0, 0, 3], [1, 2, 1], [3, 3, 0]])
s.gradcheck("kt.gather dynamic",
            ["%0 = kt.gather %arg0, %arg1 {dim = 1 : i64} : (tensor<?x?xf64>, tensor<?x?xi64>) -> tensor<?x?xf64>",
             "return %0 : tensor<?x?xf64>"], [x, gi], ["tensor<?x?xf64>"],
            lambda t, i: torch.gather(t, 1, i),
            arg_types=["tensor<?x?xf64>", "tensor<?x?xi64>"])
one("kt.gather", rnd(), "dim = 0 : i64", lambda t, i: torch.gather(t, 0, i),
    [np.array(0)], ["tensor<i64>"])
# sort's values: kt.gather at kt.argsort's permutation (descending, a `?` dim).
s.gradcheck("sort values (argsort + gather)",
            ["%i = kt.argsort %arg0 {dim = 0 : i64, descending = true} : (tensor<?x4xf64>) -> tensor<?x4xi64>",
             "%0 = kt.gather %arg0, %i {dim = 0 : i64} : (tensor<?x4xf64>, tensor<?x4xi64>) -> tensor<?x4xf64>",
             "return %0 : tensor<?x4xf64>"], [x], ["tensor<?x4xf64>"],
            lambda t: torch.sort(t, dim=0, descending=True).values,
            arg_types=["tensor<?x4xf64>"])
for dim, idx in [(0, np.array([2, 0, 2])), (1, np.array([1, 1, 3, 0, 1]))]:
    one("kt.index_select", x, "dim = %d : i64" % dim,
        lambda t, i: torch.index_select(t, dim, i), [idx], [ttype(idx.shape, "i64")])
one("kt.index_select", rnd(2, 3, 4), "dim = 1 : i64",
    lambda t, i: torch.index_select(t, 1, i), [np.array([2, 2])], ["tensor<2xi64>"])
# index_select with `?` dims and an i32 index (its rule scatters the gradient
# back with kt.scatter, as PyTorch's index_add; the one-hot rule before needed
# a static dim), and a rank-0 index.
s.gradcheck("kt.index_select dynamic",
            ["%0 = kt.index_select %arg0, %arg1 {dim = -1 : i64} : (tensor<?x?xf64>, tensor<?xi32>) -> tensor<?x?xf64>",
             "return %0 : tensor<?x?xf64>"], [rnd(3, 4), np.array([3, 0, 3, 3, 1], np.int32)],
            ["tensor<?x?xf64>"], lambda t, i: torch.index_select(t, -1, i.long()),
            arg_types=["tensor<?x?xf64>", "tensor<?xi32>"])
one("kt.index_select", rnd(4, 2), "dim = 0 : i64",
    lambda t, i: torch.index_select(t, 0, i), [np.array(3)], ["tensor<i64>"])

# scatter (reduce none, sum, mean; include_self): gradients of self and src,
# with repeated indices, an index narrower than src, a `?` dim.
import warnings  # noqa: E402
warnings.filterwarnings("ignore", "scatter_reduce")  # beta in PyTorch 1.13


def scatter_case(x, idx, src, dim, reduce, include_self, arg_types=None):
    attrs = "dim = %d : i64" % dim
    if reduce != "none":
        attrs += ", reduce = #kt.scatter_reduce<%s>" % reduce
    if not include_self:
        attrs += ", include_self = false"
    types = arg_types or [ttype(x.shape, "f64"), ttype(idx.shape, "i64"),
                          ttype(src.shape, "f64")]
    tr = types[0]

    def ref(t, i, u):
        if reduce == "none":
            return torch.scatter(t, dim, i, u)
        return torch.scatter_reduce(t, dim, i, u, reduce, include_self=include_self)
    s.gradcheck("kt.scatter {%s} %s" % (attrs, types),
                ["%%0 = kt.scatter %%arg0, %%arg1, %%arg2 {%s} : (%s) -> %s" % (
                    attrs, ", ".join(types), tr), "return %%0 : %s" % tr],
                [x, idx, src], [tr],
                ref if idx.shape == src.shape else None,
                arg_types=arg_types)


x, src = rnd(3, 4), rnd(3, 5)
idx = np.array([[0, 0, 3], [1, 2, 1], [3, 3, 3]])
for red in ("sum", "mean"):
    for inc in (True, False):
        scatter_case(x, idx, src, 1, red, inc)
        scatter_case(x, idx[:2] % 3, src, 0, red, inc)
# reduce none: PyTorch's gradient gives every src element its position's
# gradient, also one a later repeated index overwrites (finite differences
# give it 0), so its cases have distinct targets. PyTorch 1.13's scatter
# backward rejects an index narrower than src (its own shape check), so such
# cases are checked against finite differences only.
uniq = np.array([[0, 3, 1], [1, 2, 0], [3, 0, 2]])
scatter_case(x, uniq, src, 1, "none", True)
scatter_case(x, uniq[:2] % 3, src, 0, "none", True)
scatter_case(x, uniq, x, 1, "none", True)
scatter_case(x, idx, rnd(3, 3), -1, "mean", False,
             arg_types=["tensor<?x4xf64>", "tensor<?x3xi64>", "tensor<?x3xf64>"])
scatter_case(rnd(), np.array(0), rnd(), 0, "sum", True)
s.finish()
