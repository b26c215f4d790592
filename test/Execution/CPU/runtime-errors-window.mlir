// Run-time shape errors of conv2d and the pools in compiled code, with the
// interpreter's messages at the op's location (the CPU backend runs the same
// checks as the interpreter; a failed check goes on with a zero input just
// large enough, so nothing reads out of bounds): channels against the
// weight, bias size, a padded input smaller than the dilated kernel, zero
// non-batch dims and too small an output of a pool. Valid calls of the same
// functions still give the right numbers (checked against torch in
// test/Execution/KT/nn_conv.py and nn_pool.py, which run on the CPU backend).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; z = lambda n, *s: np.save('%t/' + n + '.npy', np.ones(s, np.float32)); z('x0', 1, 3, 0, 4); z('x', 2, 3, 9, 7); z('w', 4, 3, 3, 3); z('b4', 4); z('b5', 5); z('c2', 1, 2, 5, 5); z('p', 1, 3, 2, 5); z('p0', 1, 3, 0, 5); z('pu', 3, 4, 0)"

// RUN: not kiln-run %s --entry=conv --input=%t/x0.npy --input=%t/w.npy --input=%t/b4.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not kiln-run %s --entry=conv --input=%t/x0.npy --input=%t/w.npy --input=%t/b4.npy 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not kiln-run %s --entry=conv --input=%t/x.npy --input=%t/w.npy --input=%t/b5.npy --backend=cpu --cpu-threads=2 2>&1 | FileCheck %s --check-prefix=BIAS
// RUN: not kiln-run %s --entry=conv --input=%t/x.npy --input=%t/w.npy --input=%t/b5.npy --backend=cpu --conv=direct 2>&1 | FileCheck %s --check-prefix=BIAS
// RUN: kiln-run %s --entry=conv --input=%t/x.npy --input=%t/w.npy --input=%t/b4.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=OK
// SMALL: runtime-errors-window.mlir:[[# @LINE + 7]]:8: {{(error: )?}}padded input 2x6 is smaller than the dilated kernel (at run time)
// BIAS: running @conv on the CPU backend failed: {{.*}}runtime-errors-window.mlir:[[# @LINE + 6]]:8: `bias` has 5 elements but there are 4 output channels (at run time)
// 3x3 ones over 3 channels + bias 1: 28 inside, less on the padded border.
// OK: result0: tensor<?x4x?x?xf32>
// OK-NEXT: {{\[\[\[\[}}13, 19, 19, 19, 19, 19, 13],
// OK-NEXT: {{\[}}19, 28, 28, 28, 28, 28, 19],
func.func @conv(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<?xf32>) -> tensor<?x4x?x?xf32> {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 1], padding = [1]} : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>, tensor<?xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// RUN: not kiln-run %s --entry=conv_channels --input=%t/c2.npy --input=%t/w.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=CHAN
// RUN: not kiln-run %s --entry=conv_channels --input=%t/c2.npy --input=%t/w.npy 2>&1 | FileCheck %s --check-prefix=CHAN
// CHAN: runtime-errors-window.mlir:[[# @LINE + 2]]:8: {{(error: )?}}input has 2 channels but `weight` expects 3 x 1 groups (at run time)
func.func @conv_channels(%x: tensor<1x?x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %0 = kt.conv2d %x, %w : (tensor<1x?x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// RUN: not kiln-run %s --entry=maxpool --input=%t/p.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=POOL
// RUN: not kiln-run %s --entry=maxpool --input=%t/p.npy 2>&1 | FileCheck %s --check-prefix=POOL
// RUN: not kiln-run %s --entry=maxpool --input=%t/p0.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=POOL0
// POOL: runtime-errors-window.mlir:[[# @LINE + 3]]:8: {{(error: )?}}output size is too small at run time: 0x1
// POOL0: runtime-errors-window.mlir:[[# @LINE + 2]]:8: expects non-zero sizes in all non-batch dims, got a zero-size dim 2
func.func @maxpool(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32> {
  %0 = kt.max_pool2d %x {kernel_size = [3, 3]} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
  return %0 : tensor<?x3x?x?xf32>
}

// Unbatched [C, H, W]: the message names the op's own dim (2, not 3).
// RUN: not kiln-run %s --entry=avgpool --input=%t/pu.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=AVG
// RUN: not kiln-run %s --entry=avgpool --input=%t/pu.npy 2>&1 | FileCheck %s --check-prefix=AVG
// AVG: runtime-errors-window.mlir:[[# @LINE + 2]]:8: {{(error: )?}}expects non-zero sizes in all non-batch dims, got a zero-size dim 2
func.func @avgpool(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2]} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
