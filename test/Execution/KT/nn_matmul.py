# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.matmul against torch.matmul in float64: every rank case, batch
# broadcasting, every dtype, ints with wrap-around, NaN/inf, empty dims
# (K = 0 gives zeros), dynamic dims and the run-time contracting check.

import numpy as np
import torch
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)

RANK_CASES = [
    ((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (3,)), ((7, 1, 2, 3), (5, 3, 4)),
    ((2, 3), (6, 3, 4)), ((6, 2, 3), (3, 4)), ((4, 1, 2, 3), (1, 5, 3, 2)),
    ((1, 3), (3, 1)), ((2, 1, 5), (2, 5, 3)), ((3,), (2, 2, 3, 4)),
    ((2, 2, 4, 3), (3,)),
]


def ref_matmul(a, b):
    return torch.matmul(torch.from_numpy(a.astype(np.float64)),
                        torch.from_numpy(b.astype(np.float64))).numpy()


def rand(shape, elem):
    x = s.randn(*shape, dtype=np.float64 if elem == "f64" else np.float32)
    if elem == "f16":
        x = x.astype(np.float16)
    if elem == "bf16":
        x = to_bf16(x)
    return x


# Every rank case in f32 and i64; a subset (each rank rule once) in the other
# dtypes.
SUBSET = [RANK_CASES[i] for i in (0, 1, 2, 3, 6, 12)]

for elem in ["f32", "f64", "f16", "bf16"]:
    for sa, sb in (RANK_CASES if elem == "f32" else SUBSET):
        a, b = rand(sa, elem), rand(sb, elem)
        exp = ref_matmul(a, b)
        s.check_op("kt.matmul", [a, b], exp, [ttype(exp.shape, elem)],
                   elems=[elem, elem], elem=elem,
                   label="matmul %s %s x %s" % (elem, sa, sb))

# Larger sizes (loop bounds, accumulation).
a, b = s.randn(3, 37, 29), s.randn(29, 41)
s.check_op("kt.matmul", [a, b], ref_matmul(a, b), [ttype((3, 37, 41), "f32")])

# Integers: exact, wrap around like PyTorch (int64 two's complement).
for elem, dt in [("i64", np.int64), ("i32", np.int32)]:
    for sa, sb in (RANK_CASES if elem == "i64" else SUBSET):
        a, b = s.randint(-50, 50, *sa, dtype=dt), s.randint(-50, 50, *sb, dtype=dt)
        exp = torch.matmul(torch.from_numpy(a.astype(np.int64)),
                           torch.from_numpy(b.astype(np.int64))).numpy().astype(dt)
        s.check_op("kt.matmul", [a, b], exp, [ttype(exp.shape, elem)],
                   label="matmul %s %s x %s" % (elem, sa, sb))
big = np.array([[2**62, 3]], dtype=np.int64)
col = np.array([[4], [5]], dtype=np.int64)
s.check_op("kt.matmul", [big, col], np.array([[15]], dtype=np.int64),
           [ttype((1, 1), "i64")], label="matmul i64 wrap")
big32 = np.array([[2**30, 7]], dtype=np.int32)
s.check_op("kt.matmul", [big32, col.astype(np.int32)],
           np.array([[35]], dtype=np.int32), [ttype((1, 1), "i32")],
           label="matmul i32 wrap")

# NaN / inf propagate.
a = np.array([[1.0, np.nan], [np.inf, 1.0]], dtype=np.float32)
b = np.array([[1.0, 0.0], [2.0, 3.0]], dtype=np.float32)
s.check_op("kt.matmul", [a, b], ref_matmul(a, b), [ttype((2, 2), "f32")],
           label="matmul nan/inf")

# Empty dims: K = 0 gives zeros; zero batch / M / N give empty results.
for sa, sb in [((2, 0), (0, 3)), ((0,), (0,)), ((0, 2, 3), (3, 4)),
               ((2, 0, 3), (3, 4)), ((2, 3), (3, 0)), ((4, 2, 0), (0, 5))]:
    a, b = s.randn(*sa), s.randn(*sb)
    exp = ref_matmul(a, b)
    s.check_op("kt.matmul", [a, b], exp, [ttype(exp.shape, "f32")],
               label="matmul empty %s x %s" % (sa, sb))

# Dynamic dims: `?` batch, M, K, N resolved at run time.
a, b = s.randn(4, 2, 3), s.randn(3, 5)
mlir = func_text("main", ["tensor<?x?x?xf32>", "tensor<?x?xf32>"],
                 ["tensor<?x?x?xf32>"],
                 ["%0 = kt.matmul %arg0, %arg1 : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>",
                  "return %0 : tensor<?x?x?xf32>"])
s.check("matmul dynamic", mlir, [a, b], ref_matmul(a, b))
a, b = s.randn(1, 2, 3), s.randn(6, 3, 5)
mlir = func_text("main", ["tensor<?x2x3xf32>", "tensor<?x3x5xf32>"],
                 ["tensor<?x2x5xf32>"],
                 ["%0 = kt.matmul %arg0, %arg1 : (tensor<?x2x3xf32>, tensor<?x3x5xf32>) -> tensor<?x2x5xf32>",
                  "return %0 : tensor<?x2x5xf32>"])
s.check("matmul dynamic batch broadcast", mlir, [a, b], ref_matmul(a, b))

# Run-time errors: `?` contracting dims differ; batch dims incompatible.
a, b = s.randn(2, 3), s.randn(4, 5)
mlir = func_text("main", ["tensor<2x?xf32>", "tensor<?x5xf32>"], ["tensor<2x5xf32>"],
                 ["%0 = kt.matmul %arg0, %arg1 : (tensor<2x?xf32>, tensor<?x5xf32>) -> tensor<2x5xf32>",
                  "return %0 : tensor<2x5xf32>"])
s.check_error("matmul ? contracting mismatch", mlir, [a, b],
              "contracting dims differ at run time: 3 vs 4")
a, b = s.randn(2, 2, 3), s.randn(3, 3, 4)
mlir = func_text("main", ["tensor<?x2x3xf32>", "tensor<?x3x4xf32>"], ["tensor<?x2x4xf32>"],
                 ["%0 = kt.matmul %arg0, %arg1 : (tensor<?x2x3xf32>, tensor<?x3x4xf32>) -> tensor<?x2x4xf32>",
                  "return %0 : tensor<?x2x4xf32>"])
s.check_error("matmul ? batch mismatch", mlir, [a, b], "not broadcast-compatible")

s.finish()
