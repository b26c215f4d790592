# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.neg/abs/relu/floor/ceil/round/sign (floats and ints),
# logical_not/isnan (every dtype, i1 result) and kt.clamp against
# PyTorch: rank-0 / empty / 2-D shapes, NaN, +-inf, -0.0, INT_MIN.

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
OPS = {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu,
       "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
       "sign": torch.sign}
fspecials = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1.5, 2.5,
             -2.5, 3.5, -1.0, 7.0]
for el in FLOATS + INTS:
    if el in FLOATS:
        x = as_dtype(np.concatenate([s.randn(15) * 4, fspecials]).reshape(4, 7), el)
    else:
        info = np.iinfo(NPD[el])
        x = as_dtype(np.concatenate([s.randint(-100, 100, 18),
                                     [info.min, info.max, 0, -1, 1, -7, 7, 3, -3, 100]]).reshape(4, 7), el)
    x0 = as_dtype(np.array(-3), el)
    xe = as_dtype(np.zeros((2, 0)), el)
    for name, fn in OPS.items():
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [refnative(fn, [g[0][0]], el) for g in groups]
        check_multi(s, "kt." + name, groups, el, el, exp)

# Sign of zero is observable: relu(-0.0) = -0.0, abs(-0.0) = 0.0, round(-0.5) = -0.0.
z = np.array([-0.0, -0.5, 0.5], dtype=np.float64)
for name, fn in [("relu", torch.relu), ("abs", torch.abs), ("round", torch.round),
                 ("neg", torch.neg)]:
    r = s.check_op("kt." + name, [z], fn(torch.from_numpy(z)).numpy(), [ttype((3,), "f64")])
    e = fn(torch.from_numpy(z)).numpy()
    s.record("signbit kt." + name, r is not None and np.array_equal(np.signbit(r[0]), np.signbit(e)),
             "%s vs %s" % (r, e))

# logical_not / isnan on every dtype.
for el in FLOATS + INTS + ["i1"]:
    if el in FLOATS:
        x = as_dtype(np.array([[0.0, -0.0, math.nan, 1.5], [math.inf, -2.0, 0.0, math.nan]]), el)
    elif el == "i1":
        x = np.array([[True, False, True, False]])
    else:
        x = as_dtype(np.array([[0, -1, 5, 0]]), el)
    xe = as_dtype(np.zeros((0,)), el)
    x0 = as_dtype(np.array(0), el)
    for name, fn in [("logical_not", torch.logical_not), ("isnan", torch.isnan)]:
        groups = [([x], x.shape), ([xe], xe.shape), ([x0], ())]
        exp = [refnative(fn, [g[0][0]], el) for g in groups]
        check_multi(s, "kt." + name, groups, el, "i1", exp)

# clamp
def tclamp(lo, hi):
    return lambda t: torch.clamp(t, min=lo, max=hi)

for el in FLOATS + INTS:
    if el in FLOATS:
        x = as_dtype(np.concatenate([s.randn(9) * 3, [math.nan, math.inf, -math.inf]]).reshape(3, 4), el)
    else:
        x = as_dtype(s.randint(-10, 10, 3, 4), el)
    x0 = as_dtype(np.array(5), el)
    xe = as_dtype(np.zeros((0, 2)), el)
    for lo, hi in [(-1.0, 2.0), (None, 0.0), (-2.0, None), (3.0, -1.0), (0.0, 0.0)]:
        if el in FLOATS and lo is not None:
            lo += 0.25
        attrs = ", ".join(k + " = %r : f64" % float(v) for k, v in [("min", lo), ("max", hi)]
                          if v is not None)
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [refnative(tclamp(lo, hi), [g[0][0]], el) for g in groups]
        check_multi(s, "kt.clamp", groups, el, el, exp, attrs=attrs)

s.finish()
