//===- MemrefCopy.h - memref.copy of strided views ---------------*- C++ -*-===//
//
// Part of Kiln's compiled-code runtime (runtime/; plain C++17). The lowering
// of memref.copy between views that are not both contiguous calls
//   void memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst)
// (the MLIR C runner utilities' contract: an unranked memref is
// {int64 rank, descriptor *}; a descriptor is {allocated, aligned, offset,
// sizes[rank], strides[rank]}). MLIR's own implementation
// (libmlir_c_runner_utils) copies element by element through a memcpy call
// of a run-time size; kiln_rt_memref_copy copies the same views row by row:
// size-1 dims dropped, dims that are contiguous in both views merged, then
// each innermost row one memmove where both are unit-stride, else a typed
// strided loop (1, 2, 4 and 8-byte elements). The JIT points compiled code's
// `memrefCopy` at it (lib/Backend/CPU/BufferPool.cpp), libkiln_rt exports it
// as `memrefCopy` for packages.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RT_MEMREFCOPY_H
#define KILN_RT_MEMREFCOPY_H

#include <cstdint>

extern "C" {
/// `src` and `dst` are unranked memrefs ({int64_t rank, void *descriptor})
/// of the same rank and sizes; views must not overlap.
void kiln_rt_memref_copy(int64_t elemSize, void *src, void *dst);
}

#endif // KILN_RT_MEMREFCOPY_H
