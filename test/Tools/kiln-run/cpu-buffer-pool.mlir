// RUN: kiln-run %s --backend=cpu --random-inputs --stats --repeat=4 --output-dir=%t | FileCheck %s
// RUN: env KILN_CPU_POOL_BYTES=0 kiln-run %s --backend=cpu --random-inputs --stats --repeat=4 --output-dir=%t | FileCheck %s --check-prefix=OFF

// Tests the CPU backend's buffer pool (docs/codegen.md): the 4 MiB result of
// each call is a pooled block, adopted (not copied) by the result tensor.
// kiln-run holds a call's results while the next call runs, so the first two
// of the 5 calls (one warm-up + 4 timed) map a block each, and each later
// call reuses the block that the results of the call before the previous one
// gave back (3 hits); at exit one block is cached, the other held by the
// last results. With KILN_CPU_POOL_BYTES=0 nothing is kept: every call maps
// its own block. The small (< 1 MiB) temporary is plain malloc.
// test/Execution/CPU/buffer_pool.py checks the numbers of repeated calls.

// CHECK: buffer pool: 3 hits, 2 misses, 4.1 MiB cached
// OFF: buffer pool: 0 hits, 5 misses, 0.0 MiB cached
func.func @main(%x: tensor<1024x1024xf32>, %y: tensor<1024xf32>) -> tensor<1024x1024xf32> {
  %s = kt.sum %x {dim = [0]} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
  %a = kt.add %x, %s : (tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
  %m = kt.mul %a, %y : (tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
  return %m : tensor<1024x1024xf32>
}
