# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of kt reductions (sum, mean, amax, amin,
# prod, var, logsumexp, cumsum, cumprod, logcumsumexp) over several dims, with and without keepdim, against
# finite differences and torch.autograd in f64; ties of amax/amin (gradient
# split evenly) and zeros of prod checked against torch only.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)


def reduce_out_shape(shape, dims, keepdim):
    if dims is None:
        dims = list(range(len(shape)))
    dims = [d % len(shape) for d in dims] if shape else []
    return tuple((1 if keepdim else None) if i in dims else n
                 for i, n in enumerate(shape) if keepdim or i not in dims)


def check(op, x, dims, keepdim, torch_fn, extra="", **kw):
    attrs = []
    if dims is not None:
        attrs.append("dim = [%s]" % ", ".join(str(d) for d in dims))
    attrs.append("keepdim = %s" % ("true" if keepdim else "false"))
    if extra:
        attrs.append(extra)
    rs = reduce_out_shape(x.shape, dims, keepdim)
    tx, tr = ttype(x.shape, "f64"), ttype(rs, "f64")
    s.gradcheck("%s %s dim=%s keepdim=%s %s" % (op, x.shape, dims, keepdim, extra),
                ["%%0 = %s %%arg0 {%s} : (%s) -> %s" % (op, ", ".join(attrs), tx, tr),
                 "return %%0 : %s" % tr], [x], [tr], torch_fn, **kw)


def tdims(x, dims):
    return list(range(x.dim())) if dims is None else dims


def tprod(t, dims, keepdim):
    ds = sorted([d % t.dim() for d in tdims(t, dims)], reverse=True)
    for d in ds:
        t = t.prod(d, keepdim=True)
    if not keepdim:
        for d in ds:
            t = t.squeeze(d)
    return t


CASES = [((3, 4), None), ((3, 4), [1]), ((2, 3, 4), [0, 2]), ((2, 3, 4), [-1]),
         ((5,), [0])]
for shape, dims in CASES:
    for keepdim in [False, True]:
        x = s.randn(*shape, dtype=np.float64)
        check("kt.sum", x, dims, keepdim,
              lambda t: torch.sum(t, tdims(t, dims), keepdim=keepdim))
        check("kt.mean", x, dims, keepdim,
              lambda t: torch.mean(t, tdims(t, dims), keepdim=keepdim))
        check("kt.amax", x, dims, keepdim,
              lambda t: torch.amax(t, tdims(t, dims), keepdim=keepdim))
        check("kt.amin", x, dims, keepdim,
              lambda t: torch.amin(t, tdims(t, dims), keepdim=keepdim))
        check("kt.prod", x, dims, keepdim, lambda t: tprod(t, dims, keepdim))
        check("kt.logsumexp", x, dims, keepdim,
              lambda t: torch.logsumexp(t, tdims(t, dims), keepdim=keepdim))
        for corr in [1.0, 0.0]:
            check("kt.var", x, dims, keepdim,
                  lambda t: torch.var(t, tdims(t, dims), unbiased=corr == 1.0,
                                      keepdim=keepdim),
                  extra="correction = %s : f64" % corr)

# Rank 0.
x = np.array(1.5)
check("kt.sum", x, None, False, lambda t: t.sum())
check("kt.amax", x, None, False, lambda t: t.amax())

# Ties: amax/amin split the gradient evenly among equal extrema.
x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, 4.0, 5.0]])
check("kt.amax", x, [1], False, lambda t: torch.amax(t, 1), fd=False)
check("kt.amin", x, [1], True, lambda t: torch.amin(t, 1, keepdim=True), fd=False)
check("kt.amax", x, None, False, lambda t: torch.amax(t), fd=False)

# prod with zeros: one zero in a row (product of the others), two zeros (0).
x = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [1.0, 2.0, 3.0, 4.0]])
check("kt.prod", x, [1], False, lambda t: torch.prod(t, 1), fd=False)
check("kt.prod", x, [0], True, lambda t: torch.prod(t, 0, keepdim=True), fd=False)
# Cumulative scans (cumsum, cumprod, logcumsumexp) along each dim, negative
# dims and rank 0; cumprod with zeros (one zero: the products of the others
# at it and 0 after it; two zeros) checked against torch only.


def scan(op, x, dim, torch_fn, **kw):
    t = ttype(x.shape, "f64")
    s.gradcheck("%s %s dim=%d" % (op, x.shape, dim),
                ["%%0 = %s %%arg0 {dim = %d} : (%s) -> %s" % (op, dim, t, t),
                 "return %%0 : %s" % t], [x], [t], torch_fn, **kw)


for op, fn in (("kt.cumsum", torch.cumsum), ("kt.cumprod", torch.cumprod),
               ("kt.logcumsumexp", torch.logcumsumexp)):
    for shape, dim in (((6,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1), ((), 0)):
        x = s.randn(*shape, dtype=np.float64) if shape else np.array(0.75)
        scan(op, x, dim, lambda t, fn=fn, dim=dim: fn(t, dim))
x = np.array([[1.5, 0.0, 2.0, -1.0, 0.5], [0.0, 3.0, 0.0, 2.0, 1.0],
              [1.0, 2.0, 3.0, 4.0, 0.0], [2.0, 0.0, 0.0, 3.0, 1.0]])
scan("kt.cumprod", x, 1, lambda t: torch.cumprod(t, 1), fd=False)
scan("kt.cumprod", x, 0, lambda t: torch.cumprod(t, 0), fd=False)
# logcumsumexp with -inf inputs and large values (the log-space backward).
x = np.array([[-np.inf, 1.0, 2.0, -np.inf], [500.0, 501.0, -500.0, 0.0]])
scan("kt.logcumsumexp", x, 1, lambda t: torch.logcumsumexp(t, 1), fd=False)
s.finish()
