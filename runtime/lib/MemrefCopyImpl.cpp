//===- MemrefCopyImpl.cpp - memref.copy of strided views, row by row ------===//
//
// Part of Kiln's compiled-code runtime. See kiln/rt/MemrefCopy.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/rt/MemrefCopy.h"

#include <cstring>

namespace {

struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// One element type's strided row copy (strides in elements).
template <typename T>
void copyRow(char *dst, const char *src, int64_t n, int64_t ds, int64_t ss) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * ss * (int64_t)sizeof(T), sizeof(T));
    std::memcpy(dst + i * ds * (int64_t)sizeof(T), &v, sizeof(T));
  }
}

void copyRow(int64_t elemSize, char *dst, const char *src, int64_t n,
             int64_t ds, int64_t ss) {
  if (ds == 1 && ss == 1) {
    std::memmove(dst, src, n * elemSize);
    return;
  }
  switch (elemSize) {
  case 4:
    return copyRow<uint32_t>(dst, src, n, ds, ss);
  case 8:
    return copyRow<uint64_t>(dst, src, n, ds, ss);
  case 2:
    return copyRow<uint16_t>(dst, src, n, ds, ss);
  case 1:
    return copyRow<uint8_t>(dst, src, n, ds, ss);
  default:
    for (int64_t i = 0; i < n; ++i)
      std::memmove(dst + i * ds * elemSize, src + i * ss * elemSize, elemSize);
  }
}

} // namespace

extern "C" void kiln_rt_memref_copy(int64_t elemSize, void *srcArg,
                                    void *dstArg) {
  auto *srcM = static_cast<UnrankedMemRef *>(srcArg);
  auto *dstM = static_cast<UnrankedMemRef *>(dstArg);
  const int64_t rank = srcM->rank;
  auto *sw = static_cast<int64_t *>(srcM->descriptor);
  auto *dw = static_cast<int64_t *>(dstM->descriptor);
  // No elements: nothing to copy, and the data pointers may be null (an
  // empty buffer), where adding the offset is UB (UBSan: "applying non-zero
  // offset to null pointer", test/Execution/CPU/slice_bounds.py).
  for (int64_t d = 0; d < rank; ++d)
    if (sw[3 + d] == 0)
      return;
  const char *src = reinterpret_cast<char *>(sw[1]) + sw[2] * elemSize;
  char *dst = reinterpret_cast<char *>(dw[1]) + dw[2] * elemSize;
  // The dims that matter (size > 1), outermost first, with the dims that
  // are contiguous in both views merged into the next inner one.
  constexpr int64_t kMaxRank = 64;
  int64_t size[kMaxRank], ss[kMaxRank], ds[kMaxRank];
  int64_t r = 0;
  bool fits = rank <= kMaxRank;
  for (int64_t d = 0; fits && d < rank; ++d) {
    int64_t n = sw[3 + d];
    if (n == 0)
      return;
    if (n == 1)
      continue;
    size[r] = n;
    ss[r] = sw[3 + rank + d];
    ds[r] = dw[3 + rank + d];
    ++r;
  }
  if (!fits) {
    // Not reached by compiled code (ranks are small); the plain loop.
    int64_t total = 1;
    for (int64_t d = 0; d < rank; ++d)
      total *= sw[3 + d];
    for (int64_t k = 0; k < total; ++k) {
      int64_t rest = k, so = 0, doff = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t i = rest % sw[3 + d];
        rest /= sw[3 + d];
        so += i * sw[3 + rank + d];
        doff += i * dw[3 + rank + d];
      }
      std::memmove(dst + doff * elemSize, src + so * elemSize, elemSize);
    }
    return;
  }
  if (r == 0) {
    std::memmove(dst, src, elemSize);
    return;
  }
  int64_t m = 0; // merged dims written back into size/ss/ds[0..m]
  for (int64_t d = 0; d < r; ++d) {
    if (m > 0 && ss[m - 1] == ss[d] * size[d] && ds[m - 1] == ds[d] * size[d]) {
      size[m - 1] *= size[d];
      ss[m - 1] = ss[d];
      ds[m - 1] = ds[d];
      continue;
    }
    size[m] = size[d];
    ss[m] = ss[d];
    ds[m] = ds[d];
    ++m;
  }
  const int64_t inner = m - 1;
  int64_t index[kMaxRank] = {0};
  int64_t so = 0, doff = 0;
  for (;;) {
    copyRow(elemSize, dst + doff * elemSize, src + so * elemSize, size[inner],
            ds[inner], ss[inner]);
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      so += ss[d];
      doff += ds[d];
      if (++index[d] < size[d])
        break;
      so -= ss[d] * size[d];
      doff -= ds[d] * size[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
