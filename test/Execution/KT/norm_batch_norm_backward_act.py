# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.batch_norm_backward with an activation folded in
# (`activation = #kt.activation<relu>` / `<relu6>`, the bias operand) on the
# interpreter and the CPU backend against torch.autograd of
# relu(F.batch_norm(training=True)) / F.relu6(...) in float64: grad_input,
# grad_weight and grad_bias of the pair, given the gradient of the
# activation's result. Odd shapes, batch 1, channels not a multiple of 16
# (17, 19, 33), rank 2 to 5, weight and bias absent, f32 and f64, a `?`
# batch (several sizes at run time), activation none with a bias refused
# by the verifier (norm-invalid.mlir), the run-time check of the bias'
# channels.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text

s = Suite(__file__, cpu=True)

TOL = {"f32": dict(rtol=2e-5, atol=2e-5), "f64": dict(rtol=1e-10, atol=1e-10)}
ACT = {"relu": F.relu, "relu6": F.relu6, "none": lambda y: y}


def t(v):
    return torch.from_numpy(np.asarray(v, dtype=np.float64))


def stats(x, eps):
    _, m, r = torch.native_batch_norm(t(x), None, None, None, None, True,
                                      0.1, eps)
    return m.numpy(), r.numpy()


def ref(g, x, w, b, act, eps):
    """gx, gw, gb of act(F.batch_norm(x, w, b, training=True)) by autograd;
    a weight of ones / bias of zeros when absent (their gradients are what
    grad_weight / grad_bias return)."""
    c = x.shape[1]
    xt = t(x).requires_grad_(True)
    wt = (t(w) if w is not None else torch.ones(c, dtype=torch.float64))
    bt = (t(b) if b is not None else torch.zeros(c, dtype=torch.float64))
    wt.requires_grad_(True)
    bt.requires_grad_(True)
    y = ACT[act](F.batch_norm(xt, None, None, wt, bt, True, 0.1, eps))
    gx, gw, gb = torch.autograd.grad(y, (xt, wt, bt), t(g))
    return [gx.numpy(), gw.numpy(), gb.numpy()]


def data(shape, elem, weight, bias):
    np_t = np.float64 if elem == "f64" else np.float32
    c = shape[1]
    x = (s.randn(*shape, dtype=np.float64) * 1.5 - 0.7).astype(np_t)
    g = s.randn(*shape, dtype=np.float64).astype(np_t)
    # |weight| up to ~6 and biases around 2: results on both sides of 0
    # and of 6 in every channel.
    w = (s.randn(c, dtype=np.float64) * 3).astype(np_t) if weight else None
    b = (s.randn(c, dtype=np.float64) + 2).astype(np_t) if bias else None
    return g, x, w, b


def operands(weight, bias):
    text, i = "%arg0, %arg1, %arg2, %arg3", 4
    if weight:
        text += " weight %%arg%d" % i
        i += 1
    if bias:
        text += " bias %%arg%d" % i
    return text


def check(shape, act, elem="f32", weight=True, bias=True, eps=1e-5,
          label="", edit=None):
    c = shape[1]
    g, x, w, b = data(shape, elem, weight, bias)
    if edit:
        edit(w, b)
    se = elem
    m, r = stats(x.astype(np.float64), eps)
    m, r = m.astype(x.dtype), r.astype(x.dtype)
    exp = ref(g.astype(np.float64), x.astype(np.float64),
              None if w is None else w.astype(np.float64),
              None if b is None else b.astype(np.float64), act, eps)
    inputs = [g, x, m, r] + [v for v in (w, b) if v is not None]
    attrs = "" if act == "none" else "activation = #kt.activation<%s>" % act
    s.check_op("kt.batch_norm_backward", inputs, exp,
               [ttype(shape, elem), ttype((c,), elem), ttype((c,), elem)],
               attrs=attrs,
               elems=[elem, elem, se, se] + [elem] * (len(inputs) - 4),
               operands=operands(weight, bias and act != "none"),
               label="batch_norm_backward %s %s %s %s w=%s b=%s" % (
                   act, label, elem, shape, weight, bias), **TOL[elem])


SHAPES = [(4, 3), (3, 5, 7), (2, 17, 5, 3), (1, 19, 4, 5), (1, 3, 7),
          (2, 33, 3, 3, 2), (5, 1, 2, 2)]
for act in ["relu", "relu6"]:
    for shape in SHAPES:
        check(shape, act)
    check((3, 17, 5), act, weight=False)
    check((3, 17, 5), act, bias=False)
    check((2, 4, 3), act, weight=False, bias=False)
    check((2, 19, 3, 5), act, elem="f64")
    check((1, 3, 4, 4), act, elem="f64", label="batch 1")
for shape in [(2, 17, 5, 3), (1, 19, 4, 5)]:
    check(shape, "none", bias=False)


# Channels of weight 0 (y = bias everywhere: every element kept or none),
# of negative weight (the mask's interval of x flips), a bias at 6.5 (none
# kept by relu6) and -1 (none by either).
def zero_weights(w, b):
    w[0], b[0] = 0, 2
    w[1], b[1] = 0, 6.5
    w[2], b[2] = 0, -1
    w[3], b[3] = -2, 1
    w[4], b[4] = -0.5, 5.5


for act in ["relu", "relu6"]:
    check((3, 6, 5), act, edit=zero_weights, label="zero weights")
    check((3, 6, 5), act, elem="f64", edit=zero_weights, label="zero weights")

# A `?` batch: one module, several batch sizes (1 among them).
c = 19
for act in ["relu", "relu6"]:
    mlir = func_text(
        "main", ["tensor<?x19x5xf32>", "tensor<?x19x5xf32>",
                 "tensor<19xf32>", "tensor<19xf32>", "tensor<19xf32>",
                 "tensor<?xf32>"],
        ["tensor<?x19x5xf32>", "tensor<19xf32>", "tensor<19xf32>"],
        ["%0:3 = kt.batch_norm_backward %arg0, %arg1, %arg2, %arg3 weight "
         "%arg4 bias %arg5 {activation = #kt.activation<" + act + ">} : "
         "(tensor<?x19x5xf32>, tensor<?x19x5xf32>, tensor<19xf32>, "
         "tensor<19xf32>, tensor<19xf32>, tensor<?xf32>) -> "
         "(tensor<?x19x5xf32>, tensor<19xf32>, tensor<19xf32>)",
         "return %0#0, %0#1, %0#2 : tensor<?x19x5xf32>, tensor<19xf32>, "
         "tensor<19xf32>"])
    for n in (1, 3, 8):
        g, x, w, b = data((n, c, 5), "f32", True, True)
        m, r = stats(x.astype(np.float64), 1e-5)
        m, r = m.astype(np.float32), r.astype(np.float32)
        s.check("batch_norm_backward %s dynamic N=%d" % (act, n), mlir,
                [g, x, m, r, w, b],
                ref(g, x, w, b, act, 1e-5), **TOL["f32"])
    s.check_error("batch_norm_backward %s ? bias shape" % act, mlir,
                  [g, x, m, r, w, b[:5]], "bias shape [5] does not match the "
                  "19 channels of input at run time")
s.finish()
