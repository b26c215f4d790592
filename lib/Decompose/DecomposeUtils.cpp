//===- DecomposeUtils.cpp - Helpers for decompositions --------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

using namespace mlir;

namespace kiln::decompose {

std::optional<SmallVector<int64_t>> dimsOf(std::optional<ArrayAttr> dim) {
  if (!dim)
    return std::nullopt;
  SmallVector<int64_t> r;
  for (Attribute a : *dim)
    r.push_back(cast<IntegerAttr>(a).getInt());
  return r;
}

} // namespace kiln::decompose
