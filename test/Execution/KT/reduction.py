# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the kt reductions (sum mean amax amin prod var logsumexp any all
# argmax argmin) against PyTorch in float64: shapes (rank 0, empty dims),
# dim lists (absent, negative, several), keepdim, every supported dtype, NaN /
# inf / ties, and the run-time errors of empty amax/argmax.

import numpy as np
import torch
from kiln_testing import Suite, ttype, single_op_module, to_bf16, func_text

from reduction_helpers import (FLOATS, NP, bf16, check, make, module, norm_dims, ref, result_elem)
import reduction_helpers

s = Suite(__file__, cpu=True)
reduction_helpers.use_suite(s)
ALL = FLOATS + ["i64", "i32", "i1"]
FLOAT_OPS = ["sum", "prod", "mean", "amax", "amin", "var", "logsumexp", "any", "all"]
INT_OPS = ["sum", "prod", "amax", "amin", "any", "all"]
CASES = [((2, 3, 4), [1], False), ((2, 3, 4), [-1, 0], True), ((2, 3, 4), None, False),
         ((2, 3, 4), None, True), ((5,), [0], False), ((), None, False), ((), [0], True),
         ((2, 0, 3), [1], False), ((2, 0, 3), [0, 2], True), ((3, 4), [], False),
         ((4, 6), [-2], False), ((2, 3, 2, 2), [3, 1], True)]


def check_many(ops, x, elem, dims, keepdim):
    """All `ops` on one input in one function (one kiln-run)."""
    rank = x.ndim
    nd = norm_dims(dims, rank)
    shape = [1 if i in nd else d for i, d in enumerate(x.shape)] if keepdim else \
        [d for i, d in enumerate(x.shape) if i not in nd]
    attrs = []
    if dims is not None:
        attrs.append("dim = [%s]" % ", ".join(map(str, dims)))
    if keepdim:
        attrs.append("keepdim = true")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    t = ttype(x.shape, elem)
    lines, rts, expected = [], [], []
    if rank == 0:
        v = x.item()
        lit = ("true" if v else "false") if elem == "i1" else (
            repr(float(v)) if elem in FLOATS else str(int(v)))
        lines.append("%%c = kt.constant {value = dense<%s> : %s} : () -> %s" % (lit, t, t))
        src, args, ins = "%c", [], []
    else:
        src, args, ins = "%arg0", [t], [x]
    for i, op in enumerate(ops):
        relem = result_elem(op, elem)
        rt = ttype(shape, relem)
        rts.append(rt)
        lines.append("%%r%d = kt.%s %s%s : (%s) -> %s" % (i, op, src, attr, t, rt))
        e = np.asarray(ref(op, x, dims, keepdim)).reshape(shape)
        if relem == "i1":
            e = e.astype(np.bool_)
        elif relem == "i64":
            e = e.astype(np.int64)
        expected.append(e)
    lines.append("return %s : %s" % (", ".join("%%r%d" % i for i in range(len(ops))),
                                     ", ".join(rts)))
    mlir = func_text("main", args, rts, lines)
    s.check("%s %s %s dim=%s keepdim=%s" % (ops, elem, x.shape, dims, keepdim),
            mlir, ins, expected, elem=elem if elem in FLOATS else None)


for elem in ALL:
    for shape, dims, keepdim in CASES:
        ops = FLOAT_OPS if elem in FLOATS else INT_OPS
        if 0 in shape and (dims is None or dims == [] or any(shape[d] == 0 for d in dims)):
            ops = [o for o in ops if o not in ("amax", "amin")]
        if elem in FLOATS:
            x = s.uniform(0.5, 1.5, *shape, dtype=NP[elem]) * \
                np.where(s.uniform(0, 1, *shape) < 0.3, -1, 1).astype(NP[elem])
            x = bf16(x) if elem == "bf16" else x
        else:
            x = make(shape, elem)
        check_many(ops, x, elem, dims, keepdim)
s.finish()
