// REQUIRES: ptxas, special-device
// RUN: kiln-opt %s -split-input-file -kiln-nvptx='emit=isa' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: rm -rf %t.ptx && %python %S/../../../scripts/extract_ptx.py %t.mlir %t.ptx
// RUN: for f in %t.ptx/*.ptx; do ptxas -arch=sm_90a $f -o /dev/null || exit 1; done
// RUN: cat %t.ptx/*.ptx | FileCheck %s --check-prefix=PTX
// RUN: env KILN_SPECIAL_DEVICE_BC=%t.missing.bc not kiln-opt %s -split-input-file -kiln-nvptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING

// Every kt.special function and kt.zeta on the GPU (ptxas sm_90a here;
// parity.py assembles the test programs' special functions for sm_80): the kernels call the
// device build of the runtime's own functions (kiln_gpu_special_<fn>,
// runtime/cuda/SpecialFunctionsDevice.cu compiled by clang into
// kiln_special_device.bc), linked into the binary and inlined: the PTX
// calls nothing outside itself. 0-d operands (bf16) run in a one-thread
// kernel. A missing bitcode file is an error naming it, not a crash.
// Only the binaries whose kernels call them link the bitcode (the NVVM
// target's link files; kiln-nvptx.mlir's kernels have none).
// CHECK-LABEL: llvm.func @all_special
// CHECK: gpu.launch_func
// CHECK: gpu.binary @all_special_kernel {{.*}}#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80", link = ["{{[^"]*}}kiln_special_device.bc"]>
// PTX-NOT: .extern
// PTX-NOT: kiln_cpu_special
// MISSING: kiln-nvptx: KILN_SPECIAL_DEVICE_BC names '{{.*}}missing.bc', which is not a file
func.func @all_special(%a: tensor<2x?xf32>, %b: tensor<3xf64>, %d: tensor<bf16>) -> (tensor<2x?xf32>, tensor<2x?xf32>, tensor<3xf64>, tensor<bf16>, tensor<bf16>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<2x?xf32>, tensor<3xf64>, tensor<3xf64>) {
  %0 = kt.special %a {fn = #kt.special_fn<digamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.special %a {fn = #kt.special_fn<polygamma>, n = 3} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %2 = kt.special %b {fn = #kt.special_fn<log_ndtr>} : (tensor<3xf64>) -> tensor<3xf64>
  %3 = kt.special %d {fn = #kt.special_fn<i0e>} : (tensor<bf16>) -> tensor<bf16>
  %4 = kt.special %d {fn = #kt.special_fn<i1e>} : (tensor<bf16>) -> tensor<bf16>
  %5 = kt.special %b {fn = #kt.special_fn<modified_bessel_k0>} : (tensor<3xf64>) -> tensor<3xf64>
  %6 = kt.special %b {fn = #kt.special_fn<modified_bessel_k1>} : (tensor<3xf64>) -> tensor<3xf64>
  %7 = kt.special %b {fn = #kt.special_fn<scaled_modified_bessel_k0>} : (tensor<3xf64>) -> tensor<3xf64>
  %8 = kt.special %b {fn = #kt.special_fn<scaled_modified_bessel_k1>} : (tensor<3xf64>) -> tensor<3xf64>
  %9 = kt.special %a {fn = #kt.special_fn<spherical_bessel_j0>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %10 = kt.special %b {fn = #kt.special_fn<airy_ai>} : (tensor<3xf64>) -> tensor<3xf64>
  %11 = kt.zeta %b, %b : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x?xf32>, tensor<2x?xf32>, tensor<3xf64>, tensor<bf16>, tensor<bf16>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<2x?xf32>, tensor<3xf64>, tensor<3xf64>
}

// -----

// The functions libdevice also has, through the device build too; bessel_y0
// and bessel_y1 use a long double log (the device build's logl: before it,
// kiln-nvptx failed with "no libcall available for flog").
// CHECK-LABEL: llvm.func @libdevice_too
// CHECK: gpu.launch_func
func.func @libdevice_too(%b: tensor<3xf64>, %a: tensor<5xf32>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %0 = kt.special %b {fn = #kt.special_fn<bessel_y0>} : (tensor<3xf64>) -> tensor<3xf64>
  %1 = kt.special %b {fn = #kt.special_fn<bessel_y1>} : (tensor<3xf64>) -> tensor<3xf64>
  %2 = kt.special %b {fn = #kt.special_fn<bessel_j0>} : (tensor<3xf64>) -> tensor<3xf64>
  %3 = kt.special %b {fn = #kt.special_fn<bessel_j1>} : (tensor<3xf64>) -> tensor<3xf64>
  %4 = kt.special %b {fn = #kt.special_fn<lgamma>} : (tensor<3xf64>) -> tensor<3xf64>
  %5 = kt.special %b {fn = #kt.special_fn<erfc>} : (tensor<3xf64>) -> tensor<3xf64>
  %6 = kt.special %a {fn = #kt.special_fn<erfinv>} : (tensor<5xf32>) -> tensor<5xf32>
  %7 = kt.special %a {fn = #kt.special_fn<erfcx>} : (tensor<5xf32>) -> tensor<5xf32>
  %8 = kt.special %a {fn = #kt.special_fn<ndtr>} : (tensor<5xf32>) -> tensor<5xf32>
  %9 = kt.special %a {fn = #kt.special_fn<ndtri>} : (tensor<5xf32>) -> tensor<5xf32>
  %10 = kt.special %a {fn = #kt.special_fn<i0>} : (tensor<5xf32>) -> tensor<5xf32>
  %11 = kt.special %a {fn = #kt.special_fn<i1>} : (tensor<5xf32>) -> tensor<5xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}
