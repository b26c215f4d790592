# RUN: %python %s
# The same checks on the IR after kiln-decompose (composites expanded):
# RUN: env KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' %python %s
# REQUIRES: numpy, torch
# Tests kt.layer_norm and kt.batch_norm (inference form) against PyTorch in
# float64: optional weight/bias, several normalized shapes and ranks, eps,
# every float dtype, dynamic dims and run-time shape errors.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, to_bf16, single_op_module, func_text

s = Suite(__file__, cpu=True)


def T(x):
    return None if x is None else torch.from_numpy(np.asarray(x, dtype=np.float64))


def cast(x, elem):
    if elem == "f16":
        return x.astype(np.float16)
    if elem == "bf16":
        return to_bf16(x)
    if elem == "f64":
        return x.astype(np.float64)
    return x.astype(np.float32)


def keyword_operands(fixed, w, b):
    """Operand text: `fixed` positional operands, then `weight`/`bias`."""
    names = ["%%arg%d" % i for i in range(fixed + int(w) + int(b))]
    text = ", ".join(names[:fixed])
    rest = names[fixed:]
    if w:
        text += " weight " + rest.pop(0)
    if b:
        text += " bias " + rest.pop(0)
    return text


def layer_norm(shape, ns, elem, w=True, b=True, eps=None):
    x = cast(s.randn(*shape) * 2 + 0.5, elem)
    wt = cast(s.randn(*ns), elem) if w else None
    bt = cast(s.randn(*ns), elem) if b else None
    ins = [a for a in (x, wt, bt) if a is not None]
    attrs = "normalized_shape = [%s]" % ", ".join(map(str, ns))
    operands = keyword_operands(1, w, b)
    if eps is not None:
        attrs += ", eps = %r" % eps
    exp = F.layer_norm(T(x), list(ns), T(wt), T(bt),
                       1e-5 if eps is None else eps).numpy()
    s.check_op("kt.layer_norm", ins, exp, [ttype(shape, elem)], attrs=attrs,
               elems=[elem] * len(ins), elem=elem if elem == "bf16" else None,
               operands=operands)


for elem in ["f32", "f64"]:
    for w in [True, False]:
        for b in [True, False]:
            layer_norm((2, 3, 4), (4,), elem, w, b)
            layer_norm((2, 3, 4), (3, 4), elem, w, b)
    layer_norm((5,), (5,), elem)
    layer_norm((3, 6), (6,), elem, eps=0.1)
    layer_norm((2, 2, 3, 4), (2, 3, 4), elem, eps=1e-3)
    layer_norm((2, 1), (1,), elem)   # a single element: var 0 -> bias
layer_norm((4, 8), (8,), "f16")
layer_norm((3, 2, 5), (2, 5), "f16", b=False)
layer_norm((4, 8), (8,), "bf16")
layer_norm((3, 5), (5,), "bf16", w=False)

# dynamic dims
x = s.randn(3, 4)
mlir = func_text("main", ["tensor<?x?xf32>"], ["tensor<?x?xf32>"], [
    "%r = kt.layer_norm %arg0 {normalized_shape = [4]} : (tensor<?x?xf32>) -> tensor<?x?xf32>",
    "return %r : tensor<?x?xf32>"])
s.check("layer_norm dynamic", mlir, [x], F.layer_norm(T(x), [4]).numpy())
s.check_error("layer_norm dynamic mismatch", mlir, [s.randn(3, 5)],
              "does not match the trailing dims")


def batch_norm(shape, elem, w=True, b=True, eps=None):
    c = shape[1]
    x = cast(s.randn(*shape) * 2 + 1, elem)
    mean = cast(s.randn(c), elem)
    var = cast(s.uniform(0.2, 3.0, c), elem)
    wt = cast(s.randn(c), elem) if w else None
    bt = cast(s.randn(c), elem) if b else None
    ins = [a for a in (x, mean, var, wt, bt) if a is not None]
    attrs = "eps = %r" % eps if eps is not None else ""
    exp = F.batch_norm(T(x), T(mean), T(var), T(wt), T(bt), training=False,
                       eps=1e-5 if eps is None else eps).numpy()
    s.check_op("kt.batch_norm", ins, exp, [ttype(shape, elem)], attrs=attrs,
               elems=[elem] * len(ins), elem=elem if elem == "bf16" else None,
               operands=keyword_operands(3, w, b))


for elem in ["f32", "f64"]:
    for w in [True, False]:
        for b in [True, False]:
            batch_norm((4, 3), elem, w, b)
            batch_norm((2, 3, 5), elem, w, b)
    batch_norm((2, 4, 3, 3), elem, eps=0.5)
    batch_norm((1, 2, 2, 2, 3), elem)
    batch_norm((0, 3, 2), elem)
batch_norm((2, 3, 4), "f16")
batch_norm((2, 3, 4), "bf16", b=False)

# zero variance with eps; dynamic dims and a run-time channel mismatch
x = s.randn(2, 3, 4)
m, v = np.zeros(3, np.float32), np.zeros(3, np.float32)
s.check_op("kt.batch_norm", [x, m, v],
           F.batch_norm(T(x), T(m), T(v), training=False, eps=1e-5).numpy(),
           [ttype(x.shape, "f32")])
mlir = func_text("main", ["tensor<?x?x?xf32>", "tensor<?xf32>", "tensor<?xf32>"],
                 ["tensor<?x?x?xf32>"], [
    "%r = kt.batch_norm %arg0, %arg1, %arg2 : (tensor<?x?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>",
    "return %r : tensor<?x?x?xf32>"])
mean, var = s.randn(3), s.uniform(0.5, 2, 3)
s.check("batch_norm dynamic", mlir, [x, mean, var],
        F.batch_norm(T(x), T(mean), T(var), training=False).numpy())
s.check_error("batch_norm channel mismatch", mlir, [x, s.randn(4), var],
              "running_mean shape [4] does not match the 3 channels")
s.finish()
