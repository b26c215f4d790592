// RUN: env KILN_SPECIAL_DEVICE_BC=%t.any kiln-opt %s -split-input-file -kiln-nvptx-map-to-gpu | FileCheck %s --check-prefix=DEV
// RUN: env KILN_SPECIAL_DEVICE_BC=off not kiln-opt %s -split-input-file -kiln-nvptx-map-to-gpu 2>/dev/null | FileCheck %s --check-prefix=OFF
// RUN: env KILN_SPECIAL_DEVICE_BC=off not kiln-opt %s -split-input-file -kiln-nvptx-map-to-gpu 2>&1 >/dev/null | FileCheck %s --check-prefix=OFFERR

// The runtime's special functions in kernels. With the device build of the
// runtime (kiln_special_device.bc, found or named by $KILN_SPECIAL_DEVICE_BC)
// every kiln_cpu_special_<fn> call becomes kiln_gpu_special_<fn>, declared
// in the module (the pipeline links the bitcode); without it, the functions
// libdevice has call it (kiln_cpu_special_lgamma -> __nv_lgamma) and the
// others are refused naming the function. An unused call goes.
// DEV-LABEL: func.func private @kiln_gpu_special_lgamma(f64) -> f64
// DEV-LABEL: func.func @special_calls
// DEV: gpu.launch
// DEV: %[[R:.*]] = func.call @kiln_gpu_special_lgamma(%{{.*}}) : (f64) -> f64
// DEV: memref.store %[[R]]
// DEV-NOT: kiln_cpu_special_erfc
// DEV: return
// OFF-LABEL: func.func private @__nv_lgamma(f64) -> f64
// OFF-LABEL: func.func @special_calls
// OFF: %[[R:.*]] = func.call @__nv_lgamma(%{{.*}}) : (f64) -> f64
// OFF: memref.store %[[R]]
func.func private @kiln_cpu_special_lgamma(f64) -> f64
func.func private @kiln_cpu_special_erfc(f64) -> f64
func.func @special_calls(%x: memref<8xf64>) -> memref<8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf64>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf64>
    %r = func.call @kiln_cpu_special_lgamma(%v) : (f64) -> f64
    %unused = func.call @kiln_cpu_special_erfc(%v) : (f64) -> f64
    memref.store %r, %a[%i] : memref<8xf64>
    scf.reduce
  }
  return %a : memref<8xf64>
}

// -----

// DEV-LABEL: func.func @digamma_zeta
// DEV: func.call @kiln_gpu_special_polygamma(%{{.*}}, %{{.*}}) : (i64, f64) -> f64
// DEV: func.call @kiln_gpu_special_zeta(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// OFFERR: special-functions.mlir:[[# @LINE + 11]]:10: error: kiln-nvptx: a kernel calls the host function @kiln_cpu_special_polygamma; not supported (this build has no device build of the runtime's special functions, kiln_special_device.bc, and CUDA's libdevice has no such function)
func.func private @kiln_cpu_special_polygamma(i64, f64) -> f64
func.func private @kiln_cpu_special_zeta(f64, f64) -> f64
func.func @digamma_zeta(%x: memref<8xf64>) -> memref<8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = arith.constant 2 : i64
  %a = memref.alloc() : memref<8xf64>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf64>
    %p = func.call @kiln_cpu_special_polygamma(%n, %v) : (i64, f64) -> f64
    %r = func.call @kiln_cpu_special_zeta(%p, %v) : (f64, f64) -> f64
    memref.store %r, %a[%i] : memref<8xf64>
    scf.reduce
  }
  return %a : memref<8xf64>
}
