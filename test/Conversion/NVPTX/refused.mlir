// RUN: kiln-opt %s -split-input-file -kiln-nvptx -verify-diagnostics -o /dev/null

// What kiln-nvptx still refuses (docs/gpu.md, "Ops without a GPU
// lowering"), each with a located error and no crash.

// A scatter with one index position: the loop folds away and the result
// buffer (self or the updated copy) is chosen on the host by the index's
// range test, a device value.
func.func @scatter_one(%x: tensor<3xf32>, %i: tensor<1xi64>, %s: tensor<1xf32>) -> tensor<3xf32> {
  // expected-error @below {{kiln-nvptx: the host uses a value this op computes from device memory; not supported}}
  %r = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<sum>} : (tensor<3xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A size that comes from the data (nonzero's count).
func.func @nonzero(%x: tensor<5xf32>) -> tensor<?x1xi64> {
  // expected-error @below {{kiln-nvptx: the host uses a value this op computes from device memory; not supported}}
  %r = kt.nonzero %x : (tensor<5xf32>) -> tensor<?x1xi64>
  return %r : tensor<?x1xi64>
}
