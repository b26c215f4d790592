# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the vector-Jacobian rules that divide by an element count when the
# counted dims are dynamic (`?`, as in every entry the runtime compiles for a
# second batch size): mean (over a `?` dim, every dim, with keepdim), var
# (correction 0 and 1), layer_norm over `?` normalized dims, and
# cross_entropy with probability targets under mean reduction; the count is
# read when the gradient runs. And kt.reshape with size operands (two `?`
# dims merged and split again, x.view(B * T, C) / view(B, T, H, D)): its
# gradient is a reshape back to the input's `?` dims (tensor.dim of it).
# Against torch.autograd in f64.

import numpy as np
import torch
from autodiff_helpers import GradSuite

s = GradSuite(__file__)
F = torch.nn.functional


def rnd(*shape):
    return s.randn(*shape, dtype=np.float64)


def T(*dims):
    return "tensor<%sf64>" % "".join("%sx" % d for d in dims)


x = rnd(5, 3)
for attrs, rt, fn in [
        ("dim = [0]", T(3), lambda a: a.mean(0)),
        ("", T(), lambda a: a.mean()),
        ("dim = [0, 1], keepdim = true", T(1, 1),
         lambda a: a.mean((0, 1), keepdim=True))]:
    a = " {%s}" % attrs if attrs else ""
    s.gradcheck("mean over ? %s" % attrs,
                ["%%0 = kt.mean %%arg0%s : (%s) -> %s" % (a, T("?", 3), rt),
                 "return %%0 : %s" % rt], [x], [rt], fn,
                arg_types=[T("?", 3)])

for corr in [0.0, 1.0]:
    s.gradcheck("var over ? correction=%s" % corr,
                ["%%0 = kt.var %%arg0 {dim = [0], correction = %s : f64} : (%s) -> %s"
                 % (corr, T("?", 3), T(3)), "return %%0 : %s" % T(3)],
                [x], [T(3)],
                lambda a, c=corr: ((a - a.mean(0)) ** 2).sum(0) / (a.shape[0] - c),
                arg_types=[T("?", 3)])

y = rnd(2, 5)
s.gradcheck("layer_norm over ?",
            ["%%0 = kt.layer_norm %%arg0 {normalized_shape = [5], eps = 1.0e-3 : f64} : (%s) -> %s"
             % (T(2, "?"), T(2, "?")), "return %%0 : %s" % T(2, "?")],
            [y], [T(2, "?")], lambda a: F.layer_norm(a, [5], eps=1e-3),
            arg_types=[T(2, "?")])

logits, probs = rnd(4, 3), np.abs(rnd(4, 3))
probs /= probs.sum(1, keepdims=True)
s.gradcheck("cross_entropy probabilities mean over ?",
            ["%%0 = kt.cross_entropy %%arg0, %%arg1 : (%s, %s) -> %s"
             % (T("?", 3), T("?", 3), T()), "return %%0 : %s" % T()],
            [logits, probs], [T()],
            lambda a, t: -(t * F.log_softmax(a, 1)).sum(1).mean(),
            arg_types=[T("?", 3), T("?", 3)])

# kt.reshape with -2 entries: [B, T, 6] -> [B * T, 6] (times w) ->
# [B, T, 2, 3], B and T dynamic; two sizes of the same text.
W = rnd(6)
RESHAPE = [
    "%c0 = arith.constant 0 : index",
    "%c1 = arith.constant 1 : index",
    "%b = tensor.dim %arg0, %c0 : " + T("?", "?", 6),
    "%t = tensor.dim %arg0, %c1 : " + T("?", "?", 6),
    "%bt = arith.muli %b, %t : index",
    "%%0 = kt.reshape %%arg0, %%bt {shape = [-2, 6]} : (%s, index) -> %s"
    % (T("?", "?", 6), T("?", 6)),
    "%%1 = kt.mul %%0, %%arg1 : (%s, %s) -> %s" % (T("?", 6), T(6), T("?", 6)),
    "%%2 = kt.reshape %%1, %%b, %%t {shape = [-2, -2, 2, -1]} : (%s, index, index) -> %s"
    % (T("?", 6), T("?", "?", 2, 3)),
    "return %%2 : %s" % T("?", "?", 2, 3)]
for shape in [(2, 3, 6), (4, 1, 6)]:
    s.gradcheck("reshape with size operands %s" % (shape,), RESHAPE,
                [rnd(*shape), W], [T("?", "?", 2, 3)],
                lambda a, w: (a.reshape(-1, 6) * w).reshape(
                    a.shape[0], a.shape[1], 2, 3),
                arg_types=[T("?", "?", 6), T(6)])

s.finish()
