"""Helpers shared by the elementwise execution tests (test/Execution/KT/elementwise*.py):
dtype tables, torch references computed in float64 or natively, and
check_multi, which runs one op over several operand groups in one module."""

import numpy as np
import torch
from kiln_testing import Suite, ttype, func_text, to_bf16

TD = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
      "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
      "i16": torch.int16, "i8": torch.int8, "ui8": torch.uint8,
      "i1": torch.bool}
NPD = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
       "bf16": np.float32, "i64": np.int64, "i32": np.int32, "i16": np.int16,
       "i8": np.int8, "ui8": np.uint8, "i1": np.bool_}
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
