// RUN: kiln-run %s --backend=cpu --random-inputs --stats | FileCheck %s

// Kernel results are freed right after their last use
// (kiln-cpu-early-dealloc), so within one call the 2 MiB intermediates of
// this chain of 7 kernels reuse each other's pooled blocks: 2 are live at
// any time (2 misses), the 5 others are hits. When every intermediate lived
// until the function returned, all 7 were live at the end (7 misses, and
// the peak memory of all of them).

// CHECK: kernels: 2 compiled, 5 reused (7 call sites)
// CHECK: buffer pool: 5 hits, 2 misses
func.func @main(%x: tensor<1024x512xf32>, %w: tensor<512x512xf32>, %b: tensor<512xf32>) -> tensor<1024x512xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<1024x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1024x512xf32>
  %1 = kt.softmax %0 {dim = -1} : (tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %2 = kt.linear %1, %w, %b : (tensor<1024x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1024x512xf32>
  %3 = kt.softmax %2 {dim = -1} : (tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %4 = kt.linear %3, %w, %b : (tensor<1024x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1024x512xf32>
  %5 = kt.softmax %4 {dim = -1} : (tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %6 = kt.linear %5, %w, %b : (tensor<1024x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1024x512xf32>
  return %6 : tensor<1024x512xf32>
}
