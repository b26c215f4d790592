//===- MemrefCopy.cpp - memref.copy of strided views for packages ---------===//
//
// Part of Kiln's compiled-code runtime (runtime/; plain C++17). The lowering
// of memref.copy between views with non-identity layouts calls
//   void memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst)
// (the MLIR C runner utilities' contract; the JIT takes it from
// libmlir_c_runner_utils, which is not where packages run). libkiln_rt
// defines it for packages. An unranked memref is {int64 rank, descriptor *};
// a descriptor is {allocated, aligned, offset, sizes[rank], strides[rank]}.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
struct View {
  char *data;
  const int64_t *sizes, *strides;
};
View viewOf(const UnrankedMemRef *m, int64_t elemSize) {
  auto *words = static_cast<int64_t *>(m->descriptor);
  char *aligned = reinterpret_cast<char *>(words[1]);
  return {aligned + words[2] * elemSize, words + 3, words + 3 + m->rank};
}
} // namespace

extern "C" void memrefCopy(int64_t elemSize, UnrankedMemRef *srcArg,
                           UnrankedMemRef *dstArg) {
  int64_t rank = srcArg->rank;
  View src = viewOf(srcArg, elemSize), dst = viewOf(dstArg, elemSize);
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d)
    n *= src.sizes[d];
  if (n == 0)
    return;
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t so = 0, doff = 0;
    for (int64_t d = 0; d < rank; ++d) {
      so += index[d] * src.strides[d];
      doff += index[d] * dst.strides[d];
    }
    std::memmove(dst.data + doff * elemSize, src.data + so * elemSize,
                 elemSize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < src.sizes[d])
        break;
      index[d] = 0;
    }
  }
}
