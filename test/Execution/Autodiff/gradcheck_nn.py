# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules of kt.matmul (every rank case of
# torch.matmul, with batch broadcasting), kt.linear (ranks 1-3, with and
# without bias) and kt.embedding (duplicate indices accumulate, ? dims) against finite
# differences and torch.autograd in f64.

import numpy as np
import torch
from autodiff_helpers import GradSuite
from kiln_testing import ttype

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


MATMUL = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
          ((2, 2, 3), (3,)), ((3,), (2, 3, 4)), ((2, 2, 3), (3, 4)),
          ((2, 3), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2)), ((2, 2, 3), (2, 3, 2))]
for sa, sb in MATMUL:
    a, b = rnd(*sa), rnd(*sb)
    r = torch.matmul(torch.from_numpy(a), torch.from_numpy(b))
    tr = ttype(r.shape, "f64")
    s.gradcheck("matmul %s %s" % (sa, sb),
                ["%%0 = kt.matmul %%arg0, %%arg1 : (%s, %s) -> %s"
                 % (ttype(sa, "f64"), ttype(sb, "f64"), tr),
                 "return %%0 : %s" % tr], [a, b], [tr], torch.matmul)

for xs in [(3,), (2, 3), (2, 2, 3)]:
    for bias in [False, True]:
        x, w, b = rnd(*xs), rnd(4, 3), rnd(4)
        ins = [x, w, b] if bias else [x, w]
        rs = xs[:-1] + (4,)
        tr = ttype(rs, "f64")
        types = ", ".join(ttype(v.shape, "f64") for v in ins)
        ops = "%arg0, %arg1, %arg2" if bias else "%arg0, %arg1"
        s.gradcheck("linear %s bias=%s" % (xs, bias),
                    ["%%0 = kt.linear %s : (%s) -> %s" % (ops, types, tr),
                     "return %%0 : %s" % tr], ins, [tr], F.linear)

for idx_shape in [(5,), (2, 3), ()]:
    w = rnd(4, 3)
    idx = s.randint(0, 4, *idx_shape)
    if idx_shape == (5,):
        idx[:] = [1, 3, 1, 0, 1]  # duplicates accumulate
    tr = ttype(idx_shape + (3,), "f64")
    s.gradcheck("embedding %s" % (idx_shape,),
                ["%%0 = kt.embedding %%arg0, %%arg1 : (%s, %s) -> %s"
                 % (ttype((4, 3), "f64"), ttype(idx_shape, "i64"), tr),
                 "return %%0 : %s" % tr], [w, idx], [tr],
                lambda w_, i_: F.embedding(i_, w_))
# A `?` row count and `?` index dims, i32 indices: the rule scatters the
# gradient rows back with kt.scatter (the one-hot rule before needed a
# static weight and was quadratic).
w, idx = rnd(4, 3), np.array([[3, 0, 3], [1, 3, 2]], np.int32)
s.gradcheck("embedding dynamic",
            ["%0 = kt.embedding %arg0, %arg1 : (tensor<?x3xf64>, tensor<?x?xi32>) -> tensor<?x?x3xf64>",
             "return %0 : tensor<?x?x3xf64>"], [w, idx], ["tensor<?x?x3xf64>"],
            lambda w_, i_: F.embedding(i_.long(), w_),
            arg_types=["tensor<?x3xf64>", "tensor<?x?xi32>"])
s.finish()
