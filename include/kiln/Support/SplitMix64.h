//===- SplitMix64.h - A small, fully specified random generator -*- C++ -*-===//
//
// Part of Kiln. splitmix64, so seeded random inputs (kiln-run
// --random-inputs, the fuzzers' differential checks) are the same values on
// every platform and standard library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_SPLITMIX64_H
#define KILN_SUPPORT_SPLITMIX64_H

#include <cmath>
#include <cstdint>

namespace kiln {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2 * M_PI * u2);
  }
};

} // namespace kiln

#endif // KILN_SUPPORT_SPLITMIX64_H
