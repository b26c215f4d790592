// RUN: kiln-run %s --entry=g --backend=cpu --random-inputs --print > %t.cpu 2>&1
// RUN: FileCheck %s --implicit-check-not=warning < %t.cpu
// RUN: kiln-run %s --entry=g --random-inputs --print > %t.ref 2>&1
// RUN: diff %t.ref %t.cpu

// A graph function as `KILN_LOGS=+graph` prints it (kg.requires_grad on its
// arguments and results), run on its own: Kiln's attributes mean nothing to
// LLVM, whose translation warned about each one and printed the whole
// function. They are dropped before compiling; the results are unchanged.

// CHECK: result0: tensor<2x3xf32>
// CHECK: result1: tensor<2x3xf32>
func.func @g(%a: tensor<2x3xf32> {kg.requires_grad = true},
             %b: tensor<3xf32> {kg.requires_grad = false})
    -> (tensor<2x3xf32> {kg.requires_grad = true}, tensor<2x3xf32>) {
  %0 = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kt.mul %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}
