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
