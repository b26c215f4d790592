// softmax_variants.c: C prototypes of a softmax row kernel's structure over
// 4096x4096 f32 (issue 13 section 4, rs22), timed against a copy loop in
// the same process: what the kernel's pass structure can gain, apart from
// Kiln's code generation. Not semantics: no NaN/inf handling; variant c
// assumes rows whose max is within 60 of their first element (randn).
//
//   clang-22 -O3 -march=native -fopenmp bench/prototypes/softmax_variants.c -o /tmp/sv -lm \
//     -L$(llvm-config-22 --libdir) -Wl,-rpath,$(llvm-config-22 --libdir)
//   OMP_NUM_THREADS=1 /tmp/sv; OMP_NUM_THREADS=2 /tmp/sv
//
// Variants (min of 15 interleaved runs each; "% of copy" = copy time / time):
//   copy        y = -x, plain stores (the write allocates: 3 streams)
//   read(max)   the row max only (reads x once)
//   a:16rows    Kiln's smax18 kernel: per 16-row block a max pass, exp pass
//               storing e, sum pass, scale pass
//   b:perrow    per row: max, exp + store + sum (row in L1), scale
//   c:oneread   per row: one read (max alongside exp(x - x[0]) stored), scale
//   a2:cheapexp a with a 9-op exp (2^f polynomial + vscalefps)
//   b:incache   b over 8 rows reused (no memory traffic: compute alone)
//   b:incache-cheap  the same with the 9-op exp
//   b:NTstore   b with e in a stack row and the output written non-temporally
//   copyNT      copy with non-temporal stores
//   ce:online   cross_entropy's one-read online max + sum of exp (Kiln's
//               8-op step + exp), reads only; -cheap with the 9-op exp
//   ce:incache  the same over 8 rows reused (compute alone)
#define _GNU_SOURCE
#include <time.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include <string.h>
static inline __m512 exp512(__m512 x){
  x=_mm512_max_ps(_mm512_min_ps(x,_mm512_set1_ps(88.7f)),_mm512_set1_ps(-87.3f));
  __m512 k=_mm512_roundscale_ps(_mm512_mul_ps(x,_mm512_set1_ps(1.44269504f)),_MM_FROUND_TO_NEAREST_INT|_MM_FROUND_NO_EXC);
  __m512 r=_mm512_fnmadd_ps(k,_mm512_set1_ps(0.693359375f),x);
  r=_mm512_fnmadd_ps(k,_mm512_set1_ps(-2.12194440e-4f),r);
  __m512 p=_mm512_set1_ps(1.9875691500E-4f);
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(1.3981999507E-3f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(8.3334519073E-3f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(4.1665795894E-2f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(1.6666665459E-1f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(5.0000001201E-1f));
  p=_mm512_fmadd_ps(p,_mm512_mul_ps(r,r),_mm512_add_ps(r,_mm512_set1_ps(1.f)));
  __m512i e=_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(k),_mm512_set1_epi32(127)),23);
  return _mm512_mul_ps(p,_mm512_castsi512_ps(e));
}
static inline __m512 exp512c(__m512 x){
  __m512 t=_mm512_mul_ps(x,_mm512_set1_ps(1.44269504f));
  __m512 k=_mm512_roundscale_ps(t,_MM_FROUND_TO_NEAREST_INT|_MM_FROUND_NO_EXC);
  __m512 f=_mm512_sub_ps(t,k);
  __m512 p=_mm512_set1_ps(1.535336188319500e-4f);
  p=_mm512_fmadd_ps(p,f,_mm512_set1_ps(1.339887440266574e-3f));
  p=_mm512_fmadd_ps(p,f,_mm512_set1_ps(9.618437357674640e-3f));
  p=_mm512_fmadd_ps(p,f,_mm512_set1_ps(5.550332471162809e-2f));
  p=_mm512_fmadd_ps(p,f,_mm512_set1_ps(2.402264791363012e-1f));
  p=_mm512_fmadd_ps(p,f,_mm512_set1_ps(6.931472028550421e-1f));
  p=_mm512_fmadd_ps(p,f,_mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p,k);
}
#define N 4096
#define C 4096
static float hmax(__m512 a){return _mm512_reduce_max_ps(a);}
// (a) smax18: 16-row blocks, passes over the block
static void va(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int b=0;b<N;b+=16){
    float mx[16]; double sm[16];
    for(int r=b;r<b+16;r++){__m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;const float*p=x+(size_t)r*C;
      for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
      mx[r-b]=hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3)));}
    for(int r=b;r<b+16;r++){const float*p=x+(size_t)r*C;float*q=y+(size_t)r*C;__m512 M=_mm512_set1_ps(mx[r-b]);
      for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j),M)));}
    for(int r=b;r<b+16;r++){float*q=y+(size_t)r*C;__m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
      for(int j=0;j<C;j+=64){s0=_mm512_add_ps(s0,_mm512_loadu_ps(q+j));s1=_mm512_add_ps(s1,_mm512_loadu_ps(q+j+16));s2=_mm512_add_ps(s2,_mm512_loadu_ps(q+j+32));s3=_mm512_add_ps(s3,_mm512_loadu_ps(q+j+48));}
      sm[r-b]=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)));}
    for(int r=b;r<b+16;r++){float*q=y+(size_t)r*C;__m512 I=_mm512_set1_ps((float)(1.0/sm[r-b]));
      for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_mul_ps(_mm512_loadu_ps(q+j),I));}
  }
}
// (a) smax18: 16-row blocks, passes over the block
static void va2(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int b=0;b<N;b+=16){
    float mx[16]; double sm[16];
    for(int r=b;r<b+16;r++){__m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;const float*p=x+(size_t)r*C;
      for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
      mx[r-b]=hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3)));}
    for(int r=b;r<b+16;r++){const float*p=x+(size_t)r*C;float*q=y+(size_t)r*C;__m512 M=_mm512_set1_ps(mx[r-b]);
      for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,exp512c(_mm512_sub_ps(_mm512_loadu_ps(p+j),M)));}
    for(int r=b;r<b+16;r++){float*q=y+(size_t)r*C;__m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
      for(int j=0;j<C;j+=64){s0=_mm512_add_ps(s0,_mm512_loadu_ps(q+j));s1=_mm512_add_ps(s1,_mm512_loadu_ps(q+j+16));s2=_mm512_add_ps(s2,_mm512_loadu_ps(q+j+32));s3=_mm512_add_ps(s3,_mm512_loadu_ps(q+j+48));}
      sm[r-b]=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)));}
    for(int r=b;r<b+16;r++){float*q=y+(size_t)r*C;__m512 I=_mm512_set1_ps((float)(1.0/sm[r-b]));
      for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_mul_ps(_mm512_loadu_ps(q+j),I));}
  }
}
// (b) per row: max, exp+store+sum, scale
static void vb(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)r*C;float*q=y+(size_t)r*C;
    __m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;
    for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
    __m512 M=_mm512_set1_ps(hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3))));
    __m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
    for(int j=0;j<C;j+=64){__m512 e0=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j),M)),e1=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+16),M)),e2=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+32),M)),e3=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+48),M));
      _mm512_storeu_ps(q+j,e0);_mm512_storeu_ps(q+j+16,e1);_mm512_storeu_ps(q+j+32,e2);_mm512_storeu_ps(q+j+48,e3);
      s0=_mm512_add_ps(s0,e0);s1=_mm512_add_ps(s1,e1);s2=_mm512_add_ps(s2,e2);s3=_mm512_add_ps(s3,e3);}
    __m512 I=_mm512_set1_ps((float)(1.0/_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)))));
    for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_mul_ps(_mm512_loadu_ps(q+j),I));
  }
}
// (b) per row: max, exp+store+sum, scale
// (bnt): max, exp+store+sum, scale
static void vbnt(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)r*C;float qq[C] __attribute__((aligned(64)));float*q=qq;float*yo=y+(size_t)r*C;
    __m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;
    for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
    __m512 M=_mm512_set1_ps(hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3))));
    __m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
    for(int j=0;j<C;j+=64){__m512 e0=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j),M)),e1=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+16),M)),e2=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+32),M)),e3=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+48),M));
      _mm512_storeu_ps(q+j,e0);_mm512_storeu_ps(q+j+16,e1);_mm512_storeu_ps(q+j+32,e2);_mm512_storeu_ps(q+j+48,e3);
      s0=_mm512_add_ps(s0,e0);s1=_mm512_add_ps(s1,e1);s2=_mm512_add_ps(s2,e2);s3=_mm512_add_ps(s3,e3);}
    __m512 I=_mm512_set1_ps((float)(1.0/_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)))));
    for(int j=0;j<C;j+=16)_mm512_stream_ps(yo+j,_mm512_mul_ps(_mm512_load_ps(q+j),I));
  }
}
// (bnt): max, exp+store+sum, scale
static void vbh(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)(r&7)*C;float*q=y+(size_t)(r&7)*C;
    __m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;
    for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
    __m512 M=_mm512_set1_ps(hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3))));
    __m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
    for(int j=0;j<C;j+=64){__m512 e0=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j),M)),e1=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+16),M)),e2=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+32),M)),e3=exp512(_mm512_sub_ps(_mm512_loadu_ps(p+j+48),M));
      _mm512_storeu_ps(q+j,e0);_mm512_storeu_ps(q+j+16,e1);_mm512_storeu_ps(q+j+32,e2);_mm512_storeu_ps(q+j+48,e3);
      s0=_mm512_add_ps(s0,e0);s1=_mm512_add_ps(s1,e1);s2=_mm512_add_ps(s2,e2);s3=_mm512_add_ps(s3,e3);}
    __m512 I=_mm512_set1_ps((float)(1.0/_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)))));
    for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_mul_ps(_mm512_loadu_ps(q+j),I));
  }
}
// (b) per row: max, exp+store+sum, scale
static void vbh2(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)(r&7)*C;float*q=y+(size_t)(r&7)*C;
    __m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;
    for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
    __m512 M=_mm512_set1_ps(hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3))));
    __m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
    for(int j=0;j<C;j+=64){__m512 e0=exp512c(_mm512_sub_ps(_mm512_loadu_ps(p+j),M)),e1=exp512c(_mm512_sub_ps(_mm512_loadu_ps(p+j+16),M)),e2=exp512c(_mm512_sub_ps(_mm512_loadu_ps(p+j+32),M)),e3=exp512c(_mm512_sub_ps(_mm512_loadu_ps(p+j+48),M));
      _mm512_storeu_ps(q+j,e0);_mm512_storeu_ps(q+j+16,e1);_mm512_storeu_ps(q+j+32,e2);_mm512_storeu_ps(q+j+48,e3);
      s0=_mm512_add_ps(s0,e0);s1=_mm512_add_ps(s1,e1);s2=_mm512_add_ps(s2,e2);s3=_mm512_add_ps(s3,e3);}
    __m512 I=_mm512_set1_ps((float)(1.0/_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)))));
    for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_mul_ps(_mm512_loadu_ps(q+j),I));
  }
}
// (c) one read: exp relative to a fixed reference R (first element), max tracked alongside; scale by exp(R-M)/S
static void vc(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)r*C;float*q=y+(size_t)r*C;
    __m512 R=_mm512_set1_ps(p[0]);
    __m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;
    __m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
    for(int j=0;j<C;j+=64){__m512 x0=_mm512_loadu_ps(p+j),x1=_mm512_loadu_ps(p+j+16),x2=_mm512_loadu_ps(p+j+32),x3=_mm512_loadu_ps(p+j+48);
      m0=_mm512_max_ps(m0,x0);m1=_mm512_max_ps(m1,x1);m2=_mm512_max_ps(m2,x2);m3=_mm512_max_ps(m3,x3);
      __m512 e0=exp512(_mm512_sub_ps(x0,R)),e1=exp512(_mm512_sub_ps(x1,R)),e2=exp512(_mm512_sub_ps(x2,R)),e3=exp512(_mm512_sub_ps(x3,R));
      _mm512_storeu_ps(q+j,e0);_mm512_storeu_ps(q+j+16,e1);_mm512_storeu_ps(q+j+32,e2);_mm512_storeu_ps(q+j+48,e3);
      s0=_mm512_add_ps(s0,e0);s1=_mm512_add_ps(s1,e1);s2=_mm512_add_ps(s2,e2);s3=_mm512_add_ps(s3,e3);}
    float M=hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3)));
    if(M-p[0]>60.f){/* redo: not taken for randn */}
    __m512 I=_mm512_set1_ps((float)(1.0/_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)))));
    for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_mul_ps(_mm512_loadu_ps(q+j),I));
  }
}
static void vcopy(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)r*C;float*q=y+(size_t)r*C;for(int j=0;j<C;j+=16)_mm512_storeu_ps(q+j,_mm512_sub_ps(_mm512_setzero_ps(),_mm512_loadu_ps(p+j)));}
}
static void vcopynt(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)r*C;float*q=y+(size_t)r*C;for(int j=0;j<C;j+=16)_mm512_stream_ps(q+j,_mm512_sub_ps(_mm512_setzero_ps(),_mm512_loadu_ps(p+j)));}
}
// (d) max only (read), (e) exp on cache-resident row only
static void vread(const float*x,float*y){
#pragma omp parallel for schedule(static)
  for(int r=0;r<N;r++){const float*p=x+(size_t)r*C;__m512 m0=_mm512_set1_ps(-INFINITY),m1=m0,m2=m0,m3=m0;
    for(int j=0;j<C;j+=64){m0=_mm512_max_ps(m0,_mm512_loadu_ps(p+j));m1=_mm512_max_ps(m1,_mm512_loadu_ps(p+j+16));m2=_mm512_max_ps(m2,_mm512_loadu_ps(p+j+32));m3=_mm512_max_ps(m3,_mm512_loadu_ps(p+j+48));}
    y[(size_t)r*C]=hmax(_mm512_max_ps(_mm512_max_ps(m0,m1),_mm512_max_ps(m2,m3)));}
}
// (ce) cross_entropy / log_softmax's one-read online step as Kiln's
// vectorStep (OnlineRowStats.cpp): per 16 lanes gt = x > m, e = exp(-|x - m|),
// s = gt ? fma(s, e, 1) : s + e, m = gt ? x : m; 4 registers; reads only.
static inline void cestep(__m512 x, __m512 *m, __m512 *s, int cheap) {
  __mmask16 gt = _mm512_cmp_ps_mask(x, *m, _CMP_GT_OQ);
  __m512 d = _mm512_sub_ps(x, *m);
  d = _mm512_or_ps(d, _mm512_set1_ps(-0.0f));
  __m512 e = cheap ? exp512c(d) : exp512(d);
  __m512 grown = _mm512_fmadd_ps(*s, e, _mm512_set1_ps(1.0f));
  __m512 added = _mm512_add_ps(*s, e);
  *s = _mm512_mask_blend_ps(gt, added, grown);
  *m = _mm512_mask_blend_ps(gt, *m, x);
}
static void vce_(const float *x, float *y, int cheap, int mask) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < N; r++) {
    const float *p = x + (size_t)(r & mask) * C;
    __m512 m0 = _mm512_set1_ps(-3.4e38f), m1 = m0, m2 = m0, m3 = m0;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int j = 0; j < C; j += 64) {
      cestep(_mm512_loadu_ps(p + j), &m0, &s0, cheap);
      cestep(_mm512_loadu_ps(p + j + 16), &m1, &s1, cheap);
      cestep(_mm512_loadu_ps(p + j + 32), &m2, &s2, cheap);
      cestep(_mm512_loadu_ps(p + j + 48), &m3, &s3, cheap);
    }
    y[(size_t)r * C] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))) +
                       _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
  }
}
static void vce(const float *x, float *y) { vce_(x, y, 0, -1); }
static void vcec(const float *x, float *y) { vce_(x, y, 1, -1); }
static void vceh(const float *x, float *y) { vce_(x, y, 0, 7); }
static void vcehc(const float *x, float *y) { vce_(x, y, 1, 7); }
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
typedef void(*fn)(const float*,float*);
int main(){float*x=aligned_alloc(64,(size_t)N*C*4),*y=aligned_alloc(64,(size_t)N*C*4),*y2=aligned_alloc(64,(size_t)N*C*4);
  for(size_t i=0;i<(size_t)N*C;i++)x[i]=(float)(rand()/(double)RAND_MAX*6-3);
  memset(y,0,(size_t)N*C*4);memset(y2,0,(size_t)N*C*4);
  fn f[]={vcopy,vread,va,vb,vc,va2,vbh,vbh2,vbnt,vcopynt,vce,vcec,vceh,vcehc};const char*nm[]={"copy","read(max)","a:16rows","b:perrow","c:oneread","a2:cheapexp","b:incache","b:incache-cheap","b:NTstore","copyNT","ce:online","ce:online-cheap","ce:incache","ce:incache-cheap"};
  enum{NV=14};double best[NV];for(int i=0;i<NV;i++)best[i]=1e9;
  for(int rep=0;rep<15;rep++)for(int i=0;i<NV;i++){double t=now();f[i](x,y);t=now()-t;if(t<best[i])best[i]=t;}
  for(int i=0;i<NV;i++)printf("%-12s %.3f ms  %.0f%% of copy-time\n",nm[i],best[i]*1e3,100*best[0]/best[i]);
  va(x,y);vbnt(x,y2);double md=0;for(size_t i=0;i<(size_t)N*C;i++){double d=fabs(y[i]-y2[i])/y[i];if(d>md)md=d;}printf("max rel diff a vs b:NTstore %g\n",md);
}
