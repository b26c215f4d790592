# RUN: %python %s
# REQUIRES: numpy
# Shape and creation ops through the CPU backend vs the interpreter.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import re
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)
T = ttype

x = s.randn(2, 3, 4)
for shape, out in [([3, 8], (3, 8)), ([24], (24,)), ([-1, 6], (4, 6)), ([2, 3, 4], (2, 3, 4)),
                   ([4, 1, 6], (4, 1, 6))]:
    s.check_op("kt.reshape", [x], [T(out, "f32")], attrs="shape = [%s]" % ", ".join(map(str, shape)))
s.check_op("kt.reshape", [s.randn()], ["tensor<1x1xf32>"], attrs="shape = [1, 1]")
s.check_op("kt.reshape", [s.randn(1, 1)], ["tensor<f32>"], attrs="shape = []")
s.check_op("kt.reshape", [s.randn(0, 4)], ["tensor<2x0xf32>"], attrs="shape = [2, 0]")
s.check_op("kt.reshape", [s.randn(6, 4)], ["tensor<?x8xf32>"], attrs="shape = [-1, 8]",
           arg_types=["tensor<?x4xf32>"], label="reshape dynamic")
s.check_op("kt.reshape", [s.randint(0, 9, 3, 4)], ["tensor<2x6xi64>"], attrs="shape = [2, 6]")

for d0, d1 in [(0, 1), (0, -1), (1, 1)]:
    s.check_op("kt.transpose", [x], [T(tuple(np.swapaxes(x, d0, d1).shape), "f32")],
               attrs="dim0 = %d, dim1 = %d" % (d0, d1))
s.check_op("kt.transpose", [s.randn(5, 3)], ["tensor<?x?xf32>"], attrs="dim0 = 0, dim1 = 1",
           arg_types=["tensor<?x?xf32>"], label="transpose dynamic")
s.check_op("kt.transpose", [s.randbool(2, 5)], ["tensor<5x2xi1>"], attrs="dim0 = 0, dim1 = 1")
for dims in [[2, 0, 1], [1, 2, 0], [0, 1, 2]]:
    s.check_op("kt.permute", [x], [T(tuple(np.transpose(x, dims).shape), "f32")],
               attrs="dims = [%s]" % ", ".join(map(str, dims)))

s.check_op("kt.expand", [s.randn(3, 1)], ["tensor<2x3x4xf32>"], attrs="size = [2, -1, 4]")
s.check_op("kt.expand", [s.randn()], ["tensor<3x2xf32>"], attrs="size = [3, 2]")
s.check_op("kt.expand", [s.randn(4, 1)], ["tensor<?x5xf32>"], attrs="size = [-1, 5]",
           arg_types=["tensor<?x1xf32>"], label="expand dynamic")
s.check_op("kt.expand", [s.randint(0, 5, 1, 3, dtype=np.int32)], ["tensor<0x3xi32>"],
           attrs="size = [0, 3]")

y = s.randn(1, 3, 1)
s.check_op("kt.squeeze", [y], ["tensor<3xf32>"])
s.check_op("kt.squeeze", [y], ["tensor<3x1xf32>"], attrs="dim = [0]")
s.check_op("kt.squeeze", [y], ["tensor<1x3xf32>"], attrs="dim = [-1, 1]")
s.check_op("kt.squeeze", [s.randn(1, 1)], ["tensor<f32>"])
for d, out in [(0, (1, 2, 3)), (-1, (2, 3, 1)), (1, (2, 1, 3))]:
    s.check_op("kt.unsqueeze", [s.randn(2, 3)], [T(out, "f32")], attrs="dim = %d" % d)
s.check_op("kt.unsqueeze", [s.randn()], ["tensor<1xf32>"], attrs="dim = 0")

z = s.randn(4, 9)
for attrs, out in [("dim = 1, start = 1, end = -1, step = 2", (4, 4)),
                   ("dim = 0, start = -3", (3, 9)), ("dim = 1, end = 100", (4, 9)),
                   ("dim = 1, start = 5, end = 2", (4, 0)), ("dim = 1, step = 4", (4, 3)),
                   ("dim = 1, start = 100", (4, 0))]:
    s.check_op("kt.slice", [z], [T(out, "f32")], attrs=attrs)
for attrs in ["dim = 1, start = 1, end = -1, step = 2", "dim = 0, start = -3",
              "dim = 1, start = 5, end = 2", "dim = 1, start = -100, step = 3"]:
    s.check_op("kt.slice", [z], ["tensor<?x?xf32>"], attrs=attrs,
               arg_types=["tensor<?x?xf32>"], label="slice dynamic " + attrs)
for attrs, out in [("dim = 0, index = 1", (9,)), ("dim = 1, index = -1", (4,))]:
    s.check_op("kt.select", [z], [T(out, "f32")], attrs=attrs)
s.check_op("kt.select", [z], ["tensor<?xf32>"], attrs="dim = 1, index = -2",
           arg_types=["tensor<?x?xf32>"], label="select dynamic")

a, b, c = s.randn(2, 3), s.randn(2, 1), s.randn(2, 0)
s.check_op("kt.concat", [a, b, c], ["tensor<2x4xf32>"], attrs="dim = 1")
s.check_op("kt.concat", [a, s.randn(3, 3)], ["tensor<5x3xf32>"], attrs="dim = 0")
s.check_op("kt.concat", [a, s.randn(0)], ["tensor<2x3xf32>"], attrs="dim = 0")
s.check_op("kt.concat", [a, s.randn(4, 3)], ["tensor<?x3xf32>"], attrs="dim = 0",
           arg_types=["tensor<?x3xf32>", "tensor<?x3xf32>"], label="concat dynamic")
s.check_op("kt.concat", [s.randbool(2), s.randbool(3)], ["tensor<5xi1>"], attrs="dim = 0")

p = s.randn(3, 4)
for pad, out in [([1, 2, -1, 0], (2, 7)), ([0, 0, 2, 2], (7, 4)), ([1, 1], (3, 6)),
                 ([-1, -2], (3, 1))]:
    s.check_op("kt.pad", [p], [T(out, "f32")],
               attrs="pad = [%s], value = 5.0 : f64" % ", ".join(map(str, pad)))
s.check_op("kt.pad", [s.randint(0, 5, 2, 2)], ["tensor<4x4xi64>"],
           attrs="pad = [1, 1, 1, 1], value = -2.0 : f64")

for dims in [[0], [-1], [0, 1], []]:
    s.check_op("kt.flip", [p], ["tensor<3x4xf32>"], attrs="dims = [%s]" % ", ".join(map(str, dims)))
s.check_op("kt.flip", [p], ["tensor<?x?xf32>"], attrs="dims = [0, 1]",
           arg_types=["tensor<?x?xf32>"], label="flip dynamic")

# creation ops (no inputs)
def creation(label, line, rtype):
    mlir = "func.func @main() -> %s {\n  %%r = %s\n  return %%r : %s\n}\n" % (rtype, line, rtype)
    s.check(label, mlir, [], elems=[re.search(r"(bf16|f16|f32|f64|i64|i32|i1)>$", rtype).group(1)])

creation("constant f32", "kt.constant {value = dense<[[1.0, 2.5], [-3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>", "tensor<2x2xf32>")
creation("constant i32 splat", "kt.constant {value = dense<7> : tensor<3xi32>} : () -> tensor<3xi32>", "tensor<3xi32>")
creation("full bf16", "kt.full {size = [2, 3], value = 1.5, dtype = bf16} : () -> tensor<2x3xbf16>", "tensor<2x3xbf16>")
creation("full i1", "kt.full {size = [4], value = 1.0, dtype = i1} : () -> tensor<4xi1>", "tensor<4xi1>")
creation("arange i64", "kt.arange {start = 0.0, end = 5.0, step = 2.0, dtype = i64} : () -> tensor<3xi64>", "tensor<3xi64>")
creation("arange f32", "kt.arange {start = -1.0, end = 1.0, step = 0.1, dtype = f32} : () -> tensor<20xf32>", "tensor<20xf32>")
creation("arange f16", "kt.arange {start = 0.0, end = 3.0, step = 0.3, dtype = f16} : () -> tensor<10xf16>", "tensor<10xf16>")

mlir = """func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x3xf32>
  %f = kt.full %d {size = [-1, 3], value = 2.0, dtype = f32} : (index) -> tensor<?x3xf32>
  %r = kt.add %x, %f : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
"""
s.check("full dynamic", mlir, [s.randn(5, 3)])

s.finish()
