# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the broadcasting arithmetic kt ops (add sub mul div pow maximum
# minimum remainder) against PyTorch on every numeric dtype: same shapes,
# size-1 and missing dims, rank 0, empty; NaN/inf, integer wrap-around, div
# rounding modes and remainder signs.

# ---- shared helpers (duplicated in each elementwise*.py) ----
import numpy as np
import torch
from kiln_testing import Suite, ttype, func_text, to_bf16

TD = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
      "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
      "i1": torch.bool}
NPD = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
       "bf16": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}
FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["i32", "i64"]


def as_dtype(x, el):
    """NumPy array holding `x` rounded to `el` (bf16 as float32)."""
    if el == "bf16":
        x = np.asarray(x, dtype=np.float32)
        return to_bf16(x.reshape(-1)).reshape(x.shape)
    return np.asarray(x).astype(NPD[el])


def to_torch(x, el):
    t = torch.from_numpy(np.array(x))
    return t.to(TD[el])


def to_np(t):
    """Torch result -> NumPy (bf16 via float64)."""
    if t.dtype in (torch.bfloat16, torch.float16, torch.float32):
        return t.to(torch.float64).numpy()
    return t.numpy()


def ref64(fn, xs, el_in, el_out):
    """fn applied in float64 (floats) or the native dtype (ints/bool), result
    rounded to el_out by torch."""
    ts = [to_torch(x, el_in) for x in xs]
    if el_in in FLOATS:
        ts = [t.to(torch.float64) for t in ts]
    return to_np(fn(*ts).to(TD[el_out]))


def refnative(fn, xs, el_in):
    """fn applied by torch in the operands' own dtype."""
    ts = [to_torch(x, el_in) for x in xs]
    try:
        return to_np(fn(*ts))
    except RuntimeError:  # op not implemented for Half/BFloat16 on CPU
        r = fn(*[t.to(torch.float64) for t in ts])
        return to_np(r if r.dtype == torch.bool else r.to(TD[el_in]))


def const_text(x, el):
    """Dense attribute text of a rank-0 array (finite values)."""
    v = x.item()
    if el == "i1":
        return "true" if v else "false"
    if el in INTS:
        return str(int(v))
    return repr(float(v))


def check_multi(s, op, arg_groups, el_in, el_out, expected, attrs="", label=None):
    """One module applying `op` to each group of operands (one result per
    group). Rank-0 operands become kt.constant (kiln_testing passes inputs as
    at least 1-D arrays)."""
    arg_types, inputs, lines, rtypes = [], [], [], []
    n = 0
    attr = (" {" + attrs + "}") if attrs else ""
    for k, (group, rshape) in enumerate(arg_groups):
        names, tys = [], []
        for j, x in enumerate(group):
            t = ttype(x.shape, el_in)
            tys.append(t)
            if x.ndim == 0:
                lines.append("%%c%d_%d = kt.constant {value = dense<%s> : %s} : () -> %s"
                             % (k, j, const_text(x, el_in), t, t))
                names.append("%%c%d_%d" % (k, j))
                continue
            arg_types.append(t)
            inputs.append(x)
            names.append("%%arg%d" % n)
            n += 1
        rt = ttype(rshape, el_out)
        rtypes.append(rt)
        lines.append("%%r%d = %s %s%s : (%s) -> %s" % (
            k, op, ", ".join(names), attr, ", ".join(tys), rt))
    lines.append("return %s : %s" % (", ".join("%%r%d" % k for k in range(len(arg_groups))),
                                     ", ".join(rtypes)))
    mlir = func_text("main", arg_types, rtypes, lines)
    return s.check(label or "%s %s %s->%s" % (op, attrs, el_in, el_out), mlir,
                   inputs, expected, elem="bf16" if el_out == "bf16" else None)
# ---- end of shared helpers ----

import math

s = Suite(__file__)
SHAPES = [((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((0, 3), (1, 3)),
          ((4,), ())]


def operands(el, shape, kind):
    n = int(np.prod(shape)) if shape else 1
    if el in FLOATS:
        if kind == "pow_exp":
            v = s.randint(-3, 4, n).astype(np.float64) + (s.randn(n) * 0.5 if n > 4 else 0)
        else:
            v = s.randn(n) * 3
            sp = [math.nan, math.inf, -math.inf, -0.0, 0.0, 2.0, -2.0]
            if n >= 12 and kind != "scalar":
                v[:len(sp)] = sp
        if not shape:
            v = np.array([1.75])
    else:
        lo, hi = {"pow_base": (-4, 5), "pow_exp": (-2, 7)}.get(kind, (-20, 21))
        v = s.randint(lo, hi, n)
        if kind == "divisor":
            v[v == 0] = 3
        if not shape:
            v = np.array([-3 if kind != "pow_exp" else 3])
    return as_dtype(v.reshape(shape), el)


def bshape(a, b):
    return np.broadcast_shapes(a, b)


OPS = [("add", "", torch.add), ("sub", "", torch.sub), ("mul", "", torch.mul),
       ("maximum", "", torch.maximum), ("minimum", "", torch.minimum),
       ("remainder", "", torch.remainder), ("pow", "", torch.pow),
       ("div", "", torch.div),
       ("div", "rounding_mode = #kt<rounding_mode trunc>",
        lambda a, b: torch.div(a, b, rounding_mode="trunc")),
       ("div", "rounding_mode = #kt<rounding_mode floor>",
        lambda a, b: torch.div(a, b, rounding_mode="floor"))]

for el in FLOATS + INTS:
    for name, attrs, fn in OPS:
        if el in INTS and name == "div" and not attrs:
            continue
        groups, exp = [], []
        for sa, sb in SHAPES:
            ka = "pow_base" if name == "pow" else "x"
            kb = {"pow": "pow_exp", "div": "divisor", "remainder": "divisor"}.get(name, "y")
            a, b = operands(el, sa, ka), operands(el, sb, kb)
            groups.append(([a, b], bshape(sa, sb)))
            if name in ("add", "sub", "mul", "div", "pow") and el in FLOATS:
                exp.append(ref64(fn, [a, b], el, el))
            else:
                exp.append(refnative(fn, [a, b], el))
        check_multi(s, "kt." + name, groups, el, el, exp, attrs=attrs)

# Integer wrap-around.
big = np.array([2**62, -2**63, 2**63 - 1], dtype=np.int64)
s.check_op("kt.mul", [big, np.array([4, -1, 2], dtype=np.int64)],
           np.array([0, -2**63, -2], dtype=np.int64), [ttype((3,), "i64")])
i32 = np.array([2**31 - 1, -2**31], dtype=np.int32)
s.check_op("kt.add", [i32, np.array([1, -1], dtype=np.int32)],
           np.array([-2**31, 2**31 - 1], dtype=np.int32), [ttype((2,), "i32")])
s.check_op("kt.sub", [i32, np.array([-1, 1], dtype=np.int32)],
           np.array([-2**31, 2**31 - 1], dtype=np.int32), [ttype((2,), "i32")])
s.check_op("kt.pow", [np.array([2, 3, -1, 1, 5, 0], dtype=np.int64),
                      np.array([70, 2, -3, -5, -1, 0], dtype=np.int64)],
           np.array([0, 9, -1, 1, 0, 1], dtype=np.int64), [ttype((6,), "i64")])
# Integer division: trunc vs floor, remainder takes the sign of the divisor.
a = np.array([-7, 7, -7, 7, 6, -6, 0], dtype=np.int64)
b = np.array([2, -2, -2, 2, -3, 3, -5], dtype=np.int64)
s.check_op("kt.div", [a, b], np.array([-3, -3, 3, 3, -2, -2, 0]), [ttype((7,), "i64")],
           attrs="rounding_mode = #kt<rounding_mode trunc>")
s.check_op("kt.div", [a, b], np.array([-4, -4, 3, 3, -2, -2, 0]), [ttype((7,), "i64")],
           attrs="rounding_mode = #kt<rounding_mode floor>")
s.check_op("kt.remainder", [a, b], np.array([1, -1, -1, 1, 0, 0, 0]), [ttype((7,), "i64")])
# Floats: x/0, remainder sign and by zero, NaN-propagating maximum/minimum.
fa = np.array([1.0, -1.0, 0.0, -7.0, 7.0, 5.0, -0.0, math.nan, 1.0])
fb = np.array([0.0, 0.0, 0.0, 2.0, -2.0, 0.0, 3.0, 1.0, math.nan])
for name, attrs, fn in OPS:
    if name in ("div", "remainder", "maximum", "minimum"):
        exp = fn(torch.from_numpy(fa), torch.from_numpy(fb)).numpy()
        r = s.check_op("kt." + name, [fa, fb], exp, [ttype((9,), "f64")], attrs=attrs)
        s.record("signbit kt.%s %s" % (name, attrs),
                 r is not None and np.array_equal(np.signbit(r[0])[~np.isnan(exp)],
                                                  np.signbit(exp)[~np.isnan(exp)]),
                 "%s vs %s" % (r, exp))
# Dynamic dims broadcast at run time.
x, y = s.randn(2, 3, dtype=np.float64), s.randn(1, 3, dtype=np.float64)
mlir = func_text("main", ["tensor<?x?xf64>", "tensor<?x3xf64>"], ["tensor<?x3xf64>"],
                 ["%r = kt.sub %arg0, %arg1 : (tensor<?x?xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>",
                  "return %r : tensor<?x3xf64>"])
s.check("sub dynamic", mlir, [x, y], x - y)
s.check_error("sub dynamic mismatch", mlir, [s.randn(2, 3, dtype=np.float64),
                                            s.randn(3, 3, dtype=np.float64)], "kt.sub")
# Integer division / remainder by zero is an error.
for attrs, op in [("rounding_mode = #kt<rounding_mode trunc>", "kt.div"),
                  ("rounding_mode = #kt<rounding_mode floor>", "kt.div"), ("", "kt.remainder")]:
    for el in INTS:
        xa, xb = as_dtype(np.array([4, 5]), el), as_dtype(np.array([1, 0]), el)
        s.check_error("%s %s by zero %s" % (op, attrs, el),
                      
                      func_text("main", [ttype((2,), el)] * 2, [ttype((2,), el)],
                                ["%%r = %s %%arg0, %%arg1%s : (%s, %s) -> %s" % (
                                    op, " {%s}" % attrs if attrs else "", ttype((2,), el),
                                    ttype((2,), el), ttype((2,), el)),
                                 "return %%r : %s" % ttype((2,), el)]),
                      [xa, xb], "integer division by zero")
s.finish()
