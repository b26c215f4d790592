/*===- kiln_cuda_rt.h - Kiln's CUDA runtime (the mgpu* functions) ---------===*\
|*                                                                            *|
|* Part of Kiln. libkiln_cuda_rt implements the runtime functions that host  *|
|* code from the kiln-nvptx pipeline calls (MLIR's gpu-to-llvm ABI) over the  *|
|* CUDA driver, opened with dlopen("libcuda.so.1") on first use              *|
|* (KILN_CUDA_DRIVER=<path> names another file). It needs no GPU, driver,    *|
|* MLIR or LLVM to build and load. See docs/gpu.md.                          *|
|*                                                                            *|
|* Errors do not abort: the first failure on a thread (no driver, no device, *|
|* a failed allocation, a PTX JIT error with the driver's log, a launch      *|
|* failure) is kept, and every later mgpu* call on that thread does nothing  *|
|* (returns null) until kilnCudaClearError().                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_CUDA_RT_H
#define KILN_CUDA_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The calling thread's pending error (NUL-terminated), or NULL.
const char *kilnCudaGetError(void);
/// Forgets the calling thread's error: mgpu* calls work again.
void kilnCudaClearError(void);
/// 1 when the driver was opened and the default device's context made, else
/// 0 (and the reason becomes the calling thread's error).
int kilnCudaDriverAvailable(void);
/// Waits for all work on the default device (cuCtxSynchronize); an error
/// becomes the thread's.
void kilnCudaSynchronize(void);

/// The caching allocator behind mgpuMemAlloc / mgpuMemFree (BlockCache.h):
/// freed device memory is kept per size class and reused, as PyTorch's
/// caching allocator (KILN_CUDA_CACHE=0 turns it off).
typedef struct KilnCudaMemoryStats {
  uint64_t allocations;        /* mgpuMemAlloc calls served */
  uint64_t cache_hits;         /* ... from cached blocks */
  uint64_t device_allocations; /* cuMemAlloc calls */
  uint64_t device_frees;       /* cuMemFree calls of cached blocks */
  uint64_t bytes_in_use;       /* handed out, not freed (class sizes) */
  uint64_t bytes_cached;       /* kept for reuse */
} KilnCudaMemoryStats;
void kilnCudaGetMemoryStats(KilnCudaMemoryStats *out);
/// Frees every cached block (torch.cuda.empty_cache).
void kilnCudaEmptyCache(void);

/* The gpu-to-llvm ABI (pointers are CUmodule, CUfunction, CUstream, CUevent
   and device pointers). */
/// C += A B on the device (row-major A [batch,m,k], B [batch,k,n], C
/// [batch,m,n]; dtype 0 f32, 1 f64) through cuBLAS (dlopen'ed on first use:
/// KILN_CUBLAS, else libcublas.so.13/.12/.so): what kiln-nvptx's host code
/// calls for linalg.matmul / batch_matmul (matmul=cublas). Synchronous.
void kiln_cuda_gemm(int32_t dtype, int64_t batch, int64_t m, int64_t n,
                    int64_t k, intptr_t a, intptr_t b, intptr_t c);

void mgpuSetDefaultDevice(int32_t device);
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CUDA_RT_H */
