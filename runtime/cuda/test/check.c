/*===- check.c - libkiln_cuda_rt without and with a GPU --------------------===*\
|*                                                                            *|
|* Part of Kiln. Without a driver (none installed, or KILN_CUDA_DRIVER naming *|
|* a missing file) every mgpu* call returns without crashing, the first      *|
|* error stays readable with kilnCudaGetError and is cleared by               *|
|* kilnCudaClearError. With a GPU it JIT-compiles a PTX kernel (x[i] += 1),   *|
|* runs it on 1000 elements and checks the result, then checks that a bad     *|
|* PTX module gives the driver's JIT log as the error.                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln_cuda_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kPtx =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry add_one(.param .u64 p, .param .u64 n) {\n"
    "  .reg .b64 %rd<6>; .reg .b32 %r<5>; .reg .f32 %f<3>; .reg .pred %p1;\n"
    "  ld.param.u64 %rd1, [p]; ld.param.u64 %rd2, [n];\n"
    "  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;\n"
    "  mad.lo.s32 %r4, %r1, %r2, %r3; cvt.s64.s32 %rd3, %r4;\n"
    "  setp.ge.s64 %p1, %rd3, %rd2; @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd4, %rd1; shl.b64 %rd5, %rd3, 2;\n"
    "  add.s64 %rd4, %rd4, %rd5; ld.global.f32 %f1, [%rd4];\n"
    "  add.f32 %f2, %f1, 0f3F800000; st.global.f32 [%rd4], %f2;\n"
    "DONE: ret;\n}\n";

/* C += A B through kiln_cuda_gemm (cuBLAS): a batch of 2 f32 products of
   3x4 by 4x5 onto a C of ones, and one f64 4x4 by 4x2, against loops here.
   Returns the number of wrong elements (or 1 on an error). */
static int checkGemm(void) {
  enum { B = 2, M = 3, K = 4, N = 5 };
  float a[B * M * K], b[B * K * N], c[B * M * N], ref[B * M * N];
  for (int i = 0; i < B * M * K; ++i)
    a[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < B * K * N; ++i)
    b[i] = (float)(i % 5) * 0.5f;
  for (int i = 0; i < B * M * N; ++i)
    c[i] = 1.0f;
  for (int p = 0; p < B; ++p)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float acc = 1.0f;
        for (int k = 0; k < K; ++k)
          acc += a[p * M * K + i * K + k] * b[p * K * N + k * N + j];
        ref[p * M * N + i * N + j] = acc;
      }
  double da[16], db[8], dc[8], dref[8];
  for (int i = 0; i < 16; ++i)
    da[i] = i * 0.25 - 1.0;
  for (int i = 0; i < 8; ++i) {
    db[i] = 2.0 - i;
    dc[i] = 0.0;
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) {
      double acc = 0.0;
      for (int k = 0; k < 4; ++k)
        acc += da[i * 4 + k] * db[k * 2 + j];
      dref[i * 2 + j] = acc;
    }
  void *s = mgpuStreamCreate();
  void *ga = mgpuMemAlloc(sizeof(a), s, false);
  void *gb = mgpuMemAlloc(sizeof(b), s, false);
  void *gc = mgpuMemAlloc(sizeof(c), s, false);
  void *gda = mgpuMemAlloc(sizeof(da), s, false);
  void *gdb = mgpuMemAlloc(sizeof(db), s, false);
  void *gdc = mgpuMemAlloc(sizeof(dc), s, false);
  mgpuMemcpy(ga, a, sizeof(a), s);
  mgpuMemcpy(gb, b, sizeof(b), s);
  mgpuMemcpy(gc, c, sizeof(c), s);
  mgpuMemcpy(gda, da, sizeof(da), s);
  mgpuMemcpy(gdb, db, sizeof(db), s);
  mgpuMemcpy(gdc, dc, sizeof(dc), s);
  mgpuStreamSynchronize(s);
  kiln_cuda_gemm(0, B, M, N, K, (intptr_t)ga, (intptr_t)gb, (intptr_t)gc);
  kiln_cuda_gemm(1, 1, 4, 2, 4, (intptr_t)gda, (intptr_t)gdb, (intptr_t)gdc);
  /* Empty products change nothing. */
  kiln_cuda_gemm(0, B, M, N, 0, (intptr_t)ga, (intptr_t)gb, (intptr_t)gc);
  kiln_cuda_gemm(0, 0, M, N, K, (intptr_t)ga, (intptr_t)gb, (intptr_t)gc);
  mgpuMemcpy(c, gc, sizeof(c), s);
  mgpuMemcpy(dc, gdc, sizeof(dc), s);
  mgpuStreamSynchronize(s);
  int bad = 0;
  const char *err = kilnCudaGetError();
  if (err) {
    printf("gemm: error: %s\n", err);
    bad = 1;
  } else {
    for (int i = 0; i < B * M * N; ++i)
      bad += c[i] != ref[i];
    for (int i = 0; i < 8; ++i)
      bad += dc[i] != dref[i];
    printf("gemm: ran (%d wrong)\n", bad);
  }
  kilnCudaClearError();
  mgpuMemFree(ga, s);
  mgpuMemFree(gb, s);
  mgpuMemFree(gc, s);
  mgpuMemFree(gda, s);
  mgpuMemFree(gdb, s);
  mgpuMemFree(gdc, s);
  mgpuStreamDestroy(s);
  return bad;
}

int main(void) {
  char *ptx = strdup(kPtx);
  if (!kilnCudaDriverAvailable()) {
    printf("driver: unavailable: %s\n", kilnCudaGetError());
    void *s = mgpuStreamCreate();
    void *m = mgpuMemAlloc(1024, s, false);
    void *mod = mgpuModuleLoadJIT(ptx, 2);
    void *fn = mgpuModuleGetFunction(mod, "add_one");
    mgpuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL, 0);
    kiln_cuda_gemm(0, 1, 2, 2, 2, (intptr_t)m, (intptr_t)m, (intptr_t)m);
    mgpuMemFree(m, s);
    mgpuStreamSynchronize(s);
    mgpuStreamDestroy(s);
    printf("calls without a driver: stream %s, buffer %s, module %s, "
           "function %s\n", s ? "set" : "null", m ? "set" : "null",
           mod ? "set" : "null", fn ? "set" : "null");
    printf("error kept: %s\n", kilnCudaGetError() ? "yes" : "no");
    kilnCudaClearError();
    printf("error after clear: %s\n", kilnCudaGetError() ? "set" : "none");
    printf("done\n");
    free(ptx);
    return 0;
  }
  printf("driver: available\n");
  enum { N = 1000 };
  float host[N];
  for (int i = 0; i < N; ++i)
    host[i] = (float)i;
  void *s = mgpuStreamCreate();
  void *d = mgpuMemAlloc(sizeof(host), s, false);
  mgpuMemcpy(d, host, sizeof(host), s);
  void *mod = mgpuModuleLoadJIT(ptx, 2);
  void *fn = mgpuModuleGetFunction(mod, "add_one");
  long long n = N;
  void *params[] = {&d, &n};
  mgpuLaunchKernel(fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL, 2);
  mgpuMemcpy(host, d, sizeof(host), s);
  mgpuStreamSynchronize(s);
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += host[i] != (float)i + 1.0f;
  printf("kernel: %s (%d wrong)\n", kilnCudaGetError() ? kilnCudaGetError()
                                                       : "ran", bad);
  mgpuMemFree(d, s);
  mgpuModuleUnload(mod);
  mgpuStreamDestroy(s);
  kilnCudaClearError();
  bad += checkGemm();
  kilnCudaClearError();
  char badPtx[] = ".version 8.0\n.target sm_80\nnot ptx";
  void *broken = mgpuModuleLoadJIT(badPtx, 2);
  printf("bad PTX: module %s, error: %s\n", broken ? "set" : "null",
         kilnCudaGetError() ? kilnCudaGetError() : "none");
  printf("done\n");
  free(ptx);
  return bad ? 1 : 0;
}
