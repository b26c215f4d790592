// exp_variants.c: f32 exp on AVX-512 against a copy loop (issue 13 section 4,
// ex23): what a cheaper exp can gain before it is wired into Kiln, and its
// error over every f32 in [-104, 89].
//
//   clang-22 -O3 -march=native -fopenmp bench/prototypes/exp_variants.c -o /tmp/ev -lm \
//     -L$(llvm-config-22 --libdir) -Wl,-rpath,$(llvm-config-22 --libdir)
//   /tmp/ev ulp                      # max ulp of each variant, every f32
//   OMP_NUM_THREADS=1 /tmp/ev time   # 16M f32, min of 15 interleaved runs
//
// Variants:
//   copy     y = -x (reads and writes 16M f32: the memory limit)
//   cephes   Cephes' exp as MLIR's approximation writes it (clamps, floor,
//            2^n from integer exponent bits, special-case selects): the
//            shape of today's kiln exp, not its exact op sequence
//   horner6  clamp to [-104, 89] (NaN kept), n = rint(x log2e) by the
//            1.5*2^23 trick, r in two Cody-Waite steps, e^r by a degree-6
//            minimax polynomial (Horner, 6 fma), vscalefps(p, n): 14 ops
//   horner5  the same with degree 5 (oneDNN's coefficients): 13 ops
#define _GNU_SOURCE
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S1(v) _mm512_set1_ps(v)
static inline __m512 clampNaN(__m512 x) {
  // vminps(a, b) = a < b ? a : b: NaN in b comes out.
  x = _mm512_min_ps(S1(89.0f), x);
  return _mm512_max_ps(S1(-104.0f), x);
}
static inline __m512 reduce(__m512 x, __m512 *n) {
  const __m512 shift = S1(12582912.0f); // 1.5 * 2^23
  __m512 t = _mm512_fmadd_ps(x, S1(1.44269504088896341f), shift);
  *n = _mm512_sub_ps(t, shift);
  __m512 r = _mm512_fnmadd_ps(*n, S1(0.693145751953125f), x);
  return _mm512_fnmadd_ps(*n, S1(1.428606765330187045e-06f), r);
}
static inline __m512 exp_horner6(__m512 x) {
  __m512 n, r = reduce(clampNaN(x), &n);
  __m512 p = S1(0.0013843654f);
  p = _mm512_fmadd_ps(p, r, S1(0.0083741555f));
  p = _mm512_fmadd_ps(p, r, S1(0.041668f));
  p = _mm512_fmadd_ps(p, r, S1(0.16666432f));
  p = _mm512_fmadd_ps(p, r, S1(0.49999994f));
  p = _mm512_fmadd_ps(p, r, S1(1.0f));
  p = _mm512_fmadd_ps(p, r, S1(1.0f));
  return _mm512_scalef_ps(p, n);
}
static inline __m512 exp_horner5(__m512 x) {
  __m512 n, r = reduce(clampNaN(x), &n);
  __m512 p = S1(0.008290315f);
  p = _mm512_fmadd_ps(p, r, S1(0.04189793f));
  p = _mm512_fmadd_ps(p, r, S1(0.16667636f));
  p = _mm512_fmadd_ps(p, r, S1(0.4999915f));
  p = _mm512_fmadd_ps(p, r, S1(0.9999997f));
  p = _mm512_fmadd_ps(p, r, S1(1.0f));
  return _mm512_scalef_ps(p, n);
}
// Cephes' expf in MLIR's form (ExpApproximation in
// mlir/lib/Dialect/Math/Transforms/PolynomialApproximation.cpp): clamp,
// floor(x log2e + 0.5), two-step reduction, degree-5 polynomial, 2^n built
// from integer bits, selects for overflow/underflow/NaN.
static inline __m512 exp_cephes(__m512 x) {
  __m512 xc = _mm512_max_ps(_mm512_min_ps(x, S1(88.3762626647950f)), S1(-88.3762626647949f));
  __m512 fx = _mm512_floor_ps(_mm512_fmadd_ps(xc, S1(1.44269504088896341f), S1(0.5f)));
  __m512 r = _mm512_fnmadd_ps(fx, S1(0.693359375f), xc);
  r = _mm512_fnmadd_ps(fx, S1(-2.12194440e-4f), r);
  __m512 z = _mm512_mul_ps(r, r);
  __m512 y = S1(1.9875691500E-4f);
  y = _mm512_fmadd_ps(y, r, S1(1.3981999507E-3f));
  y = _mm512_fmadd_ps(y, r, S1(8.3334519073E-3f));
  y = _mm512_fmadd_ps(y, r, S1(4.1665795894E-2f));
  y = _mm512_fmadd_ps(y, r, S1(1.6666665459E-1f));
  y = _mm512_fmadd_ps(y, r, S1(5.0000001201E-1f));
  y = _mm512_fmadd_ps(y, z, _mm512_add_ps(r, S1(1.0f)));
  __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(fx), _mm512_set1_epi32(127)), 23);
  y = _mm512_mul_ps(y, _mm512_castsi512_ps(e));
  __mmask16 big = _mm512_cmp_ps_mask(x, S1(88.3762626647950f), _CMP_GT_OQ);
  __mmask16 small = _mm512_cmp_ps_mask(x, S1(-88.3762626647949f), _CMP_LT_OQ);
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  y = _mm512_mask_mov_ps(y, big, S1(INFINITY));
  y = _mm512_mask_mov_ps(y, small, S1(0.0f));
  return _mm512_mask_mov_ps(y, nan, x);
}

typedef __m512 (*expfn)(__m512);
static const char *names[] = {"cephes", "horner6", "horner5"};
static expfn fns[] = {exp_cephes, exp_horner6, exp_horner5};
#define NV 3

static double ulpErr(float got, double want) {
  // Distance in units of the f32 ulp at the correctly rounded result.
  float w = (float)want;
  if (isnan(w) || isnan(got)) return isnan(w) == isnan(got) ? 0 : 1e9;
  if (isinf(w) || isinf(got)) return w == got ? 0 : 1e9;
  int e;
  frexpf(w == 0 ? 1e-45f : w, &e);
  double ulp = ldexp(1.0, (e - 24) < -149 ? -149 : e - 24);
  return fabs((double)got - want) / ulp;
}

static void ulp(void) {
  for (int v = 0; v < NV; ++v) {
    double worst = 0, worstNormal = 0;
    float at = 0, atN = 0;
    // Every f32 in [-110, 90]: the bit patterns in order.
    float lo = -110.0f, hi = 90.0f;
#pragma omp parallel
    {
      double w = 0, wn = 0;
      float a = 0, an = 0;
#pragma omp for schedule(static)
      for (int64_t i = -(int64_t)0x42DC0000u; i <= (int64_t)0x42B40000; i += 16) {
        float xs[16], ys[16];
        for (int k = 0; k < 16; ++k) {
          int64_t j = i + k;
          uint32_t bits = j < 0 ? (uint32_t)(-j) | 0x80000000u : (uint32_t)j;
          memcpy(&xs[k], &bits, 4);
        }
        _mm512_storeu_ps(ys, fns[v](_mm512_loadu_ps(xs)));
        for (int k = 0; k < 16; ++k) {
          if (!(xs[k] >= lo && xs[k] <= hi)) continue;
          double ref = exp((double)xs[k]);
          double e = ulpErr(ys[k], ref);
          if (e > w) { w = e; a = xs[k]; }
          if ((float)ref >= 1.17549435e-38f && e > wn) { wn = e; an = xs[k]; }
        }
      }
#pragma omp critical
      {
        if (w > worst) { worst = w; at = a; }
        if (wn > worstNormal) { worstNormal = wn; atN = an; }
      }
    }
    float sp[16] = {-INFINITY, INFINITY, NAN, 88.72f, 88.73f, -87.3f, -100.0f, -0.0f,
                    0.0f, 1.0f, -1.0f, 1e30f, -1e30f, 88.7228391f, -103.972f, -89.0f};
    float out[16];
    _mm512_storeu_ps(out, fns[v](_mm512_loadu_ps(sp)));
    printf("%-8s max ulp %.3f (at %.9g), normal results %.3f (at %.9g)\n", names[v], worst, at,
           worstNormal, atN);
    printf("         specials:");
    for (int k = 0; k < 16; ++k) printf(" exp(%g)=%g", sp[k], out[k]);
    printf("\n");
  }
}

#define N (16 * 1024 * 1024)
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static void run(int v, const float *x, float *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; i += 64) {
    for (int k = 0; k < 64; k += 16) {
      __m512 a = _mm512_load_ps(x + i + k);
      _mm512_store_ps(y + i + k, v < 0 ? _mm512_sub_ps(_mm512_setzero_ps(), a) : fns[v](a));
    }
  }
}
static void timeit(void) {
  float *x = aligned_alloc(64, N * 4), *y = aligned_alloc(64, N * 4);
  for (int64_t i = 0; i < N; ++i) x[i] = (float)((i * 2654435761u) % 20000) * 1e-3f - 10.0f;
  memset(y, 0, N * 4);
  double best[NV + 1];
  for (int v = 0; v <= NV; ++v) best[v] = 1e9;
  for (int rep = 0; rep < 15; ++rep)
    for (int v = -1; v < NV; ++v) {
      double t0 = now();
      run(v, x, y);
      double t = now() - t0;
      if (t < best[v + 1]) best[v + 1] = t;
    }
  printf("threads %d, 16M f32, min of 15 interleaved:\n", omp_get_max_threads());
  printf("  %-8s %.2f ms\n", "copy", best[0] * 1e3);
  for (int v = 0; v < NV; ++v)
    printf("  %-8s %.2f ms  %.0f%% of copy\n", names[v], best[v + 1] * 1e3, 100 * best[0] / best[v + 1]);
  // compute alone: 64 KiB in L2, 256 times
  for (int v = 0; v <= NV; ++v) best[v] = 1e9;
  for (int rep = 0; rep < 15; ++rep)
    for (int v = -1; v < NV; ++v) {
      double t0 = now();
      for (int it = 0; it < 256; ++it)
        for (int64_t i = 0; i < 16384; i += 16) {
          __m512 a = _mm512_load_ps(x + i);
          _mm512_store_ps(y + i, v < 0 ? _mm512_sub_ps(_mm512_setzero_ps(), a) : fns[v](a));
        }
      double t = now() - t0;
      if (t < best[v + 1]) best[v + 1] = t;
    }
  printf("  in cache (4M elements, 1 thread): copy %.2f ms", best[0] * 1e3);
  for (int v = 0; v < NV; ++v) printf(", %s %.2f ms", names[v], best[v + 1] * 1e3);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "ulp"))
    ulp();
  else
    timeit();
  return 0;
}
