//===- KilnCudaRuntime.cpp - The mgpu* functions over the CUDA driver -----===//
//
// Part of Kiln. The runtime functions that host code from `kiln-nvptx`
// calls (MLIR's gpu-to-llvm ABI: mgpuModuleLoadJIT, mgpuLaunchKernel,
// mgpuMemAlloc, ...), implemented over the CUDA driver API. The driver is
// opened with dlopen("libcuda.so.1") on first use (KILN_CUDA_DRIVER names
// another file): nothing links against it, so this library builds and
// loads on machines without a GPU or driver.
//
// Errors never abort: the first failure on a thread is kept (with the
// driver's error name and the call that failed) and every later mgpu* call
// on that thread does nothing until kilnCudaClearError(); the caller asks
// kilnCudaGetError() after running host code. Depends on nothing but
// cuda.h, libdl and the C++ standard library (no MLIR, no LLVM).
//
//===----------------------------------------------------------------------===//

#include "kiln_cuda_rt.h"
#include "BlockCache.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

/// The driver entry points Kiln uses (the _v2 names of cuda.h's macros).
struct Driver {
  bool loaded = false;
  std::string error; ///< why the driver is unavailable
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned,
                                 CUjit_option *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuCtxSynchronize)(void);
  CUcontext context = nullptr;
  int device = 0;
};

thread_local std::string threadError;
int defaultDevice = 0;

/// Opens the driver and makes the primary context of the default device
/// (once per process).
Driver &driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *path = std::getenv("KILN_CUDA_DRIVER");
    if (!path || !*path)
      path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      d.error = std::string("no CUDA driver: cannot load ") + path + ": " +
                (why ? why : "unknown error");
      return;
    }
    bool missing = false;
    std::string missingName;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (!fn && !missing) {
        missing = true;
        missingName = name;
      }
    };
    get(d.cuInit, "cuInit");
    get(d.cuDeviceGetCount, "cuDeviceGetCount");
    get(d.cuDeviceGet, "cuDeviceGet");
    get(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(d.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    get(d.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    get(d.cuModuleLoadData, "cuModuleLoadData");
    get(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
    get(d.cuModuleUnload, "cuModuleUnload");
    get(d.cuModuleGetFunction, "cuModuleGetFunction");
    get(d.cuLaunchKernel, "cuLaunchKernel");
    get(d.cuStreamCreate, "cuStreamCreate");
    get(d.cuStreamSynchronize, "cuStreamSynchronize");
    get(d.cuStreamDestroy, "cuStreamDestroy_v2");
    get(d.cuStreamWaitEvent, "cuStreamWaitEvent");
    get(d.cuEventCreate, "cuEventCreate");
    get(d.cuEventDestroy, "cuEventDestroy_v2");
    get(d.cuEventRecord, "cuEventRecord");
    get(d.cuEventSynchronize, "cuEventSynchronize");
    get(d.cuMemAlloc, "cuMemAlloc_v2");
    get(d.cuMemFree, "cuMemFree_v2");
    get(d.cuMemcpyAsync, "cuMemcpyAsync");
    get(d.cuMemsetD32Async, "cuMemsetD32Async");
    get(d.cuGetErrorName, "cuGetErrorName");
    get(d.cuCtxSynchronize, "cuCtxSynchronize");
    if (missing) {
      d.error = std::string("the CUDA driver ") + path + " has no " +
                missingName + " (too old?)";
      return;
    }
    auto fail = [&](const char *what, CUresult r) {
      const char *name = nullptr;
      d.cuGetErrorName(r, &name);
      d.error = std::string("CUDA driver: ") + what + " failed: " +
                (name ? name : "unknown error");
    };
    if (CUresult r = d.cuInit(0)) {
      fail("cuInit", r);
      return;
    }
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count)) {
      fail("cuDeviceGetCount", r);
      return;
    }
    if (defaultDevice < 0 || defaultDevice >= count) {
      d.error = "no CUDA device " + std::to_string(defaultDevice) + " (" +
                std::to_string(count) + " devices)";
      return;
    }
    CUdevice dev;
    if (CUresult r = d.cuDeviceGet(&dev, defaultDevice)) {
      fail("cuDeviceGet", r);
      return;
    }
    if (CUresult r = d.cuDevicePrimaryCtxRetain(&d.context, dev)) {
      fail("cuDevicePrimaryCtxRetain", r);
      return;
    }
    d.device = defaultDevice;
    d.loaded = true;
  });
  return d;
}

/// Whether mgpu* calls may go on: the driver is there and this thread has
/// no pending error. Sets the thread's error otherwise.
bool ready() {
  if (!threadError.empty())
    return false;
  Driver &d = driver();
  if (!d.loaded) {
    threadError = d.error;
    return false;
  }
  return true;
}

/// Records a failed driver call on this thread; returns whether `r` is ok.
bool check(CUresult r, const char *call, const char *detail = nullptr) {
  if (r == CUDA_SUCCESS)
    return true;
  if (threadError.empty()) {
    const char *name = nullptr;
    driver().cuGetErrorName(r, &name);
    threadError = std::string(call) + " failed: " +
                  (name ? name : "unknown error");
    if (detail && *detail)
      threadError += std::string(": ") + detail;
  }
  return false;
}

/// Makes the primary context current for the scope of a call.
struct ScopedContext {
  bool pushed = false;
  ScopedContext() {
    Driver &d = driver();
    pushed = d.loaded && d.cuCtxPushCurrent(d.context) == CUDA_SUCCESS;
  }
  ~ScopedContext() {
    if (pushed) {
      CUcontext ignored;
      driver().cuCtxPopCurrent(&ignored);
    }
  }
};

/// The result of the last raw cuMemAlloc on this thread (for the error).
thread_local CUresult lastAllocResult = CUDA_SUCCESS;

/// Whether freed device memory is kept for reuse (KILN_CUDA_CACHE=0: every
/// mgpuMemAlloc / mgpuMemFree is cuMemAlloc / cuMemFree, e.g. for
/// compute-sanitizer's leak and race checks).
bool cachingEnabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("KILN_CUDA_CACHE");
    return !(v && std::string(v) == "0");
  }();
  return enabled;
}

void *rawAlloc(size_t bytes) {
  CUdeviceptr ptr = 0;
  lastAllocResult = driver().cuMemAlloc(&ptr, bytes);
  return lastAllocResult == CUDA_SUCCESS ? reinterpret_cast<void *>(ptr)
                                         : nullptr;
}

void rawFree(void *ptr) {
  driver().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
}

kiln::cuda::BlockCache &blockCache() {
  static auto *cache = new kiln::cuda::BlockCache(rawAlloc, rawFree);
  return *cache;
}

/// cuBLAS, opened with dlopen on the first product (KILN_CUBLAS names the
/// file; else libcublas.so.13, .12, then libcublas.so): packages without
/// products never need it. The prototypes are cublas_v2.h's (status int,
/// operations 0 = N), declared here so that this file needs only cuda.h.
struct Cublas {
  bool loaded = false;
  std::string error;
  void *handle = nullptr; ///< one cublasHandle_t, on `stream`
  CUstream stream = nullptr;
  std::mutex mutex; ///< a handle is not safe across threads
  int (*create)(void **);
  int (*setStream)(void *, CUstream);
  int (*sgemm)(void *, int, int, int, int, int, const float *, const float *,
               int, const float *, int, const float *, float *, int);
  int (*dgemm)(void *, int, int, int, int, int, const double *,
               const double *, int, const double *, int, const double *,
               double *, int);
  int (*sgemmBatched)(void *, int, int, int, int, int, const float *,
                      const float *, int, long long, const float *, int,
                      long long, const float *, float *, int, long long, int);
  int (*dgemmBatched)(void *, int, int, int, int, int, const double *,
                      const double *, int, long long, const double *, int,
                      long long, const double *, double *, int, long long,
                      int);
};

Cublas &cublas() {
  static Cublas c;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *env = std::getenv("KILN_CUBLAS");
    const char *names[] = {"libcublas.so.13", "libcublas.so.12",
                           "libcublas.so"};
    void *lib = nullptr;
    std::string tried;
    if (env && *env) {
      lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
      tried = env;
    } else {
      for (const char *n : names) {
        if ((lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)))
          break;
        tried += std::string(tried.empty() ? "" : ", ") + n;
      }
    }
    if (!lib) {
      c.error = "cuBLAS is not available (a matmul of this package calls it; "
                "tried " + tried + "; compile with matmul=kernel to do without)";
      return;
    }
    bool missing = false;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (!fn && !missing) {
        missing = true;
        c.error = std::string("cuBLAS has no ") + name;
      }
    };
    get(c.create, "cublasCreate_v2");
    get(c.setStream, "cublasSetStream_v2");
    get(c.sgemm, "cublasSgemm_v2");
    get(c.dgemm, "cublasDgemm_v2");
    get(c.sgemmBatched, "cublasSgemmStridedBatched");
    get(c.dgemmBatched, "cublasDgemmStridedBatched");
    if (missing)
      return;
    ScopedContext scope;
    if (int st = c.create(&c.handle)) {
      c.error = "cublasCreate failed (status " + std::to_string(st) + ")";
      return;
    }
    if (driver().cuStreamCreate(&c.stream, CU_STREAM_NON_BLOCKING) !=
            CUDA_SUCCESS ||
        c.setStream(c.handle, c.stream)) {
      c.error = "cuBLAS: cannot create its stream";
      return;
    }
    c.loaded = true;
  });
  return c;
}

/// Row-major C += A B as column-major C^T += B^T A^T: one cuBLAS gemm (or
/// strided-batched gemm) with the operands swapped, alpha = beta = 1.
template <typename T, typename Gemm, typename Batched>
int runGemm(Gemm gemm, Batched batched, void *handle, int64_t batch,
            int64_t m, int64_t n, int64_t k, intptr_t a, intptr_t b,
            intptr_t c) {
  const T one = 1;
  auto *A = reinterpret_cast<const T *>(a);
  auto *Bm = reinterpret_cast<const T *>(b);
  auto *C = reinterpret_cast<T *>(c);
  int M = int(m), N = int(n), K = int(k);
  if (batch == 1)
    return gemm(handle, 0, 0, N, M, K, &one, Bm, N, A, K, &one, C, N);
  return batched(handle, 0, 0, N, M, K, &one, Bm, N, k * n, A, K, m * k, &one,
                 C, N, m * n, int(batch));
}

} // namespace

extern "C" {

/// C += A B for row-major A [batch, m, k], B [batch, k, n], C [batch, m, n]
/// (dtype 0: f32, 1: f64), the call kiln-nvptx's matmulsToCublas emits.
/// Row-major C = A B is column-major C^T = B^T A^T: one cuBLAS gemm with
/// the operands swapped, no transposes. Ordered after the host code's
/// earlier GPU work (kiln-nvptx's host code waits for its stream before a
/// call), and finished before it returns.
void kiln_cuda_gemm(int32_t dtype, int64_t batch, int64_t m, int64_t n,
                    int64_t k, intptr_t a, intptr_t b, intptr_t c) {
  if (!ready() || batch <= 0 || m <= 0 || n <= 0 || k <= 0)
    return;
  const int64_t limit = 0x7fffffff;
  if (m > limit || n > limit || k > limit || batch > limit) {
    threadError = "kiln_cuda_gemm: a matmul dimension exceeds cuBLAS's "
                  "32-bit sizes (m=" + std::to_string(m) + ", n=" +
                  std::to_string(n) + ", k=" + std::to_string(k) + ")";
    return;
  }
  Cublas &cb = cublas();
  if (!cb.loaded) {
    threadError = cb.error;
    return;
  }
  std::lock_guard<std::mutex> lock(cb.mutex);
  ScopedContext scope;
  int st = 0;
  if (dtype == 0) {
    st = runGemm<float>(cb.sgemm, cb.sgemmBatched, cb.handle, batch, m, n, k,
                        a, b, c);
  } else if (dtype == 1) {
    st = runGemm<double>(cb.dgemm, cb.dgemmBatched, cb.handle, batch, m, n,
                         k, a, b, c);
  } else {
    threadError = "kiln_cuda_gemm: unknown dtype " + std::to_string(dtype);
    return;
  }
  if (st) {
    threadError = "cuBLAS gemm failed (status " + std::to_string(st) +
                  ", m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                  ", k=" + std::to_string(k) + ")";
    return;
  }
  check(driver().cuStreamSynchronize(cb.stream), "cuStreamSynchronize",
        "after cuBLAS gemm");
}

const char *kilnCudaGetError(void) {
  return threadError.empty() ? nullptr : threadError.c_str();
}

void kilnCudaClearError(void) { threadError.clear(); }

int kilnCudaDriverAvailable(void) {
  Driver &d = driver();
  if (!d.loaded && threadError.empty())
    threadError = d.error;
  return d.loaded ? 1 : 0;
}

void kilnCudaSynchronize(void) {
  if (!ready())
    return;
  ScopedContext scope;
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  if (!ready())
    return nullptr;
  ScopedContext scope;
  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  if (!ready())
    return nullptr;
  ScopedContext scope;
  CUmodule module = nullptr;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  check(driver().cuModuleLoadDataEx(&module, data, 3, options, values),
        "cuModuleLoadDataEx (PTX JIT)", log);
  return module;
}

void mgpuModuleUnload(void *moduleArg) {
  CUmodule module = static_cast<CUmodule>(moduleArg);
  if (!module || !driver().loaded)
    return;
  ScopedContext scope;
  driver().cuModuleUnload(module);
}

void *mgpuModuleGetFunction(void *moduleArg, const char *name) {
  CUmodule module = static_cast<CUmodule>(moduleArg);
  if (!ready() || !module)
    return nullptr;
  ScopedContext scope;
  CUfunction fn = nullptr;
  check(driver().cuModuleGetFunction(&fn, module, name),
        "cuModuleGetFunction", name);
  return fn;
}

void mgpuLaunchKernel(void *functionArg, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *streamArg,
                      void **params, void **extra, size_t /*paramsCount*/) {
  CUfunction function = static_cast<CUfunction>(functionArg);
  CUstream stream = static_cast<CUstream>(streamArg);
  if (!ready() || !function)
    return;
  ScopedContext scope;
  check(driver().cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                                blockZ, smem, stream, params, extra),
        "cuLaunchKernel");
}

void *mgpuStreamCreate(void) {
  if (!ready())
    return nullptr;
  ScopedContext scope;
  CUstream stream = nullptr;
  check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
        "cuStreamCreate");
  return stream;
}

void mgpuStreamDestroy(void *streamArg) {
  CUstream stream = static_cast<CUstream>(streamArg);
  if (!stream || !driver().loaded)
    return;
  ScopedContext scope;
  driver().cuStreamDestroy(stream);
}

void mgpuStreamSynchronize(void *streamArg) {
  CUstream stream = static_cast<CUstream>(streamArg);
  if (!ready() || !stream)
    return;
  ScopedContext scope;
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *streamArg, void *eventArg) {
  CUstream stream = static_cast<CUstream>(streamArg);
  CUevent event = static_cast<CUevent>(eventArg);
  if (!ready() || !stream || !event)
    return;
  ScopedContext scope;
  check(driver().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

void *mgpuEventCreate(void) {
  if (!ready())
    return nullptr;
  ScopedContext scope;
  CUevent event = nullptr;
  check(driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *eventArg) {
  CUevent event = static_cast<CUevent>(eventArg);
  if (!event || !driver().loaded)
    return;
  ScopedContext scope;
  driver().cuEventDestroy(event);
}

void mgpuEventSynchronize(void *eventArg) {
  CUevent event = static_cast<CUevent>(eventArg);
  if (!ready() || !event)
    return;
  ScopedContext scope;
  check(driver().cuEventSynchronize(event), "cuEventSynchronize");
}

void mgpuEventRecord(void *eventArg, void *streamArg) {
  CUstream stream = static_cast<CUstream>(streamArg);
  CUevent event = static_cast<CUevent>(eventArg);
  if (!ready() || !event)
    return;
  ScopedContext scope;
  check(driver().cuEventRecord(event, stream), "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                   bool isHostShared) {
  if (!ready())
    return nullptr;
  if (isHostShared) {
    threadError = "mgpuMemAlloc: host-shared (managed) memory is not "
                  "supported by Kiln's CUDA runtime";
    return nullptr;
  }
  if (sizeBytes == 0)
    return nullptr;
  ScopedContext scope;
  void *ptr = cachingEnabled() ? blockCache().allocate(sizeBytes)
                               : rawAlloc(sizeBytes);
  if (!ptr) {
    std::string detail = std::to_string(sizeBytes) + " bytes";
    check(lastAllocResult == CUDA_SUCCESS ? CUDA_ERROR_OUT_OF_MEMORY
                                          : lastAllocResult,
          "cuMemAlloc", detail.c_str());
  }
  return ptr;
}

void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr || !driver().loaded)
    return;
  if (cachingEnabled() && blockCache().release(ptr))
    return;
  ScopedContext scope;
  rawFree(ptr);
}

void kilnCudaEmptyCache(void) {
  if (!driver().loaded)
    return;
  ScopedContext scope;
  blockCache().empty();
}

void kilnCudaGetMemoryStats(KilnCudaMemoryStats *out) {
  if (!out)
    return;
  kiln::cuda::CacheStats s = blockCache().statistics();
  out->allocations = s.allocations;
  out->cache_hits = s.hits;
  out->device_allocations = s.rawAllocs;
  out->device_frees = s.rawFrees;
  out->bytes_in_use = s.bytesInUse;
  out->bytes_cached = s.bytesCached;
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *streamArg) {
  CUstream stream = static_cast<CUstream>(streamArg);
  if (!ready() || sizeBytes == 0)
    return;
  ScopedContext scope;
  check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                               reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                               stream),
        "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  void *streamArg) {
  CUstream stream = static_cast<CUstream>(streamArg);
  if (!ready() || count == 0)
    return;
  ScopedContext scope;
  check(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                  count, stream),
        "cuMemsetD32Async");
}

} // extern "C"
