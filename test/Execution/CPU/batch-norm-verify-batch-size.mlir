// kt.batch_norm_train with the discardable unit attribute
// kt.verify_batch_size (F.batch_norm's check, which the Python frontend
// sets): one value per channel at run time (a dynamic batch of 1 with 1x1
// spatial dims) is PyTorch's error at the op's location, in the interpreter
// and in kiln-cpu's compiled code, and kiln-run exits non-zero. Two values
// per channel run; without the attribute (aten native_batch_norm) one value
// per channel runs too (zero variance: the output is the bias, 0).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/one.npy', np.full((1, 3, 1, 1), 2.0, np.float32)); np.save('%t/two.npy', np.arange(6, dtype=np.float32).reshape(2, 3, 1, 1))"

// RUN: not kiln-run %s --entry=bn --input=%t/one.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not kiln-run %s --entry=bn --input=%t/one.npy 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: kiln-run %s --entry=bn --input=%t/two.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: kiln-run %s --entry=bn --input=%t/two.npy --print 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: kiln-run %s --entry=native --input=%t/one.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=NATIVE
// RUN: kiln-run %s --entry=native --input=%t/one.npy --print 2>&1 | FileCheck %s --check-prefix=NATIVE
// ONE: batch-norm-verify-batch-size.mlir:[[# @LINE + 6]]:{{[0-9]+}}: {{(error: )?}}Expected more than 1 value per channel when training, got input size [1, 3, 1, 1]
// Channel c holds c and c + 3: normalized to -1 and 1 (up to eps).
// TWO: result0: tensor<?x3x?x?xf32>
// TWO-NEXT: {{\[\[\[\[}}-0.99{{[0-9]*}}]],
// NATIVE: {{\[\[\[\[}}0]],
func.func @bn(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32> {
  %y, %m, %r = kt.batch_norm_train %x {eps = 1.0e-5, kt.verify_batch_size} : (tensor<?x3x?x?xf32>) -> (tensor<?x3x?x?xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y : tensor<?x3x?x?xf32>
}

func.func @native(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32> {
  %y, %m, %r = kt.batch_norm_train %x {eps = 1.0e-5} : (tensor<?x3x?x?xf32>) -> (tensor<?x3x?x?xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y : tensor<?x3x?x?xf32>
}
