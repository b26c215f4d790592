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
double kiln_cpu_special_lgamma(double x) { return sp::lgamma(x); }
double kiln_cpu_special_digamma(double x) { return sp::digamma(x); }
double kiln_cpu_special_polygamma(int64_t n, double x) {
  return sp::polygamma(n, x);
}
double kiln_cpu_special_erfc(double x) { return sp::erfc(x); }
double kiln_cpu_special_erfinv(double x) { return sp::erfinv(x); }
double kiln_cpu_special_erfcx(double x) { return sp::erfcx(x); }
double kiln_cpu_special_ndtr(double x) { return sp::ndtr(x); }
double kiln_cpu_special_ndtri(double x) { return sp::ndtri(x); }
double kiln_cpu_special_log_ndtr(double x) { return sp::logNdtr(x); }
double kiln_cpu_special_i0(double x) { return sp::i0(x); }
double kiln_cpu_special_i0e(double x) { return sp::i0e(x); }
double kiln_cpu_special_i1(double x) { return sp::i1(x); }
double kiln_cpu_special_i1e(double x) { return sp::i1e(x); }
double kiln_cpu_special_zeta(double x, double q) { return sp::zeta(x, q); }
}
