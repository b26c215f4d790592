// layer_norm_variants.c: C prototypes of a layer_norm row kernel's structure
// over 8192x1024 f32 (issue 13 section 4, rs22), timed against a copy loop in
// the same process. The statistics are those of Kiln's one-read kernel (a
// shift per row, then the sums of x - shift and its square from L1); weight
// 1 and bias 0 read as vectors as in Kiln's normalization.
//
//   clang-22 -O3 -march=native -fopenmp bench/prototypes/layer_norm_variants.c -o /tmp/lv -lm \
//     -L$(llvm-config-22 --libdir) -Wl,-rpath,$(llvm-config-22 --libdir)
//   OMP_NUM_THREADS=1 /tmp/lv
//
// Variants (min of 21 interleaved runs each; "% of copy" = copy time / time):
//   copy                   y = -x
//   16-row blocks          Kiln's kernel: the statistics of 16 rows (each row
//                          read from memory once), then their normalization
//                          (from L2)
//   ... + prefetch next row  the same with _mm_prefetch of row i + 1 during
//                          row i's statistics
//   per row                statistics and normalization of one row at a time
//   per row + prefetch next row
#define _GNU_SOURCE
#include <time.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#define N 8192
#define C 1024
static float W[C], B[C];
static inline void stats(const float *p, float *mean, float *rstd, int pf, const float *next) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, inv = _mm512_set1_ps(1.0f / C);
  for (int j = 0; j < C; j += 64) {
    if (pf) { _mm_prefetch((const char *)(next + j), _MM_HINT_T0); _mm_prefetch((const char *)(next + j + 16), _MM_HINT_T0);
              _mm_prefetch((const char *)(next + j + 32), _MM_HINT_T0); _mm_prefetch((const char *)(next + j + 48), _MM_HINT_T0); }
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(p + j), inv, a0); a1 = _mm512_fmadd_ps(_mm512_loadu_ps(p + j + 16), inv, a1);
    a2 = _mm512_fmadd_ps(_mm512_loadu_ps(p + j + 32), inv, a2); a3 = _mm512_fmadd_ps(_mm512_loadu_ps(p + j + 48), inv, a3);
  }
  float c = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  __m512 cs = _mm512_set1_ps(c), s0 = _mm512_setzero_ps(), s1 = s0, q0 = s0, q1 = s0;
  for (int j = 0; j < C; j += 32) {
    __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(p + j), cs), d1 = _mm512_sub_ps(_mm512_loadu_ps(p + j + 16), cs);
    s0 = _mm512_add_ps(s0, d0); s1 = _mm512_add_ps(s1, d1); q0 = _mm512_fmadd_ps(d0, d0, q0); q1 = _mm512_fmadd_ps(d1, d1, q1);
  }
  double S1 = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)), S2 = _mm512_reduce_add_ps(_mm512_add_ps(q0, q1));
  *mean = (float)(c + S1 / C);
  *rstd = (float)(1.0 / sqrt((S2 - S1 * S1 / C) / C + 1e-5));
}
static inline void norm(const float *p, float *q, float m, float r) {
  __m512 ms = _mm512_set1_ps(m), rs = _mm512_set1_ps(r);
  for (int j = 0; j < C; j += 16)
    _mm512_storeu_ps(q + j, _mm512_fmadd_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(p + j), ms), rs), _mm512_loadu_ps(W + j), _mm512_loadu_ps(B + j)));
}
static void blk16(const float *x, float *y, int pf) {   // Kiln's structure: stats of 16 rows, then normalize them
#pragma omp parallel for schedule(static)
  for (int b = 0; b < N; b += 16) {
    float m[16], r[16];
    for (int i = 0; i < 16; i++) stats(x + (size_t)(b + i) * C, &m[i], &r[i], pf, x + (size_t)(b + i + 1 < N ? b + i + 1 : b + i) * C);
    for (int i = 0; i < 16; i++) norm(x + (size_t)(b + i) * C, y + (size_t)(b + i) * C, m[i], r[i]);
  }
}
static void perrow(const float *x, float *y, int pf) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < N; i++) { float m, r; stats(x + (size_t)i * C, &m, &r, pf, x + (size_t)(i + 1 < N ? i + 1 : i) * C); norm(x + (size_t)i * C, y + (size_t)i * C, m, r); }
}
static void copy(const float *x, float *y, int pf) {
  (void)pf;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < (size_t)N * C; i += 16) _mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_setzero_ps(), _mm512_loadu_ps(x + i)));
}
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main() {
  float *x = aligned_alloc(64, (size_t)N * C * 4), *y = aligned_alloc(64, (size_t)N * C * 4);
  for (size_t i = 0; i < (size_t)N * C; i++) x[i] = rand() / (float)RAND_MAX;
  for (int j = 0; j < C; j++) { W[j] = 1; B[j] = 0; }
  memset(y, 0, (size_t)N * C * 4);
  void (*f[])(const float *, float *, int) = {copy, blk16, blk16, perrow, perrow};
  int pfs[] = {0, 0, 1, 0, 1};
  const char *nm[] = {"copy", "16-row blocks", "16-row blocks + prefetch next row", "per row", "per row + prefetch next row"};
  double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
  for (int rep = 0; rep < 21; rep++) for (int i = 0; i < 5; i++) { double t = now(); f[i](x, y, pfs[i]); t = now() - t; if (t < best[i]) best[i] = t; }
  for (int i = 0; i < 5; i++) printf("%-34s %.3f ms  %3.0f%% of copy\n", nm[i], best[i] * 1e3, 100 * best[0] / best[i]);
}
