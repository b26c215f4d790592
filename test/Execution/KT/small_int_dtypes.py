# RUN: %python %s
# REQUIRES: numpy, torch
# int8 (i8), uint8 (ui8) and int16 (i16) through the kt ops against PyTorch,
# on the interpreter and (the Suite's CPU sweep) the CPU backend: wrap-around
# at the limits (127 + 1, 255 + 1, 32767 + 1, -128 // -1), uint8's unsigned
# comparisons, division, remainder, max/min, abs, sign and casts (200 > 100,
# 255 -> 255.0), sums and products promoting to int64, argmax, shape and
# indexing ops, and the .npy round trip of each dtype through kiln-run.

import numpy as np
import torch
from kiln_testing import Suite, run, single_op_module, ttype

s = Suite(__file__, cpu=True)

TORCH = {"i8": torch.int8, "ui8": torch.uint8, "i16": torch.int16}
NP = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16}
ELEMS = ["i8", "ui8", "i16"]


def limits(el):
    info = np.iinfo(NP[el])
    return int(info.min), int(info.max)


def values(el, n, seed):
    """n values of `el` with its extremes, -1/0/1 where they exist and 200
    (above int8's range) for uint8."""
    lo, hi = limits(el)
    rng = np.random.RandomState(seed)
    v = rng.randint(lo, hi + 1, n).astype(NP[el])
    special = [lo, hi, 0, 1, hi - 1, lo + 1] + ([200, 100, 128, 127] if el == "ui8"
                                               else [-1, -2, 2, 3])
    v[:min(n, len(special))] = special[:n]
    return v


def nonzero(v):
    v = v.copy()
    v[v == 0] = 3
    return v


def tt(x, el):
    return torch.from_numpy(np.ascontiguousarray(x)).to(TORCH[el])


def expect(t):
    return t.numpy()


def check_exact(label, mlir, inputs, expected):
    """Runs in the interpreter (the Suite's CPU sweep reruns it compiled) and
    compares values and dtypes exactly."""
    results = s.check(label, mlir, inputs, expected)
    if results is not None:
        for i, (r, e) in enumerate(zip(results, expected)):
            s.record("%s result%d dtype" % (label, i), r.dtype == e.dtype,
                     "dtype %s, expected %s" % (r.dtype, e.dtype))


def binop(op, el, a, b, res_el, expected, attrs=""):
    mlir = single_op_module(op, [a, b], [ttype(expected.shape, res_el)],
                            attrs=attrs, elems=[el, el])
    check_exact("%s %s" % (op, el), mlir, [a, b], [expected])


def unop(op, el, a, res_el, expected, attrs=""):
    mlir = single_op_module(op, [a], [ttype(expected.shape, res_el)],
                            attrs=attrs, elems=[el])
    check_exact("%s %s%s" % (op, el, " " + attrs if attrs else ""), mlir, [a],
                [expected])


for el in ELEMS:
    lo, hi = limits(el)
    a = values(el, 12, 1).reshape(3, 4)
    b = values(el, 12, 2)[::-1].copy().reshape(3, 4)
    ta, tb = tt(a, el), tt(b, el)
    # Wrap-around at the limits: max + 1, min - 1, max * 2.
    one = np.full((3, 4), 1, NP[el])
    binop("kt.add", el, a, one, el, expect(ta + tt(one, el)))
    binop("kt.sub", el, a, one, el, expect(ta - tt(one, el)))
    binop("kt.mul", el, a, b, el, expect(ta * tb))
    binop("kt.maximum", el, a, b, el, expect(torch.maximum(ta, tb)))
    binop("kt.minimum", el, a, b, el, expect(torch.minimum(ta, tb)))
    # Division and remainder by non-zero divisors (x // -1 of the minimum
    # wraps to the minimum, as PyTorch).
    bn = nonzero(b)
    tbn = tt(bn, el)
    binop("kt.div", el, a, bn, el, expect(torch.div(ta, tbn, rounding_mode="floor")),
          attrs="rounding_mode = #kt.rounding_mode<floor>")
    binop("kt.div", el, a, bn, el, expect(torch.div(ta, tbn, rounding_mode="trunc")),
          attrs="rounding_mode = #kt.rounding_mode<trunc>")
    binop("kt.remainder", el, a, bn, el, expect(torch.remainder(ta, tbn)))
    binop("kt.fmod", el, a, bn, el, expect(torch.fmod(ta, tbn)))
    for op, fn in (("kt.lt", torch.lt), ("kt.le", torch.le), ("kt.gt", torch.gt),
                   ("kt.ge", torch.ge), ("kt.eq", torch.eq), ("kt.ne", torch.ne)):
        binop(op, el, a, b, "i1", expect(fn(ta, tb)))
    for op, fn in (("kt.bitwise_and", torch.bitwise_and),
                   ("kt.bitwise_or", torch.bitwise_or),
                   ("kt.bitwise_xor", torch.bitwise_xor)):
        binop(op, el, a, b, el, expect(fn(ta, tb)))
    unop("kt.neg", el, a, el, expect(torch.neg(ta)))
    unop("kt.abs", el, a, el, expect(torch.abs(ta)))
    unop("kt.sign", el, a, el, expect(torch.sign(ta)))
    unop("kt.bitwise_not", el, a, el, expect(torch.bitwise_not(ta)))
    unop("kt.relu", el, a, el, expect(torch.relu(ta)))
    unop("kt.clamp", el, a, el, expect(torch.clamp(ta, 1, 100)),
         attrs="max = 1.000000e+02 : f64, min = 1.000000e+00 : f64")
    # Casts to and from every other dtype.
    for to, tdt in (("f32", torch.float32), ("f64", torch.float64),
                    ("i64", torch.int64), ("i32", torch.int32),
                    ("i16", torch.int16), ("i8", torch.int8),
                    ("ui8", torch.uint8), ("i1", torch.bool)):
        unop("kt.cast", el, a, to, expect(ta.to(tdt)), attrs="dtype = %s" % to)
    # float -> el in range (truncation toward zero).
    f = np.array([[-3.7, -0.5, 0.0, 0.5], [1.9, 99.99, 100.5, 126.6],
                  [7.5, 2.5, 120.0, 1.0]], np.float32)
    if el == "ui8":
        f = np.abs(f) + np.float32(120)  # 120..247: above int8's range
    unop("kt.cast", "f32", f, el, expect(torch.from_numpy(f).to(TORCH[el])),
         attrs="dtype = %s" % el)
    # Reductions: sum/prod promote to int64 (no wrap); amax/amin/argmax
    # compare in the dtype.
    unop("kt.sum", el, a, "i64", expect(torch.sum(ta, dim=1)), attrs="dim = [1]")
    unop("kt.sum", el, a, "i64", expect(torch.sum(ta)))
    unop("kt.prod", el, a, "i64", expect(torch.prod(ta, dim=0)), attrs="dim = [0]")
    unop("kt.amax", el, a, el, expect(torch.amax(ta, dim=1)), attrs="dim = [1]")
    unop("kt.amin", el, a, el, expect(torch.amin(ta, dim=0)), attrs="dim = [0]")
    unop("kt.argmax", el, a, "i64", expect(torch.argmax(ta, dim=1)), attrs="dim = 1")
    unop("kt.argmin", el, a, "i64", expect(torch.argmin(ta, dim=0)), attrs="dim = 0")
    # Shape and indexing ops.
    unop("kt.permute", el, a, el, expect(ta.permute(1, 0)), attrs="dims = [1, 0]")
    unop("kt.reshape", el, a, el, expect(ta.reshape(2, 6)), attrs="shape = [2, -1]")
    unop("kt.flip", el, a, el, expect(ta.flip(1)), attrs="dims = [1]")
    binop("kt.concat", el, a, b, el, expect(torch.cat([ta, tb], 0)), attrs="dim = 0")
    idx = np.array([[0, 3, 1], [2, 2, 0], [3, 0, 1]], np.int64)
    mlir = single_op_module("kt.gather", [a, idx], [ttype((3, 3), el)],
                            attrs="dim = 1", elems=[el, "i64"])
    check_exact("kt.gather %s" % el, mlir, [a, idx],
                [expect(torch.gather(ta, 1, torch.from_numpy(idx)))])
    cond = (np.arange(12).reshape(3, 4) % 3 == 0)
    mlir = single_op_module("kt.where", [cond, a, b], [ttype((3, 4), el)],
                            elems=["i1", el, el])
    check_exact("kt.where %s" % el, mlir, [cond, a, b],
                [expect(torch.where(torch.from_numpy(cond), ta, tb))])
    # The .npy round trip of the dtype through kiln-run (identity function).
    mlir = ("func.func @main(%%a: %s) -> %s {\n  return %%a : %s\n}\n"
            % ((ttype(a.shape, el),) * 3))
    out = run(mlir, [a])
    s.record("npy round trip %s" % el,
             len(out) == 1 and out[0].dtype == a.dtype and np.array_equal(out[0], a),
             "got %r" % (out,))

# The brief's named cases, exactly.
u8 = np.array([255, 200, 100, 0], np.uint8)
binop("kt.add", "ui8", u8, np.ones(4, np.uint8), "ui8",
      np.array([0, 201, 101, 1], np.uint8))
binop("kt.gt", "ui8", np.array([200], np.uint8), np.array([100], np.uint8), "i1",
      np.array([True]))
unop("kt.cast", "ui8", np.array([255], np.uint8), "f32", np.array([255.0], np.float32),
     attrs="dtype = f32")
binop("kt.div", "i8", np.array([-128], np.int8), np.array([-1], np.int8), "i8",
      expect(torch.div(torch.tensor([-128], dtype=torch.int8),
                       torch.tensor([-1], dtype=torch.int8), rounding_mode="floor")),
      attrs="rounding_mode = #kt.rounding_mode<floor>")
binop("kt.add", "i8", np.array([127], np.int8), np.array([1], np.int8), "i8",
      np.array([-128], np.int8))
binop("kt.add", "i16", np.array([32767], np.int16), np.array([1], np.int16), "i16",
      np.array([-32768], np.int16))
unop("kt.sum", "ui8", np.array([255, 255, 255], np.uint8), "i64",
     np.array(765, np.int64))

s.finish()
