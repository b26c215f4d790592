# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.searchsorted against torch.searchsorted: every numeric dtype, left
# and right, a 1-D sequence with values of rank 0..2, N-D sequences with
# matching leading dims, duplicates, exact matches, values below/above every
# element, NaN and infinities (values and sequence), unsorted sequences
# (PyTorch's binary search step for step), an empty sequence and empty
# values, `?` dims and the run-time error for leading dims that differ; the
# interpreter and the CPU backend.

import math
import re

import numpy as np
import torch
from elementwise_helpers import FLOATS, INTS, as_dtype, to_torch
from kiln_testing import Suite, func_text, ttype

s = Suite(__file__, cpu=True)


def ref(seq, val, el, right):
    return torch.searchsorted(to_torch(seq, el), to_torch(val, el),
                              right=right).numpy()


def case(label, seq, val, el, right, st=None, vt=None):
    st = st or ttype(seq.shape, el)
    vt = vt or ttype(val.shape, el)
    rt = re.sub(r"(bf|f|ui|i)[0-9]+>$", "i64>", vt)
    s.check("kt.searchsorted %s %s right=%s" % (label, el, right),
            func_text("main", [st, vt], [rt], [
                "%%r = kt.searchsorted %%arg0, %%arg1 {right = %s} : (%s, %s) -> %s"
                % ("true" if right else "false", st, vt, rt),
                "return %%r : %s" % rt]), [seq, val], ref(seq, val, el, right))


# Small integers: uint8 compares unsigned (values above 127 are large).
for el, dt in (("ui8", np.uint8), ("i8", np.int8), ("i16", np.int16)):
    info = np.iinfo(dt)
    seq = np.array(sorted({int(info.min), -1 if info.min < 0 else 1, 0, 50,
                           100, 127, int(info.max)}), dtype=dt)
    val = np.array([info.min, 0, 99, 100, 127, info.max], dtype=dt)
    for right in (False, True):
        case("small ints", seq, val, el, right)

for el in FLOATS + INTS:
    fl = el in FLOATS
    seq1 = as_dtype(np.array([-3, -1, -1, 0, 2, 2, 2, 5, 9]), el)
    vals = [-4, -3, -2, -1, 0, 1, 2, 3, 5, 8, 9, 10]
    if fl:
        vals += [0.5, -0.0, math.inf, -math.inf, math.nan]
    v1 = as_dtype(np.array(vals), el)
    for right in (False, True):
        case("1-D", seq1, v1, el, right)
        case("1-D rank-2 values", seq1, as_dtype(np.array(vals[:12]).reshape(3, 4), el), el, right)
        case("1-D rank-0 value", seq1, np.asarray(as_dtype(np.array(2), el)), el, right)
        # N-D: one sequence per leading index.
        seqn = np.sort(s.randint(-5, 6, 2, 3, 6), axis=-1)
        valn = s.randint(-6, 7, 2, 3, 4)
        case("N-D", as_dtype(seqn, el), as_dtype(valn, el), el, right)
        case("N-D one value each", as_dtype(seqn[:, :, :4], el),
             as_dtype(valn[:, :, :1], el), el, right)
        # Unsorted: PyTorch's answer for its binary search.
        case("unsorted", as_dtype(np.array([5, 1, 4, 2, 8, 0, 3]), el),
             as_dtype(np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), el), el, right)
        # Empty sequence; empty values.
        case("empty sequence", as_dtype(np.zeros(0), el), v1[:3], el, right)
        case("empty values", seq1, as_dtype(np.zeros((2, 0)), el), el, right)
        case("N-D empty", as_dtype(np.zeros((2, 0)), el), as_dtype(np.zeros((2, 3)), el), el, right)

# NaN and infinities in the sequence (sorted as PyTorch sorts: NaN last).
for el in ["f32", "f64", "f16", "bf16"]:
    seq = as_dtype(np.array([-math.inf, -1.0, 0.0, 0.0, 1.0, math.inf, math.nan, math.nan]), el)
    val = as_dtype(np.array([-math.inf, -2.0, -0.0, 0.0, 0.5, 1.0, math.inf, math.nan]), el)
    for right in (False, True):
        case("specials", seq, val, el, right)

# Large int64 values (beyond 2^53) compare exactly.
big = np.array([2 ** 60, 2 ** 60 + 1, 2 ** 60 + 2], dtype=np.int64)
for right in (False, True):
    case("int64 > 2^53", big, np.array([2 ** 60 + 1, 2 ** 60 + 3], dtype=np.int64), "i64", right)

# ? dims.
seqn = np.sort(s.randn(3, 7), axis=-1).astype(np.float32)
valn = s.randn(3, 5).astype(np.float32)
for right in (False, True):
    case("dynamic", seqn, valn, "f32", right, "tensor<?x?xf32>", "tensor<?x?xf32>")
    case("dynamic 1-D", seqn[0], valn, "f32", right, "tensor<?xf32>", "tensor<?x5xf32>")

# Leading dims that differ at run time.
s.check_error("kt.searchsorted leading dims differ at run time",
              func_text("main", ["tensor<?x7xf32>", "tensor<?x5xf32>"], ["tensor<?x5xi64>"], [
                  "%r = kt.searchsorted %arg0, %arg1 : (tensor<?x7xf32>, tensor<?x5xf32>) -> tensor<?x5xi64>",
                  "return %r : tensor<?x5xi64>"]), [seqn, s.randn(4, 5).astype(np.float32)],
              "leading dim 0 of sorted_sequence is 3 but of values 4 at run time")
s.finish()
