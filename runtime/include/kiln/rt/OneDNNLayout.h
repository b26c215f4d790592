//===- OneDNNLayout.h - libkiln_onednn's layout rule, shared ----*- C++ -*-===//
//
// Part of Kiln. Whether libkiln_onednn runs a conv on oneDNN's blocked
// (channels-last here) layout, reordering NCHW memory in and out, or on the
// plain layout as given (runtime/onednn/KilnOneDNN.cpp, `create`; measured
// in docs/codegen.md, "Convolution networks' inference, round 3").
// kiln-cpu-conv-to-onednn uses the same rule at compile time: a buffer
// between two chained convs is passed channels-last only where both convs
// are blocked (there it saves both reorders; next to a plain-layout conv it
// would add them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RT_ONEDNNLAYOUT_H
#define KILN_RT_ONEDNNLAYOUT_H

#include <cstdint>

namespace kiln::rt {

/// Blocked for ungrouped KxK kernels (K > 1) with >= 64 multiply-adds per
/// output (c * kh * kw) and >= 128 output positions (n * oh * ow).
inline bool oneDNNBlockedLayout(int64_t groups, int64_t c, int64_t kh,
                                int64_t kw, int64_t positions) {
  return groups == 1 && kh * kw > 1 && c * kh * kw >= 64 && positions >= 128;
}

} // namespace kiln::rt

#endif // KILN_RT_ONEDNNLAYOUT_H
