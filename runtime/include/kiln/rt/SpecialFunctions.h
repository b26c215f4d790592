//===- SpecialFunctions.h - Scalar special functions of kt.special -*- C++ -*-===//
//
// Part of Kiln. The scalar functions behind `kt.special` and `kt.zeta`
// (issue 16), in double precision, with PyTorch 1.13's values at poles and
// outside the domain. One implementation serves both backends: the
// interpreter calls these inline functions, and compiled CPU code calls the
// `kiln_cpu_special_*` C symbols (SpecialFunctions.cpp) that wrap them; the
// JIT maps those symbols to this process's copy, packages resolve them in
// libkiln_rt. f32/f16/bf16 callers compute in double and round to f32 (then
// to f16/bf16, as PyTorch rounds its float result).
//
// Algorithms (textbook ones, written here; no table is copied):
// * lgamma, erfc: the C library.
// * digamma: reflection for x < 0, recurrence up to x >= 10, then the
//   asymptotic series ln x - 1/(2x) - sum B_2k / (2k x^2k) (Bernoulli
//   numbers B_2 .. B_14).
// * trigamma: reflection for x < 1/2, recurrence up to x + 6, then the
//   asymptotic series 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
// * zeta(x, q) (Hurwitz): direct sum of the first terms, then the
//   Euler-Maclaurin tail with (2k)! / B_2k (as Cephes' zeta).
// * polygamma(n >= 2, x) = (-1)^(n+1) n! zeta(n + 1, x) (as PyTorch).
// * erfinv / erfcinv: Giles' single-precision approximation (2010) as the
//   first guess (an asymptotic one in the far tail), then Newton steps on
//   erf (on log erfc in the tails).
// * ndtri(p) = -sqrt(2) erfcinv(2p) (p < 1/2; symmetric above), so that both
//   tails keep their relative precision.
// * erfcx: exp(x^2) erfc(x) with x^2 split exactly (fma) for x < 10, the
//   continued fraction of erfc beyond, 2 exp(x^2) - erfcx(-x) for x < 0.
// * ndtr, log_ndtr: PyTorch's formulas over erf/erfc/erfcx.
// * i0, i1 (and the scaled i0e, i1e): the power series for |x| < 20
//   (positive terms, no cancellation), the asymptotic expansion of
//   I_nu(x) e^-x sqrt(2 pi x) beyond (its terms fall below 1e-17 there).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RT_SPECIALFUNCTIONS_H
#define KILN_RT_SPECIALFUNCTIONS_H

#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::rt::special {

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMachEp = 1.11022302462515654042e-16; // 2^-53
constexpr double k2OverSqrtPi = 1.12837916709551257390;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtPi = 1.77245385090551602730;

inline double lgamma(double x) { return std::lgamma(x); }
inline double erfc(double x) { return std::erfc(x); }

inline double digamma(double x) {
  if (x == 0)
    return std::copysign(kInf, -x); // PyTorch: digamma(+-0) = -+inf
  if (std::isnan(x) || x == -kInf)
    return kNaN;
  if (x < 0) {
    if (x == std::trunc(x))
      return kNaN; // a pole: PyTorch gives NaN
    double ip;
    double frac = std::modf(x, &ip);
    return digamma(1 - x) - kPi / std::tan(kPi * frac);
  }
  if (x == kInf)
    return kInf;
  double acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  // B_2k / (2k) for k = 1..7: 1/12, -1/120, 1/252, -1/240, 1/132,
  // -691/32760, 1/12.
  double z = 1 / (x * x);
  double s = 0;
  if (x < 1e17) {
    s = 1.0 / 12;
    s = s * z - 691.0 / 32760;
    s = s * z + 1.0 / 132;
    s = s * z - 1.0 / 240;
    s = s * z + 1.0 / 252;
    s = s * z - 1.0 / 120;
    s = s * z + 1.0 / 12;
    s *= z;
  }
  return acc + std::log(x) - 0.5 / x - s;
}

inline double trigamma(double x) {
  if (std::isnan(x))
    return kNaN;
  double sign = 1, acc = 0;
  if (x < 0.5) {
    // psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x): at a pole sin is 0 (or
    // rounds near it) and the result is +inf.
    sign = -1;
    double s = std::sin(kPi * x);
    acc -= kPi * kPi / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 6; ++i) {
    acc += 1 / (x * x);
    x += 1;
  }
  // 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7) - 1/(30x^9)
  double ixx = 1 / (x * x);
  acc += (1 + 1 / (2 * x) +
          ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42 - ixx / 30)))) /
         x;
  return sign * acc;
}

/// Hurwitz zeta(x, q) = sum_k (k + q)^-x, as torch.special.zeta.
inline double zeta(double x, double q) {
  // (2k)! / B_2k for k = 1..12.
  static const double kA[] = {
      12.0,
      -720.0,
      30240.0,
      -1209600.0,
      47900160.0,
      -1.8924375803183791606e9,
      7.47242496e10,
      -2.950130727918164224e12,
      1.1646782814350067249e14,
      -4.5979787224074726105e15,
      1.8152105401943546773e17,
      -7.1661652561756670113e18};
  if (std::isnan(x) || std::isnan(q))
    return kNaN;
  if (x == 1)
    return kInf;
  if (x < 1)
    return kNaN;
  if (q <= 0) {
    if (q == std::floor(q))
      return kInf;
    if (x != std::floor(x))
      return kNaN; // q^-x is not real
  }
  double s = std::pow(q, -x);
  double a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i += 1;
    a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kMachEp)
      return s;
  }
  double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double fac = 1, k = 0;
  for (int j = 0; j < 12; ++j) {
    fac *= x + k;
    b /= w;
    double t = fac * b / kA[j];
    s += t;
    if (std::fabs(t / s) < kMachEp)
      return s;
    k += 1;
    fac *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

/// torch.polygamma(n, x); n >= 0 (the op's verifier checks it).
inline double polygamma(int64_t n, double x) {
  if (n == 0)
    return digamma(x);
  if (n == 1)
    return trigamma(x);
  double f = std::exp(std::lgamma(n + 1.0));
  return ((n % 2) ? 1.0 : -1.0) * f * zeta((double)(n + 1), x);
}

/// Giles' single-precision erfinv: a guess for erfinv(x), from
/// w = -log((1 - x)(1 + x)).
inline double erfinvGuess(double x, double w) {
  double p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * x;
}

/// The y >= 0 with erfc(y) = q, for 0 < q <= 1/2 (the tail, y >= 0.476).
inline double erfcinvTail(double q) {
  double w = -std::log(q * (2 - q));
  double y;
  if (w < 16) {
    y = erfinvGuess(1 - q, w);
  } else {
    // erfc(y) ~ e^-y^2 / (y sqrt(pi)): y^2 = -log(q) - log(y sqrt(pi)).
    double l = -std::log(q);
    y = std::sqrt(l);
    for (int i = 0; i < 3; ++i)
      y = std::sqrt(l - std::log(y * kSqrtPi));
  }
  // Newton on log erfc(y) - log q (its slope is -2/sqrt(pi) / erfcx(y)).
  double lq = std::log(q);
  for (int i = 0; i < 4; ++i) {
    double e = std::erfc(y);
    if (e == 0)
      break;
    double g = std::log(e) - lq;
    double slope = -k2OverSqrtPi * std::exp(-y * y) / e;
    if (slope == 0 || !std::isfinite(slope))
      break;
    y -= g / slope;
  }
  return y;
}

inline double erfinv(double x) {
  if (std::isnan(x) || x < -1 || x > 1)
    return kNaN;
  double a = std::fabs(x);
  if (a == 1)
    return std::copysign(kInf, x);
  if (a > 0.5)
    return std::copysign(erfcinvTail(1 - a), x); // 1 - a is exact here
  if (a == 0)
    return x; // keeps -0.0
  double y = erfinvGuess(a, -std::log1p(-a * a));
  for (int i = 0; i < 2; ++i)
    y -= (std::erf(y) - a) / (k2OverSqrtPi * std::exp(-y * y));
  return std::copysign(y, x);
}

/// ndtri(p): the standard normal quantile; p in [0, 1].
inline double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1)
    return kNaN;
  if (p == 0)
    return -kInf;
  if (p == 1)
    return kInf;
  if (p == 0.5)
    return 0;
  // erfc(-z / sqrt 2) = 2p: the lower tail solves erfc(y) = 2p directly,
  // the upper one erfc(y) = 2(1 - p) (1 - p exact for p > 1/2).
  double q = p < 0.5 ? 2 * p : 2 * (1 - p);
  double y = q <= 0.5 ? erfcinvTail(q) : erfinv(1 - q);
  return p < 0.5 ? -kSqrt2 * y : kSqrt2 * y;
}

/// exp(x^2) for |x| < 26, with x^2 split into hi + lo exactly.
inline double expSquare(double x) {
  double hi = x * x;
  double lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1 + lo);
}

inline double erfcx(double x) {
  if (std::isnan(x))
    return kNaN;
  if (x < 0) {
    if (x < -26.7)
      return kInf;
    return 2 * expSquare(x) - erfcx(-x);
  }
  if (x < 10)
    return expSquare(x) * std::erfc(x);
  if (x == kInf)
    return 0;
  // erfc(x) e^(x^2) = (1/sqrt(pi)) / (x + (1/2) / (x + 1 / (x + (3/2) /
  // (x + ...)))), evaluated from the bottom (50 levels are plenty at x >= 10).
  double f = x;
  for (int k = 50; k >= 1; --k)
    f = x + (k * 0.5) / f;
  return 1 / (kSqrtPi * f);
}

inline double ndtr(double x) {
  // PyTorch's calc_ndtr: 0.5 erfc(-x / sqrt 2).
  if (std::isnan(x))
    return kNaN;
  return 0.5 * std::erfc(-x / kSqrt2);
}

inline double logNdtr(double x) {
  // PyTorch's calc_log_ndtr.
  double t = x / kSqrt2;
  if (x < -1.0)
    return std::log(erfcx(-t) / 2) - t * t;
  return std::log1p(-std::erfc(t) / 2);
}

/// e^-|x| I_nu(|x|) for nu = 0 or 1 (|x| >= 20): the asymptotic series.
inline double besselIScaledLarge(int nu, double ax) {
  double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    double odd = 2.0 * k - 1;
    double next = -term * (mu - odd * odd) / (k * 8 * ax);
    if (std::fabs(next) > std::fabs(term))
      break;
    term = next;
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum))
      break;
  }
  return sum / std::sqrt(2 * kPi * ax);
}

/// I_nu(|x|) by its power series (|x| < 20).
inline double besselISeries(int nu, double ax) {
  double q = ax * ax / 4;
  double term = nu == 0 ? 1 : ax / 2;
  double sum = term;
  for (int k = 1; k < 200; ++k) {
    term *= q / ((double)k * (double)(k + nu));
    sum += term;
    if (term < 1e-17 * sum)
      break;
  }
  return sum;
}

/// e^-|x| I_nu(x).
inline double besselIScaled(int nu, double x) {
  if (std::isnan(x))
    return kNaN;
  double ax = std::fabs(x);
  double r;
  if (ax == kInf)
    r = 0;
  else if (ax < 20)
    r = besselISeries(nu, ax) * std::exp(-ax);
  else
    r = besselIScaledLarge(nu, ax);
  return (nu == 1 && x < 0) ? -r : r;
}

/// I_nu(x).
inline double besselI(int nu, double x) {
  if (std::isnan(x))
    return kNaN;
  double ax = std::fabs(x);
  double r;
  if (ax < 20) {
    r = besselISeries(nu, ax);
  } else if (ax == kInf) {
    r = kInf;
  } else {
    // e^ax in two halves: e^ax alone overflows before I_nu does.
    double h = std::exp(ax / 2);
    r = (besselIScaledLarge(nu, ax) * h) * h;
  }
  return (nu == 1 && x < 0) ? -r : r;
}

inline double i0(double x) { return besselI(0, x); }
inline double i0e(double x) { return besselIScaled(0, x); }
inline double i1(double x) { return besselI(1, x); }
inline double i1e(double x) { return besselIScaled(1, x); }

} // namespace kiln::rt::special

// The symbols compiled CPU code calls (SpecialFunctions.cpp).
extern "C" {
double kiln_cpu_special_lgamma(double x);
double kiln_cpu_special_digamma(double x);
double kiln_cpu_special_polygamma(int64_t n, double x);
double kiln_cpu_special_erfc(double x);
double kiln_cpu_special_erfinv(double x);
double kiln_cpu_special_erfcx(double x);
double kiln_cpu_special_ndtr(double x);
double kiln_cpu_special_ndtri(double x);
double kiln_cpu_special_log_ndtr(double x);
double kiln_cpu_special_i0(double x);
double kiln_cpu_special_i0e(double x);
double kiln_cpu_special_i1(double x);
double kiln_cpu_special_i1e(double x);
double kiln_cpu_special_zeta(double x, double q);
}

#endif // KILN_RT_SPECIALFUNCTIONS_H
