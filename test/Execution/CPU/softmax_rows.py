# RUN: %python %s
# REQUIRES: numpy, torch
# softmax and log_softmax row kernels through the CPU backend (kiln-cpu with
# kernel formation: both store exp(x - max) once into their output tile and
# finish in place, docs/codegen.md "Row reductions: softmax") against
# PyTorch in float64 (and the interpreter): rows with -inf, all -inf (NaN,
# as PyTorch), +inf, NaN (the CPU's row max skips NaN; the results are NaN
# all the same), -0/+0, magnitudes of 1e30, rows of length 1, a row longer
# than the caches (1 x 4M), `?` row lengths, dim 0 and a middle dim, f16 and
# bf16 (e kept in f32), a masked softmax (scale and mask fused in front,
# fully masked rows) and a softmax with an epilogue; log_softmax's online
# row kernel (one read: max and sum of exp together) at odd lengths
# (1 ... 32000) with special values in its first and masked last steps.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
from cpu_compare import CPUSuite
from kiln_testing import ttype as T

s = CPUSuite(__file__)


def ref(op, x, dim, elem="f32"):
    t = torch.from_numpy(np.asarray(x, dtype=np.float32) if elem not in ("f16", "f64") else x)
    if elem == "bf16":
        t = t.bfloat16()
    t = t.double()
    f = torch.softmax if op == "softmax" else torch.log_softmax
    return f(t, dim).numpy()


def one_op(op, x, dim, elem="f32", arg_type=None, label=None):
    ty = arg_type or T(x.shape, elem)
    rt = T(x.shape, elem) if arg_type is None else arg_type
    mlir = ("func.func @main(%%x: %s) -> %s {\n"
            "  %%r = kt.%s %%x {dim = %d} : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (ty, rt, op, dim, ty, rt, rt)
    s.check_reference(label or "%s %s dim %d %s" % (op, x.shape, dim, elem), mlir, [x],
                      ref(op, x, dim, elem), elem)


rng = np.random.default_rng(1)
for op in ["softmax", "log_softmax"]:
    # Special rows, 37 wide (not a multiple of the vector width).
    x = (rng.standard_normal((10, 37)) * 3).astype(np.float32)
    x[0, [1, 5, 30]] = -np.inf          # some -inf: exp gives 0 there
    x[1, :] = -np.inf                   # all -inf: NaN, as PyTorch
    x[2, 4] = np.inf                    # +inf: NaN row (inf - inf)
    x[3, 7] = np.nan                    # NaN: NaN row
    x[4, :] = 0
    x[4, [0, 3]] = [1e30, -1e30]        # huge magnitudes
    x[5, :] = rng.standard_normal(37).astype(np.float32) * 1e30
    x[6, :] = -1e30                     # all equal and huge
    x[7, :] = np.nan                    # all NaN (the max skips NaN: still NaN)
    x[8, :] = 0.0
    x[8, ::3] = -0.0                    # +0 and -0 as the max
    x[9, :] = -np.inf
    x[9, 11] = np.nan                   # NaN among -inf
    one_op(op, x, 1, label="%s special rows" % op)
    one_op(op, x.T.copy(), 0, label="%s special columns (dim 0)" % op)
    # Rows of length 1 (every result 1, or 0 for log_softmax), and one element.
    one_op(op, rng.standard_normal((5, 1)).astype(np.float32), 1)
    one_op(op, np.array([[3.5]], dtype=np.float32), -1)
    # A row longer than the caches (16 MiB), wide range.
    one_op(op, (rng.standard_normal((1, 4 * 1024 * 1024)) * 8).astype(np.float32), 1,
           label="%s 1x4M" % op)
    # Many tiles of rows, odd sizes, `?` dims.
    x = (rng.standard_normal((37, 1000)) * 5).astype(np.float32)
    one_op(op, x, 1, arg_type="tensor<?x?xf32>", label="%s 37x1000 as ?x?" % op)
    one_op(op, x, 1, arg_type="tensor<37x?xf32>", label="%s 37x1000 as 37x?" % op)
    one_op(op, (rng.standard_normal((33, 20)) * 4).astype(np.float32), 0)
    one_op(op, (rng.standard_normal((2, 5, 70)) * 4).astype(np.float32), 1)
    one_op(op, np.zeros((0, 9), dtype=np.float32), 1)
    # f16 / bf16 (computed in f32, e stored in f32, rounded once).
    one_op(op, (rng.standard_normal((5, 300)) * 4).astype(np.float16), 1, elem="f16")
    one_op(op, (rng.standard_normal((5, 300)) * 4).astype(np.float32), 1, elem="bf16")

# A masked softmax (GPT-2): scale and mask fused in front of the softmax in
# one kernel; rows 0 and 9 fully masked (NaN, as PyTorch).
x = rng.standard_normal((20, 130)).astype(np.float32) * 4
m = rng.integers(0, 2, (20, 130)).astype(np.bool_)
m[0, :] = False
m[9, :] = False
m[3, :] = True
mlir = """func.func @main(%x: tensor<20x130xf32>, %m: tensor<20x130xi1>) -> tensor<20x130xf32> {
  %c = kt.constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %ninf = kt.constant {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.mul %x, %c : (tensor<20x130xf32>, tensor<f32>) -> tensor<20x130xf32>
  %1 = kt.where %m, %0, %ninf : (tensor<20x130xi1>, tensor<20x130xf32>, tensor<f32>) -> tensor<20x130xf32>
  %2 = kt.softmax %1 {dim = 1} : (tensor<20x130xf32>) -> tensor<20x130xf32>
  return %2 : tensor<20x130xf32>
}
"""
tx = torch.from_numpy(x).double()
want = torch.softmax(torch.where(torch.from_numpy(m), tx * 0.125,
                                 torch.tensor(-np.inf, dtype=torch.float64)), 1).numpy()
s.check_reference("masked softmax", mlir, [x, m], want, "f32")

# A softmax with an epilogue (the recomputing form, one output).
x = rng.standard_normal((40, 300)).astype(np.float32) * 3
y = rng.standard_normal((40, 300)).astype(np.float32)
mlir = """func.func @main(%x: tensor<40x300xf32>, %y: tensor<40x300xf32>) -> tensor<40x300xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<40x300xf32>) -> tensor<40x300xf32>
  %1 = kt.mul %0, %y : (tensor<40x300xf32>, tensor<40x300xf32>) -> tensor<40x300xf32>
  return %1 : tensor<40x300xf32>
}
"""
want = (torch.softmax(torch.from_numpy(x).double(), 1) * torch.from_numpy(y).double()).numpy()
s.check_reference("softmax * y", mlir, [x, y], want, "f32")

# log_softmax over the last dim of a kernel input: the online row kernel
# (the max and the sum of exp in one read, then x - max - log(sum);
# docs/codegen.md "one read"), at lengths around the vector width and its
# block, 4097 and 32000, special values at the first element and in the
# masked last step, rows whose max grows at every element, `?` dims, f64
# (its own vector loops) and f16 (the generic's scalar loop).
for c in [1, 2, 15, 17, 63, 64, 65, 1023, 1024, 1025, 4097, 32000]:
    x = (rng.standard_normal((7, c)) * 3).astype(np.float32)
    one_op("log_softmax", x, 1, label="online log_softmax %d" % c)
    if c >= 2:
        x[0, 0] = -np.inf
        x[1, -1] = np.inf
        x[2, c // 2] = np.nan
        x[3, :] = -np.inf
        x[4, 0] = np.inf
        x[5, -1] = 80.0
        x[6, : c // 2] = -np.inf
        one_op("log_softmax", x, 1, label="online log_softmax special %d" % c)
        one_op("log_softmax", x, -1, arg_type="tensor<?x?xf32>",
               label="online log_softmax special %d as ?x?" % c)
up = np.linspace(-20, 20, 32000, dtype=np.float32)
one_op("log_softmax", np.stack([up, up[::-1], up + 1e4]), 1,
       label="online log_softmax monotone rows")
one_op("log_softmax", (rng.standard_normal((3, 4097)) * 3), 1, elem="f64")
one_op("log_softmax", (rng.standard_normal((3, 4097)) * 3).astype(np.float16), 1, elem="f16")
one_op("log_softmax", (rng.standard_normal(4097) * 3).astype(np.float32), 0,
       label="online log_softmax rank 1")
# A log_softmax with a prologue in its kernel (its input computed there: the
# two-pass form) and one with an epilogue.
x = rng.standard_normal((20, 130)).astype(np.float32) * 4
y = rng.standard_normal((20, 130)).astype(np.float32)
mlir = """func.func @main(%x: tensor<20x130xf32>, %y: tensor<20x130xf32>) -> tensor<20x130xf32> {
  %0 = kt.mul %x, %y : (tensor<20x130xf32>, tensor<20x130xf32>) -> tensor<20x130xf32>
  %1 = kt.log_softmax %0 {dim = 1} : (tensor<20x130xf32>) -> tensor<20x130xf32>
  %2 = kt.mul %1, %y : (tensor<20x130xf32>, tensor<20x130xf32>) -> tensor<20x130xf32>
  return %2 : tensor<20x130xf32>
}
"""
tx, ty = torch.from_numpy(x).double(), torch.from_numpy(y).double()
s.check_reference("x * y, log_softmax, * y", mlir, [x, y],
                  (torch.log_softmax(tx * ty, 1) * ty).numpy(), "f32")
mlir = """func.func @main(%x: tensor<20x130xf32>, %y: tensor<20x130xf32>) -> tensor<20x130xf32> {
  %1 = kt.log_softmax %x {dim = 1} : (tensor<20x130xf32>) -> tensor<20x130xf32>
  %2 = kt.mul %1, %y : (tensor<20x130xf32>, tensor<20x130xf32>) -> tensor<20x130xf32>
  return %2 : tensor<20x130xf32>
}
"""
s.check_reference("log_softmax * y", mlir, [x, y], (torch.log_softmax(tx, 1) * ty).numpy(),
                  "f32")

s.finish()
