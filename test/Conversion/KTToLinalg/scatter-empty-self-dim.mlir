// RUN: kiln-opt %s -kiln-cpu -o /dev/null
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.zeros((0, 5), np.uint8)); np.save('%t.i.npy', np.zeros((4, 3), np.int64)); np.save('%t.s.npy', np.ones((4, 3), np.uint8))"
// RUN: not kiln-run %s --entry=main --input=%t.x.npy --input=%t.i.npy --input=%t.s.npy 2>&1 | FileCheck %s
// RUN: not kiln-run %s --entry=main --input=%t.x.npy --input=%t.i.npy --input=%t.s.npy --backend=cpu 2>&1 | FileCheck %s

// kt.scatter into a self whose scatter dim has static size 0 (a non-empty
// index: every index is out of range, a run-time error on both backends,
// as in PyTorch). The column-parallel lowering sliced each column at
// offset 0 of the size-0 dim, which MLIR 22's verifier rejects ("offset 0
// is out-of-bounds: 0 >= 0"): kiln-cpu failed on a valid program
// (kiln-fuzz-pipeline's smoke run, fz27; generator seed with --zero-dims).
// Now it takes the general loop nest.
// CHECK: index 0 is out of bounds for dim 0 with size 0
func.func @main(%x: tensor<0x5xui8>, %i: tensor<4x3xi64>, %s: tensor<?x3xui8>) -> tensor<0x5xui8> {
  %r = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<sum>, include_self = false} : (tensor<0x5xui8>, tensor<4x3xi64>, tensor<?x3xui8>) -> tensor<0x5xui8>
  return %r : tensor<0x5xui8>
}
