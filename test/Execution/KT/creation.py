# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.constant (splat, ints, i1, f16, bf16), kt.full (every dtype,
# static/dynamic/empty sizes, run-time size errors) and kt.arange (vs
# torch.arange for every numeric dtype, negative / fractional steps; float
# results within the dtype's tolerance since PyTorch's vectorized CPU kernel
# evaluates start + i * step in chunks and may differ in the last ulp).

import numpy as np
import torch
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)
NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
      "bf16": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}
TORCH = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
         "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i1": torch.bool}


def flit(v):
    """An F64Attr literal (hex for NaN / inf)."""
    v = float(v)
    if np.isnan(v):
        return "0x7FF8000000000000 : f64"
    if np.isinf(v):
        return "0x7FF0000000000000 : f64" if v > 0 else "0xFFF0000000000000 : f64"
    return repr(v)


def nullary(label, lines, rtypes, expected, elem=None):
    mlir = func_text("main", [], rtypes, lines + [
        "return %s : %s" % (", ".join("%%r%d" % i for i in range(len(rtypes))), ", ".join(rtypes))])
    s.check(label, mlir, [], expected, elem=elem, rtol=0 if elem is None else None,
            atol=0 if elem is None else None)


# --- kt.constant -----------------------------------------------------------
consts = [
    ("dense<[1.5, -2.25, 3.0e+10]> : tensor<3xf32>", np.array([1.5, -2.25, 3e10], np.float32)),
    ("dense<2.5> : tensor<2x3xf64>", np.full((2, 3), 2.5)),
    ("dense<[[1, -2], [3, 9223372036854775807]]> : tensor<2x2xi64>",
     np.array([[1, -2], [3, 2**63 - 1]], np.int64)),
    ("dense<-7> : tensor<4xi32>", np.full((4,), -7, np.int32)),
    ("dense<[true, false, true]> : tensor<3xi1>", np.array([True, False, True])),
    ("dense<true> : tensor<2x2xi1>", np.ones((2, 2), np.bool_)),
    ("dense<[0.1, 65504.0, -0.0]> : tensor<3xf16>", np.array([0.1, 65504, -0.0], np.float16)),
    ("dense<[0.1, 3.0, -1.0e+30]> : tensor<3xbf16>", to_bf16(np.array([0.1, 3.0, -1e30], np.float32))),
    ("dense<1.25> : tensor<f32>", np.array(1.25, np.float32)),
    ("dense<> : tensor<0x3xf32>", np.zeros((0, 3), np.float32)),
]
for attr, exp in consts:
    t = attr.split(" : ")[-1]
    nullary("constant " + attr, ["%%r0 = kt.constant {value = %s} : () -> %s" % (attr, t)], [t], exp)

# --- kt.full -----------------------------------------------------------------
for elem in ["f32", "f64", "f16", "bf16", "i64", "i32", "i1"]:
    for value in ([1.0, 0.0] if elem == "i1" else [-3.0, 0.0, 7.0] if elem[0] == "i" else
                  [1.1, -2.5, 0.0, 1e3, float("inf"), float("nan")]):
        # all sizes in one function
        lines, types, exps = [], [], []
        for i, size in enumerate([(2, 3), (), (0, 4), (5,)]):
            ref = torch.full(size, value, dtype=TORCH[elem])
            exps.append(ref.float().numpy() if elem == "bf16" else ref.numpy())
            t = ttype(size, elem)
            types.append(t)
            lines.append("%%r%d = kt.full {size = [%s], value = %s, dtype = %s} : () -> %s" %
                         (i, ", ".join(map(str, size)), flit(value), elem, t))
        nullary("full %s %s" % (elem, value), lines, types, exps,
                elem=elem if elem in ("f32", "f64", "f16", "bf16") else None)
# large integral values are exact
nullary("full i64 big", ["%r0 = kt.full {size = [2], value = 9.007199254740992e15, dtype = i64} : () -> tensor<2xi64>"],
        ["tensor<2xi64>"], np.full((2,), 2**53, np.int64))
# dynamic sizes from index values
nullary("full dynamic", [
    "%c2 = arith.constant 2 : index", "%c0 = arith.constant 0 : index", "%c4 = arith.constant 4 : index",
    "%r0 = kt.full %c2, %c4 {size = [-1, 3, -1], value = 2.5, dtype = f32} : (index, index) -> tensor<?x3x?xf32>",
    "%r1 = kt.full %c0 {size = [-1], value = 1.0, dtype = i64} : (index) -> tensor<?xi64>",
    "%r2 = kt.full %c4 {size = [-1], value = 1.0, dtype = i1} : (index) -> tensor<4xi1>"],
    ["tensor<?x3x?xf32>", "tensor<?xi64>", "tensor<4xi1>"],
    [np.full((2, 3, 4), 2.5, np.float32), np.zeros((0,), np.int64), np.ones((4,), np.bool_)])
# a dynamic size taken from a tensor's dim
x = s.randn(3, 2)
mlir = func_text("main", ["tensor<?x2xf32>"], ["tensor<?x2xf64>"], [
    "%c0 = arith.constant 0 : index", "%d = tensor.dim %arg0, %c0 : tensor<?x2xf32>",
    "%r = kt.full %d {size = [-1, 2], value = -1.0, dtype = f64} : (index) -> tensor<?x2xf64>",
    "return %r : tensor<?x2xf64>"])
s.check("full from tensor.dim", mlir, [x], np.full((3, 2), -1.0))
# run-time errors
for v, msg in [("-1", "must be non-negative"), ("3", "result type has 4")]:
    mlir = func_text("main", [], ["tensor<4xf32>"], [
        "%%c = arith.constant %s : index" % v,
        "%r = kt.full %c {size = [-1], value = 1.0, dtype = f32} : (index) -> tensor<4xf32>",
        "return %r : tensor<4xf32>"])
    s.check_error("full bad dynamic size " + v, mlir, [], msg)

# --- kt.arange ---------------------------------------------------------------
ARANGES = [(0, 5, 1), (0, 10, 3), (5, -3, -2), (-1.5, 2.5, 0.5), (0, 1, 0.1), (1, 0, -0.1),
           (0.3, 7.1, 0.7), (2, 2, 1), (0, 100, 0.37), (-10, 10, 3)]
for elem in ["f32", "f64", "f16", "bf16", "i64", "i32"]:
    for start, end, step in ARANGES:
        if elem[0] == "i" and any(float(v) != int(v) for v in (start, end, step)):
            continue
        ref = torch.arange(start, end, step, dtype=TORCH[elem])
        exp = ref.float().numpy() if elem == "bf16" else ref.numpy()
        t = ttype(exp.shape, elem)
        nullary("arange %s %s" % (elem, (start, end, step)),
                ["%%r0 = kt.arange {start = %r, end = %r, step = %r, dtype = %s} : () -> %s" %
                 (float(start), float(end), float(step), elem, t)], [t], exp,
                elem=None if elem[0] == "i" else elem)
# defaults start = 0, step = 1
nullary("arange defaults", ["%r0 = kt.arange {end = 4.0, dtype = f32} : () -> tensor<4xf32>"],
        ["tensor<4xf32>"], np.arange(4, dtype=np.float32))
s.finish()
