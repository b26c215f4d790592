//===- SpecialFunctionsDevice.cu - The runtime's special functions, device --===//
//
// Part of Kiln. The device build of runtime/include/kiln/rt/
// SpecialFunctions.h: the same C++ source as the CPU runtime's
// kiln_cpu_special_<fn>, compiled by clang as CUDA device code into LLVM
// bitcode (lib/Conversion/CMakeLists.txt: kiln_special_device.bc), where
// std:: math calls libdevice. kiln-nvptx renames a kernel's call of
// kiln_cpu_special_<fn> to kiln_gpu_special_<fn> and links this bitcode
// into the binary (docs/gpu.md).
//
//===----------------------------------------------------------------------===//

// Every function of the header becomes __host__ __device__.
#pragma clang force_cuda_host_device begin
#include "kiln/rt/SpecialFunctions.h"
#pragma clang force_cuda_host_device end

extern "C" {
// long double is double on the device, and NVPTX has no lowering of the
// llvm.log intrinsic that libstdc++'s std::log(long double) gives
// (besselJYSeries): built with -fmath-errno it calls logl, defined here
// (before, kt.special bessel_y0/y1 failed in kiln-nvptx: "no libcall
// available for flog").
__device__ long double logl(long double x) { return log((double)x); }

#define KILN_SPECIAL_DEVICE(name, fn)                                          \
  __device__ double kiln_gpu_special_##name(double x) {                        \
    return kiln::rt::special::fn(x);                                           \
  }
KILN_SPECIAL_UNARY_FNS(KILN_SPECIAL_DEVICE)
#undef KILN_SPECIAL_DEVICE
__device__ double kiln_gpu_special_polygamma(int64_t n, double x) {
  return kiln::rt::special::polygamma(n, x);
}
__device__ double kiln_gpu_special_zeta(double x, double q) {
  return kiln::rt::special::zeta(x, q);
}
}
