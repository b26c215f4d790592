// REQUIRES: ptxas
// RUN: kiln-opt %s -split-input-file -kiln-nvptx='emit=isa' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: rm -rf %t.ptx && %python %S/../../../scripts/extract_ptx.py %t.mlir %t.ptx
// RUN: for f in %t.ptx/*.ptx; do ptxas -arch=sm_90a $f -o /dev/null || exit 1; done
// RUN: FileCheck %s --check-prefix=PHILOX --implicit-check-not=fma < %t.ptx/rand_f32_kernel.7.ptx
// RUN: FileCheck %s --check-prefix=SPECIAL < %t.ptx/special_libdevice_kernel.10.ptx

// The ops that kiln-nvptx refused before gpu28 ("the host uses a value
// this op computes from device memory"): the losses (their target range
// check runs in a kernel and sets the device error record; the mean's
// division is a one-thread kernel), dropout and the random ops (0-d
// included: the seed is loaded in the kernels), kt.check (its condition's
// reduction and test in kernels), and kt.special. Each
// function compiles to kernels and host code that reads no device value
// except the error record (an mgpuMemcpy to the host, then the error call).
// (ptxas sm_90a here; parity.py assembles the test programs with these ops
// for sm_80 too.)

// CHECK-LABEL: llvm.func @nll_mean
// CHECK: gpu.launch_func
// CHECK: llvm.call @mgpuMemcpy
// CHECK: llvm.call @kiln_cpu_runtime_error
// CHECK: llvm.return
func.func @nll_mean(%x: tensor<?x5xf32>, %t: tensor<?xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t, %w {ignore_index = 2} : (tensor<?x5xf32>, tensor<?xi64>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: llvm.func @nll_0d
// CHECK: llvm.call @kiln_cpu_runtime_error
func.func @nll_0d(%z: tensor<3xf16>, %tz: tensor<i64>) -> tensor<f16> {
  %0 = kt.nll_loss %z, %tz {reduction = #kt.reduction<none>} : (tensor<3xf16>, tensor<i64>) -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// CHECK-LABEL: llvm.func @nll_spatial_sum
// CHECK: llvm.call @kiln_cpu_runtime_error
func.func @nll_spatial_sum(%y: tensor<?x3x5x6xf64>, %ty: tensor<?x5x6xi32>) -> (tensor<f64>, tensor<?x5x6xf64>) {
  %0 = kt.nll_loss %y, %ty {reduction = #kt.reduction<sum>} : (tensor<?x3x5x6xf64>, tensor<?x5x6xi32>) -> tensor<f64>
  %1 = kt.nll_loss %y, %ty {reduction = #kt.reduction<none>} : (tensor<?x3x5x6xf64>, tensor<?x5x6xi32>) -> tensor<?x5x6xf64>
  return %0, %1 : tensor<f64>, tensor<?x5x6xf64>
}

// -----

// CHECK-LABEL: llvm.func @cross_entropy_forms
// CHECK: llvm.call @kiln_cpu_runtime_error
func.func @cross_entropy_forms(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<3xf32>, %y: tensor<?x3x5xbf16>, %p: tensor<?x3x5xbf16>) -> (tensor<f32>, tensor<4xf32>, tensor<?x5xbf16>, tensor<f32>) {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 0.1} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = kt.cross_entropy %x, %t, %w {reduction = #kt.reduction<none>, ignore_index = 0, label_smoothing = 0.1} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<4xf32>
  %2 = kt.cross_entropy %y, %p {reduction = #kt.reduction<none>} : (tensor<?x3x5xbf16>, tensor<?x3x5xbf16>) -> tensor<?x5xbf16>
  %3 = kt.cross_entropy %x, %t, %w : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<4xf32>, tensor<?x5xbf16>, tensor<f32>
}

// -----

// CHECK-LABEL: llvm.func @check
// CHECK: llvm.call @mgpuMemcpy
// CHECK: llvm.call @kiln_cpu_runtime_error
func.func @check(%x: tensor<?x4xf32>, %ok: tensor<?x4xi1>, %o: tensor<3xi64>, %ok0: tensor<i1>) -> (tensor<?x4xf32>, tensor<3xi64>) {
  %0 = kt.check %x, %ok {message = "bad rows"} : (tensor<?x4xf32>, tensor<?x4xi1>) -> tensor<?x4xf32>
  %1 = kt.check %o, %ok0 {message = "offsets[0] has to be 0"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
  return %0, %1 : tensor<?x4xf32>, tensor<3xi64>
}

// -----

// A scatter with one index position (the loop folds away: the index's
// range test picks self or the updated copy, each copied into a result
// buffer of its own in a one-thread kernel).
// CHECK-LABEL: llvm.func @scatter_one
// CHECK: gpu.launch_func
// CHECK: llvm.call @kiln_cpu_runtime_error
func.func @scatter_one(%x: tensor<3xf32>, %i: tensor<1xi64>, %s: tensor<1xf32>, %c: tensor<i1>, %k: tensor<1xi64>, %u: tensor<i1>) -> (tensor<3xf32>, tensor<i1>) {
  %0 = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<sum>} : (tensor<3xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<3xf32>
  %1 = kt.scatter %c, %k, %u {dim = 0 : i64, reduce = #kt.scatter_reduce<amax>} : (tensor<i1>, tensor<1xi64>, tensor<i1>) -> tensor<i1>
  return %0, %1 : tensor<3xf32>, tensor<i1>
}

// -----

// Philox4x32-10 in the kernel: the interpreter's arithmetic, exact in PTX:
// the 32x32->64 products of the rounds (arith.mului_extended) are 64-bit
// products of zero-extended words, (u >> 8) is converted to f64 exactly,
// scaled by 2^-24 with mul.rn (round to nearest, never contracted into an
// fma), then rounded to f32 with cvt.rn: the same IEEE operations as the
// interpreter and the CPU (bit-identical values for rand and dropout).
// CHECK-LABEL: llvm.func @rand_f32
// PHILOX: cvt.u64.u32
// PHILOX: mul.lo.s64
// PHILOX: shr.u32
// PHILOX-NEXT: cvt.rn.f64.u32
// PHILOX-NEXT: mul.rn.f64
// PHILOX-NEXT: cvt.rn.f32.f64
func.func @rand_f32(%seed: tensor<i64>, %d: index) -> tensor<?x4xf32> {
  %r = kt.rand %seed, %d {size = [-1, 4], dtype = f32} : (tensor<i64>, index) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: llvm.func @random_0d
// CHECK: gpu.launch_func
func.func @random_0d(%seed: tensor<i64>, %d: index, %y: tensor<f64>) -> (tensor<?x4xf32>, tensor<2x3xf64>, tensor<bf16>, tensor<f64>, tensor<f64>) {
  %0 = kt.rand %seed, %d {size = [-1, 4], dtype = f32} : (tensor<i64>, index) -> tensor<?x4xf32>
  %1 = kt.randn %seed {size = [2, 3], dtype = f64} : (tensor<i64>) -> tensor<2x3xf64>
  %2 = kt.rand %seed {size = [], dtype = bf16} : (tensor<i64>) -> tensor<bf16>
  %3 = kt.randn %seed {size = [], dtype = f64} : (tensor<i64>) -> tensor<f64>
  %4 = kt.dropout %y, %seed {p = 0.5} : (tensor<f64>, tensor<i64>) -> tensor<f64>
  return %0, %1, %2, %3, %4 : tensor<?x4xf32>, tensor<2x3xf64>, tensor<bf16>, tensor<f64>, tensor<f64>
}

// -----

// CHECK-LABEL: llvm.func @dropout_forms
// CHECK: gpu.launch_func
func.func @dropout_forms(%x: tensor<4x?xf32>, %s: tensor<i64>, %h: tensor<?x?xf16>) -> (tensor<4x?xf32>, tensor<4x?xf32>, tensor<?x?xf16>) {
  %0 = kt.dropout %x, %s {p = 0.25, train = true} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  %1 = kt.dropout %x, %s {p = 1.0} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  %2 = kt.dropout %h, %s {p = 0.1} : (tensor<?x?xf16>, tensor<i64>) -> tensor<?x?xf16>
  return %0, %1, %2 : tensor<4x?xf32>, tensor<4x?xf32>, tensor<?x?xf16>
}

// -----

// The special functions libdevice has, in kernels and 0-d (a one-thread
// kernel): through the device build of the runtime where the build has one
// (special-device.mlir), else libdevice's; either way the binary links the
// definitions (no call left to an undefined function in the PTX).
// CHECK-LABEL: llvm.func @special_libdevice
// SPECIAL-NOT: .extern .func
// SPECIAL-NOT: kiln_cpu_special
func.func @special_libdevice(%a: tensor<2x?xf32>, %b: tensor<3xf64>, %c: tensor<4xf16>, %d: tensor<bf16>) -> (tensor<2x?xf32>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<4xf16>, tensor<4xf16>, tensor<bf16>, tensor<bf16>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) {
  %0 = kt.special %a {fn = #kt.special_fn<lgamma>} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = kt.special %b {fn = #kt.special_fn<erfc>} : (tensor<3xf64>) -> tensor<3xf64>
  %2 = kt.special %b {fn = #kt.special_fn<erfinv>} : (tensor<3xf64>) -> tensor<3xf64>
  %3 = kt.special %b {fn = #kt.special_fn<erfcx>} : (tensor<3xf64>) -> tensor<3xf64>
  %4 = kt.special %c {fn = #kt.special_fn<ndtr>} : (tensor<4xf16>) -> tensor<4xf16>
  %5 = kt.special %c {fn = #kt.special_fn<ndtri>} : (tensor<4xf16>) -> tensor<4xf16>
  %6 = kt.special %d {fn = #kt.special_fn<i0>} : (tensor<bf16>) -> tensor<bf16>
  %7 = kt.special %d {fn = #kt.special_fn<i1>} : (tensor<bf16>) -> tensor<bf16>
  %8 = kt.special %b {fn = #kt.special_fn<bessel_j0>} : (tensor<3xf64>) -> tensor<3xf64>
  %9 = kt.special %b {fn = #kt.special_fn<bessel_j1>} : (tensor<3xf64>) -> tensor<3xf64>
  %10 = kt.special %b {fn = #kt.special_fn<bessel_y0>} : (tensor<3xf64>) -> tensor<3xf64>
  %11 = kt.special %b {fn = #kt.special_fn<bessel_y1>} : (tensor<3xf64>) -> tensor<3xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x?xf32>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<4xf16>, tensor<4xf16>, tensor<bf16>, tensor<bf16>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>
}
