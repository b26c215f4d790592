//===- SpecialFunctions.cpp - kiln_cpu_special_* for compiled code --------===//
//
// Part of Kiln. The C symbols compiled CPU code calls for kt.special and
// kt.zeta (kiln/rt/SpecialFunctions.h has the algorithms). Part of the
// compiled-code runtime: the JIT maps them (lib/Backend/CPU), libkiln_rt
// exports them to packages.
//
//===----------------------------------------------------------------------===//

#include "kiln/rt/SpecialFunctions.h"

namespace sp = kiln::rt::special;

extern "C" {
#define KILN_SPECIAL_DEFINE(name, fn)                                          \
  double kiln_cpu_special_##name(double x) { return sp::fn(x); }
KILN_SPECIAL_UNARY_FNS(KILN_SPECIAL_DEFINE)
#undef KILN_SPECIAL_DEFINE
double kiln_cpu_special_polygamma(int64_t n, double x) {
  return sp::polygamma(n, x);
}
double kiln_cpu_special_zeta(double x, double q) { return sp::zeta(x, q); }
}
