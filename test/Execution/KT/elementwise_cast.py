# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.cast between every pair of dtypes against PyTorch .to(dtype):
# truncation toward zero, != 0 for i1, rounding and overflow to inf.

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
# cast: every pair of dtypes, PyTorch .to(dtype).
ALL = FLOATS + INTS + ["i1"]
for src in ALL:
    if src in FLOATS:
        v = np.array([[0.0, -0.0, 1.0, -1.0, 2.7, -2.7, 0.4, -0.6], [100.5, -100.5, 3.0, 65.25, -7.9, 1e-3, 0.5, 1.5]])
    elif src == "i1":
        v = np.array([[True, False, True, False]])
    else:
        v = np.array([[0, 1, -1, 7, -7, 100, 255, -129, 3, 65, 1000, 2048, 4097, 257, -2, 9]])
    x = as_dtype(v, src)
    x0 = as_dtype(np.array(1), src)
    xe = as_dtype(np.zeros((0, 3)), src)
    for dst in ALL:
        groups = [([x], x.shape), ([x0], ()), ([xe], xe.shape)]
        exp = [refnative(lambda t: t.to(TD[dst]), [g[0][0]], src) for g in groups]
        check_multi(s, "kt.cast", groups, src, dst, exp, attrs="dtype = %s" % dst)
# float -> i1 of NaN/inf is true; f64 -> f16/bf16 overflow gives inf.
x = np.array([math.nan, math.inf, -0.0, 70000.0, 1e39])
s.check_op("kt.cast", [x], np.array([True, True, False, True, True]), [ttype((5,), "i1")],
           attrs="dtype = i1")
s.check_op("kt.cast", [x], torch.from_numpy(x).to(torch.float16).numpy(), [ttype((5,), "f16")],
           attrs="dtype = f16")
s.check_op("kt.cast", [x], torch.from_numpy(x).to(torch.float32).numpy(), [ttype((5,), "f32")],
           attrs="dtype = f32")
s.finish()
