//===- NVPTXCodegen.h - Library functions of the kiln-nvptx pipeline -*- C++ -*-===//
//
// Part of Kiln. The GPU half of `kiln-nvptx` (docs/gpu.md): after
// bufferization and convert-linalg-to-parallel-loops, the host function's
// compute moves into `gpu.launch` regions and its buffers into device
// memory; the passes in lib/Conversion/NVPTX are thin drivers over these.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_NVPTX_NVPTXCODEGEN_H
#define KILN_CONVERSION_NVPTX_NVPTXCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace kiln::nvptx {

/// What mapToGPU did.
struct MapStats {
  unsigned parallelLoops = 0; ///< scf.parallel -> grid-stride kernels
  unsigned serialRegions = 0; ///< host loops/accesses -> one-thread kernels
  unsigned allocs = 0;        ///< memref.alloc -> gpu.alloc
  unsigned globals = 0;       ///< memref.get_global -> copies to the device
  unsigned kernelChecks = 0;  ///< run-time checks in kernels -> error record
  unsigned deviceCalls = 0; ///< special functions in kernels -> device builds
};

/// Moves the compute of a bufferized host function onto the GPU:
///  * every outermost `scf.parallel` (the parallel dims of a linalg op;
///    reductions are `scf.for` loops inside it) becomes a `gpu.launch` of
///    1-D blocks of `blockSize` threads: the iteration space is linearized
///    (the innermost dim fastest, so consecutive threads touch consecutive
///    elements), each thread runs a grid-stride loop over it, the grid is
///    min(ceil(total / blockSize), maxBlocks); an empty space launches
///    nothing;
///  * any other op that reads or writes memref data on the host (a loop of
///    a linalg op without parallel dims, a scalar load/store) runs in a
///    one-thread `gpu.launch`; if the host uses a value it computes, the
///    function is not supported (error at the op);
///  * `memref.alloc` becomes `gpu.alloc` (device memory), and a
///    `memref.get_global` (a dense constant) a device buffer filled from the
///    global by `gpu.memcpy`.
/// Function arguments and results are device buffers.
mlir::FailureOr<MapStats> mapToGPU(mlir::func::FuncOp fn, int64_t blockSize,
                                   int64_t maxBlocks);

/// Before convert-linalg-to-parallel-loops: every bufferized linalg op at
/// the host level (not in a loop or kernel) whose innermost loop is a
/// reduction that its inputs read contiguously, and whose outputs each
/// accumulate one combining op (add, mul, max/min, and/or/xor on f32, f64,
/// i32 or i64) of a value that depends on no output, becomes one
/// `gpu.launch`: a block per row (a point of the parallel dims; grid
/// min(rows, maxBlocks), grid-stride over rows), its threads (blockSize, or
/// fewer whole warps for short rows) striding over the row's reduced
/// elements with a partial per output, combined by `gpu.all_reduce`; thread
/// 0 folds the totals into the outputs. Ops whose static reduced size is
/// below `minReduced` are left (one thread per output then). Returns how
/// many ops became kernels.
unsigned mapRowReductions(mlir::func::FuncOp fn, int64_t blockSize,
                          int64_t maxBlocks, int64_t minReduced);

/// Before convert-linalg-to-parallel-loops: every bufferized
/// linalg.matmul / linalg.batch_matmul at the host level with default
/// indexing maps, one element type (f32 or f64) and row-major operands
/// (identity layouts) becomes `func.call @kiln_cuda_gemm(dtype, batch, m,
/// n, k, a, b, c)` (dtype 0 f32, 1 f64; pointers as the aligned addresses)
/// marked `kiln.matmul_impl = "cublas"`: C += A B through cuBLAS in the
/// runtime (runtime/cuda). The declaration is added to `module`. Returns
/// how many.
unsigned matmulsToCublas(mlir::ModuleOp module);

/// Memory effects for gpu.all_reduce and gpu.barrier (read and write of the
/// default resource; upstream declares none, and the deallocation pipeline
/// refuses ops with unknown effects). Needed wherever mapRowReductions'
/// kernels go through the rest of kiln-nvptx; the pass registers it.
void registerCollectiveEffects(mlir::DialectRegistry &registry);

/// In mapToGPU, once the kernels are formed: each call of the lowering's
/// run-time error function (kiln_cpu_runtime_error(id, v0..v7)) inside a
/// `gpu.launch` becomes a write of a device error record (10 i64 slots:
/// slot 0 counts failures by an atomic add; the thread that finds it 0
/// writes the id and values); the function allocates and zeroes the record on entry
/// and, before each return, copies it to the host and calls the error
/// function with it when slot 0 is set (the same message as on the CPU).
/// Returns how many calls were rewritten.
unsigned kernelErrorsToRecord(mlir::func::FuncOp fn);

/// The libdevice function (`__nv_lgamma`, ...) that computes the same as
/// the runtime's special function `runtimeFn` (`kiln_cpu_special_lgamma`),
/// or an empty string where libdevice has none (digamma, polygamma, zeta,
/// log_ndtr, the scaled Bessel functions, K0/K1, spherical J0, Airy Ai).
llvm::StringRef libdeviceSpecialFunction(llvm::StringRef runtimeFn);

/// The device build of the runtime's special functions
/// (kiln_special_device.bc: kiln_gpu_special_<fn>, compiled by clang from
/// runtime/cuda/SpecialFunctionsDevice.cu): $KILN_SPECIAL_DEVICE_BC when
/// set ("" or "off": none), else the build's file when it exists, else "".
std::string specialDeviceLibrary();

/// In mapToGPU, once the kernels are formed: each call of a runtime special
/// function (kiln_cpu_special_<fn>) inside a `gpu.launch` becomes a call of
/// its device build kiln_gpu_special_<fn> when `deviceLibrary` (the
/// pipeline links specialDeviceLibrary()), else of the libdevice function
/// that computes it where libdevice has one (libdeviceSpecialFunction); the
/// callee is declared in the module. Returns how many calls were rewritten.
unsigned specialCallsToDevice(mlir::func::FuncOp fn, bool deviceLibrary);

/// After nvvm-attach-target: each gpu.module that declares a
/// kiln_gpu_special_<fn> gets `path` (the device build's bitcode) in its
/// NVVM target's link files, so that only the binaries that call the
/// special functions link them. Returns how many modules.
unsigned linkSpecialLibrary(mlir::ModuleOp module, llvm::StringRef path);

/// After the deallocation pipeline, before convert-bufferization-to-memref:
/// each host `bufferization.clone` (of a returned buffer the function does
/// not own) becomes a `gpu.alloc` of the clone's type filled by a copy
/// kernel (see mapToGPU for the kernel's form). Returns how many.
mlir::FailureOr<unsigned> clonesToGPU(mlir::func::FuncOp fn, int64_t blockSize,
                                      int64_t maxBlocks);

/// After the deallocation pipeline: a `memref.dealloc` of a device buffer
/// (anything but a host `memref.alloc`, which the lowering of
/// `bufferization.dealloc` makes for its own bookkeeping) becomes
/// `gpu.dealloc`. Returns how many.
unsigned deallocsToGPU(mlir::ModuleOp module);

} // namespace kiln::nvptx

#endif // KILN_CONVERSION_NVPTX_NVPTXCODEGEN_H
