// REQUIRES: ptxas
// RUN: kiln-opt %s -split-input-file -kiln-nvptx='emit=isa' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: rm -rf %t.ptx && %python %S/../../../scripts/extract_ptx.py %t.mlir %t.ptx
// RUN: for f in %t.ptx/*.ptx; do ptxas -arch=sm_90a $f -o /dev/null || exit 1; done
// The same programs with one thread per reduced row (block-reduce=false).
// RUN: kiln-opt %s -split-input-file -kiln-nvptx='emit=isa block-reduce=false' -o %t.nbr.mlir
// RUN: FileCheck %s < %t.nbr.mlir
// RUN: rm -rf %t.nbr.ptx && %python %S/../../../scripts/extract_ptx.py %t.nbr.mlir %t.nbr.ptx
// RUN: for f in %t.nbr.ptx/*.ptx; do ptxas -arch=sm_90a $f -o /dev/null || exit 1; done

// Programs of kiln-fuzz-pipeline's kiln-nvptx inputs (docs/debugging.md,
// "Runs of 2026-11-30 (fz27)") that failed in kiln-nvptx; each now
// compiles and its kernels assemble.

// Generator seeds 500083 and 500171 (reduced): a scatter whose result is
// not used (its index checks still run) keeps, per column, a private copy
// of the column in the kernel (memref.copy of a strided subview), which
// convert-gpu-to-nvvm lowered to a call of the host's memrefCopy: "'llvm.call'
// op 'memrefCopy' does not reference a symbol", without a location.
// (The first RUN line failed.)
// CHECK: llvm.func @main
// CHECK: gpu.binary @main_kernel
func.func @main(%arg0: tensor<?x4x1xf32>, %arg1: tensor<3x2x?xi64>, %arg2: tensor<?x3x?xf32>) -> (tensor<1x2xi64>) {
  %v2 = kt.scatter %arg0, %arg1, %arg2 {dim = 0 : i64, reduce = #kt.scatter_reduce<amax>} : (tensor<?x4x1xf32>, tensor<3x2x?xi64>, tensor<?x3x?xf32>) -> tensor<?x4x1xf32>
  %v3 = kt.amax %arg1 {dim = [0, -1]} : (tensor<3x2x?xi64>) -> tensor<2xi64>
  %v4 = kt.unsqueeze %v3 {dim = 0 : i64} : (tensor<2xi64>) -> tensor<1x2xi64>
  return %v4 : tensor<1x2xi64>
}

// -----

// Generator seed 501874 (reduced): a scatter into a strided slice runs on
// the host in a one-thread kernel (a loop of loads and stores through the
// slice's view) and the host copies the view out afterwards; the nested
// loads kept the host's view, defined after the launch: "operand #0 does
// not dominate this use" in kiln-nvptx-map-to-gpu.
// CHECK: llvm.func @main
// CHECK: gpu.binary @main_kernel
func.func @main(%arg0: tensor<f32>, %arg1: tensor<5xi64>, %arg2: tensor<5xf32>) -> (tensor<1xf32>) {
  %v2 = kt.expand %arg0 {size = [1]} : (tensor<f32>) -> tensor<1xf32>
  %v3 = kt.slice %v2 {dim = 0 : i64, start = -1 : i64, end = 1 : i64, step = 2 : i64} : (tensor<1xf32>) -> tensor<1xf32>
  %v4 = kt.scatter %v3, %arg1, %arg2 {dim = 0 : i64, reduce = #kt.scatter_reduce<sum>} : (tensor<1xf32>, tensor<5xi64>, tensor<5xf32>) -> tensor<1xf32>
  return %v4 : tensor<1xf32>
}

// -----

// kiln-fuzz-pipeline, ASan fuzz build, `kiln-nvptx{block-reduce=false
// emit=bin}` (reduced): a var's element count (an f64 of the dims) is used
// by the host after the one-thread kernel of the reduction loops, and the
// pure ops it is computed from had moved into the kernel: "operand #0 does
// not dominate this use" in kiln-nvptx-map-to-gpu (block-reduce=true maps
// the reduction differently and did not fail).
// CHECK: llvm.func @main
// CHECK: gpu.binary @main_kernel
func.func @main(%arg1: tensor<?x1x5xf32>) -> (tensor<1xf32>) {
  %v3 = kt.var %arg1 {dim = [0, 2], correction = 1.0} : (tensor<?x1x5xf32>) -> tensor<1xf32>
  return %v3 : tensor<1xf32>
}
