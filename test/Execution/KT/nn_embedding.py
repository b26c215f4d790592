# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.embedding against torch.nn.functional.embedding: i32/i64 indices
# of ranks 0-3, float and integer tables, repeated indices, empty index
# tensors, dynamic dims, and the run-time out-of-range error.

import numpy as np
import torch
import torch.nn.functional as F
from kiln_testing import Suite, ttype, func_text, to_bf16

s = Suite(__file__, cpu=True)


def ref(w, i):
    return F.embedding(torch.from_numpy(i.astype(np.int64)),
                       torch.from_numpy(w)).numpy()


for ielem, idt in [("i64", np.int64), ("i32", np.int32)]:
    for ishape in [(5,), (2, 3), (2, 1, 4), (0,), (3, 0)]:
        w = s.randn(10, 4)
        i = s.randint(0, 10, *ishape, dtype=idt)
        exp = ref(w, i)
        s.check_op("kt.embedding", [w, i], exp, [ttype(exp.shape, "f32")],
                   label="embedding %s %s" % (ielem, ishape))
    # Rank-0 indices (a constant: kiln-run inputs have rank >= 1).
    w = s.randn(10, 4)
    mlir = func_text("main", ["tensor<10x4xf32>"], ["tensor<4xf32>"],
                     ["%idx = arith.constant dense<7> : tensor<" + ielem + ">",
                      "%0 = kt.embedding %arg0, %idx : (tensor<10x4xf32>, tensor<" + ielem + ">) -> tensor<4xf32>",
                      "return %0 : tensor<4xf32>"])
    s.check("embedding rank-0 %s" % ielem, mlir, [w], w[7].astype(np.float64))
# Other table dtypes (the rows are copied exactly).
w64 = s.randn(7, 3, dtype=np.float64)
i = np.array([[6, 0], [0, 3]], dtype=np.int64)
s.check_op("kt.embedding", [w64, i], ref(w64, i), [ttype((2, 2, 3), "f64")])
w16 = s.randn(7, 3).astype(np.float16)
s.check_op("kt.embedding", [w16, i], ref(w16, i), [ttype((2, 2, 3), "f16")])
wb = to_bf16(s.randn(7, 3))
s.check_op("kt.embedding", [wb, i], ref(wb, i), [ttype((2, 2, 3), "bf16")],
           elems=["bf16", "i64"], elem="bf16", rtol=0, atol=0)
wi = s.randint(-100, 100, 7, 3, dtype=np.int32)
s.check_op("kt.embedding", [wi, i], ref(wi, i), [ttype((2, 2, 3), "i32")])
wn = np.array([[np.nan, np.inf], [1.0, -np.inf]], dtype=np.float32)
i = np.array([1, 0, 1], dtype=np.int64)
s.check_op("kt.embedding", [wn, i], ref(wn, i), [ttype((3, 2), "f32")])
# embedding_dim 0.
w0 = np.zeros((4, 0), dtype=np.float32)
s.check_op("kt.embedding", [w0, i], ref(w0, i), [ttype((3, 0), "f32")])

# Dynamic dims.
w, i = s.randn(9, 5), s.randint(0, 9, 3, 2)
mlir = func_text("main", ["tensor<?x?xf32>", "tensor<?x?xi64>"], ["tensor<?x?x?xf32>"],
                 ["%0 = kt.embedding %arg0, %arg1 : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?x?x?xf32>",
                  "return %0 : tensor<?x?x?xf32>"])
s.check("embedding dynamic", mlir, [w, i], ref(w, i))

# Out-of-range indices are run-time errors (PyTorch raises IndexError).
s.check_error("embedding index too large", mlir,
              [w, np.array([[0, 9]], dtype=np.int64)],
              "index 9 is out of range for an embedding table of 9 rows")
s.check_error("embedding negative index", mlir,
              [w, np.array([[-1, 2]], dtype=np.int64)],
              "index -1 is out of range")
mlir32 = func_text("main", ["tensor<9x5xf32>", "tensor<2xi32>"], ["tensor<2x5xf32>"],
                   ["%0 = kt.embedding %arg0, %arg1 : (tensor<9x5xf32>, tensor<2xi32>) -> tensor<2x5xf32>",
                    "return %0 : tensor<2x5xf32>"])
s.check_error("embedding i32 index too large", mlir32,
              [w, np.array([3, 100], dtype=np.int32)], "index 100 is out of range")
s.finish()
