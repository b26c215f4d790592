// RUN: kiln-opt %s -split-input-file -kiln-nvptx -verify-diagnostics -o /dev/null

// What kiln-nvptx still refuses (docs/gpu.md, "Ops without a GPU
// lowering"), each with a located error and no crash.

// A size that comes from the data (nonzero's count).
func.func @nonzero(%x: tensor<5xf32>) -> tensor<?x1xi64> {
  // expected-error @below {{kiln-nvptx: the host uses a value this op computes from device memory; not supported}}
  %r = kt.nonzero %x : (tensor<5xf32>) -> tensor<?x1xi64>
  return %r : tensor<?x1xi64>
}
