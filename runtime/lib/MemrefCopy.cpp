//===- MemrefCopy.cpp - memref.copy of strided views for packages ---------===//
//
// Part of Kiln's compiled-code runtime (runtime/; plain C++17). The lowering
// of memref.copy between views with non-identity layouts calls
//   void memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst)
// (the MLIR C runner utilities' contract; the JIT points it at
// kiln_rt_memref_copy, lib/Backend/CPU/BufferPool.cpp). libkiln_rt defines
// it for packages over the same row-by-row copy (kiln/rt/MemrefCopy.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/rt/MemrefCopy.h"

extern "C" void memrefCopy(int64_t elemSize, void *src, void *dst) {
  kiln_rt_memref_copy(elemSize, src, dst);
}
