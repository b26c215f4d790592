# RUN: %python %s
# REQUIRES: numpy, torch
# Gradient checks of kt.slice_scatter and kt.select_scatter (the ops
# kiln-functionalize writes for writes through views): kiln-autodiff's rules
# against finite differences and torch.autograd (torch.slice_scatter /
# torch.select_scatter), for steps, negative bounds and indices.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


def check(op, x, v, attrs, torch_fn):
    tx, tv = ttype(x.shape, "f64"), ttype(v.shape, "f64")
    s.gradcheck("%s {%s} %s %s" % (op, attrs, x.shape, v.shape),
                ["%%0 = %s %%arg0, %%arg1 {%s} : (%s, %s) -> %s" % (
                    op, attrs, tx, tv, tx),
                 "return %%0 : %s" % tx], [x, v], [tx], torch_fn)


for shape, dim, start, end, step in [((6, 4), 0, 1, 5, 2), ((3, 7), 1, -5, None, 3),
                                     ((2, 3, 5), -1, None, -1, 1)]:
    x = rnd(*shape)
    sl = [slice(None)] * len(shape)
    sl[dim] = slice(start, end, step)
    v = rnd(*x[tuple(sl)].shape)
    attrs = ["dim = %d : i64" % dim, "step = %d : i64" % step]
    if start is not None:
        attrs.append("start = %d : i64" % start)
    if end is not None:
        attrs.append("end = %d : i64" % end)
    check("kt.slice_scatter", x, v, ", ".join(attrs),
          lambda t, u, dim=dim, start=start, end=end, step=step:
          torch.slice_scatter(t, u, dim, start, end, step))

for shape, dim, index in [((3, 4), 0, -1), ((2, 3, 4), 1, 2)]:
    x = rnd(*shape)
    v = rnd(*np.take(x, 0, axis=dim).shape)
    check("kt.select_scatter", x, v, "dim = %d : i64, index = %d : i64" % (dim, index),
          lambda t, u, dim=dim, index=index: torch.select_scatter(t, u, dim, index))

s.finish()
