//===- CallContext.cpp - Per-call state of compiled code ------------------===//
//
// Part of Kiln's compiled-code runtime. See kiln/rt/CallContext.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/rt/CallContext.h"

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <unistd.h>

// OMPT's C interface (OpenMP 5.0, section 4): the compiler's <omp-tools.h>
// where it has one (clang), else the few declarations used here, from the
// specification (GCC ships no omp-tools.h; libomp's ABI is the standard's).
#if __has_include(<omp-tools.h>)
#include <omp-tools.h>
#else
extern "C" {
typedef union ompt_data_t {
  uint64_t value;
  void *ptr;
} ompt_data_t;
typedef struct ompt_frame_t ompt_frame_t;
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *);
typedef void (*ompt_callback_t)(void);
typedef enum ompt_callbacks_t {
  ompt_callback_parallel_begin = 3,
  ompt_callback_parallel_end = 4,
  ompt_callback_implicit_task = 7,
  ompt_callback_sync_region = 23,
} ompt_callbacks_t;
typedef enum ompt_sync_region_t {
  ompt_sync_region_barrier_implicit = 2,
  ompt_sync_region_barrier_implicit_parallel = 9,
} ompt_sync_region_t;
typedef enum ompt_set_result_t {
  ompt_set_error = 0,
  ompt_set_never = 1,
  ompt_set_impossible = 2,
  ompt_set_sometimes = 3,
  ompt_set_sometimes_paired = 4,
  ompt_set_always = 5
} ompt_set_result_t;
typedef ompt_set_result_t (*ompt_set_callback_t)(ompt_callbacks_t,
                                                 ompt_callback_t);
typedef enum ompt_scope_endpoint_t {
  ompt_scope_begin = 1,
  ompt_scope_end = 2,
  ompt_scope_beginend = 3
} ompt_scope_endpoint_t;
enum { ompt_task_initial = 0x00000001 };
typedef int (*ompt_initialize_t)(ompt_function_lookup_t, int, ompt_data_t *);
typedef void (*ompt_finalize_t)(ompt_data_t *);
typedef struct ompt_start_tool_result_t {
  ompt_initialize_t initialize;
  ompt_finalize_t finalize;
  ompt_data_t tool_data;
} ompt_start_tool_result_t;
}
#endif

// ThreadSanitizer (KILN_SANITIZE=thread): libomp is not instrumented, so
// TSan does not see that a parallel region's fork orders what the
// encountering thread did before it (constructing the call's CallContext on
// its stack) before the workers' part. Without that edge TSan reported a
// worker's kiln_cpu_runtime_error (and kiln_rt_malloc's tracking) locking
// the CallContext's mutex as a data race with the CallContext's
// construction (test/CAPI/threads.test, kiln-run in Runtime/cpu_backend.py,
// under the TSan build). The OMPT callbacks below add it, keyed by the
// CallContext that the region hands to its workers (libomp gives
// parallel_begin a stack copy of the region's parallel_data, not the team's
// that the workers see, so that address cannot pair them).
// The join needs its edge too: a worker's writes into the call's buffers
// (the memset/memcpy calls of oneDNN's kernels or compiled code, which TSan
// intercepts) happen before the encountering thread, after the region,
// reads or frees them. Without it TSan reported a oneDNN worker's memset
// into a conv's result as a race with the calling thread's free of it after
// the call (Execution/CPU/conv_onednn_*.py, kiln-run --cpu-threads=2, under
// the TSan build; test/Sanitizer/omp-join.py). Each thread releases the call when it
// enters the region's closing barrier (sync_region begin of the implicit
// parallel barrier, before it signals its arrival), the encountering thread
// acquires it in parallel_end (after the barrier), as LLVM's Archer does.
// (A worker's implicit-task end comes too late for this: libomp reports it
// from the next fork barrier, possibly after parallel_end.) TSan builds
// only: these two callbacks are not registered elsewhere.
// Only the edges libomp provides are added; Kiln's accesses are still checked.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_RT_TSAN 1
#endif
#endif
#ifdef KILN_RT_TSAN
#include <sanitizer/tsan_interface.h>
static void tsanRelease(void *call) { __tsan_release(call); }
static void tsanAcquire(void *call) { __tsan_acquire(call); }
#else
static void tsanRelease(void *) {}
static void tsanAcquire(void *) {}
#endif

using namespace kiln::rt;

namespace {
/// The call this thread works for: set by CallScope on the calling thread,
/// by the OMPT callbacks below on OpenMP workers.
thread_local CallContext *current = nullptr;
/// Whether libomp started the tool (workers learn their call).
std::atomic<bool> omptActive{false};
/// Without the tool: calls run one at a time, and the running one is here
/// for the workers.
std::mutex serialMutex;
std::atomic<CallContext *> serialCall{nullptr};

/// The encountering thread passes its call to the region...
void onParallelBegin(ompt_data_t *, const ompt_frame_t *,
                     ompt_data_t *parallelData, unsigned, int, const void *) {
  if (parallelData)
    parallelData->ptr = current;
  if (current)
    tsanRelease(current); // TSan builds: the fork
}
/// ... and each implicit task of the region (the encountering thread's
/// too) works for it until the task ends; task_data keeps what the thread
/// worked for before.
void onImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t *parallelData,
                    ompt_data_t *taskData, unsigned, unsigned, int flags) {
  if (flags & ompt_task_initial)
    return;
  if (endpoint == ompt_scope_begin) {
    if (taskData)
      taskData->ptr = current;
    current = parallelData ? static_cast<CallContext *>(parallelData->ptr)
                           : nullptr;
    if (current)
      tsanAcquire(current); // TSan builds: the fork
  } else if (endpoint == ompt_scope_end) {
    current = taskData ? static_cast<CallContext *>(taskData->ptr) : nullptr;
  }
}

#ifdef KILN_RT_TSAN
/// TSan builds: the join. Every thread of the region (the encountering one
/// too) releases the call as it enters the closing barrier...
void onSyncRegion(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                  ompt_data_t *parallelData, ompt_data_t *, const void *) {
  if (endpoint != ompt_scope_begin ||
      (kind != ompt_sync_region_barrier_implicit_parallel &&
       kind != ompt_sync_region_barrier_implicit))
    return;
  if (auto *call = parallelData
                       ? static_cast<CallContext *>(parallelData->ptr)
                       : current)
    tsanRelease(call);
}
/// ... and the encountering thread acquires it once the region has ended.
void onParallelEnd(ompt_data_t *parallelData, ompt_data_t *, int,
                   const void *) {
  if (auto *call = parallelData
                       ? static_cast<CallContext *>(parallelData->ptr)
                       : current)
    tsanAcquire(call);
}
#endif

int toolInitialize(ompt_function_lookup_t lookup, int, ompt_data_t *) {
  auto setCallback =
      reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!setCallback)
    return 0;
  auto ok = [](ompt_set_result_t r) { return r == ompt_set_always; };
  bool parallel = ok(setCallback(
      ompt_callback_parallel_begin,
      reinterpret_cast<ompt_callback_t>(&onParallelBegin)));
  bool tasks = ok(setCallback(
      ompt_callback_implicit_task,
      reinterpret_cast<ompt_callback_t>(&onImplicitTask)));
  omptActive = parallel && tasks;
#ifdef KILN_RT_TSAN
  setCallback(ompt_callback_sync_region,
              reinterpret_cast<ompt_callback_t>(&onSyncRegion));
  setCallback(ompt_callback_parallel_end,
              reinterpret_cast<ompt_callback_t>(&onParallelEnd));
#endif
  return 1; // keep the tool (its callbacks are harmless when inactive)
}
void toolFinalize(ompt_data_t *) { omptActive = false; }

ompt_start_tool_result_t toolResult = {&toolInitialize, &toolFinalize, {0}};

/// Whether prepareOpenMPTool set OMP_TOOL_LIBRARIES (unset once libomp
/// has read it).
bool setToolLibraries = false;
} // namespace

/// libomp calls this when it initializes (the symbol is exported from the
/// executables and libraries that contain the runtime; where it is
/// not visible to libomp, OMP_TOOL_LIBRARIES names the library holding it).
extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int, const char *) {
  return &toolResult;
}

void kiln::rt::prepareOpenMPTool() {
  // A process that loaded Kiln privately (e.g. Python's ctypes loads
  // libKilnCAPI.so with RTLD_LOCAL) does not show ompt_start_tool to libomp:
  // name the library for the time libomp initializes, unless the user chose
  // tools.
  if (std::getenv("OMP_TOOL_LIBRARIES"))
    return;
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&ompt_start_tool), &info) ||
      !info.dli_fname || !*info.dli_fname)
    return;
  // The executable itself cannot be dlopened (and, linked with
  // --export-dynamic-symbol, needs no help).
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    char resolved[PATH_MAX];
    if (realpath(info.dli_fname, resolved) && !std::strcmp(resolved, exe))
      return;
  }
  setenv("OMP_TOOL_LIBRARIES", info.dli_fname, /*overwrite=*/1);
  setToolLibraries = true;
}

void kiln::rt::initializeOpenMP() {
  // Any entry point of libomp initializes it (and OMPT with it).
  using MaxThreadsFn = int (*)();
  if (auto *maxThreads = reinterpret_cast<MaxThreadsFn>(
          dlsym(RTLD_DEFAULT, "omp_get_max_threads")))
    (void)maxThreads();
  if (setToolLibraries) {
    unsetenv("OMP_TOOL_LIBRARIES");
    setToolLibraries = false;
  }
}

bool kiln::rt::callsRunConcurrently() { return omptActive; }

CallContext *kiln::rt::currentCall() {
  if (current)
    return current;
  return serialCall.load(std::memory_order_acquire);
}

/// The libomp blocktime (ms) each thread that calls compiled code sets for
/// the parallel regions it forks (setOpenMPBlocktime; -1: leave libomp's).
static std::atomic<int> blocktimeMs{-1};
using SetBlocktimeFn = void (*)(int);
static std::atomic<SetBlocktimeFn> setBlocktime{nullptr};
/// The policy this thread last applied (INT_MIN: none yet).
static thread_local int appliedBlocktime = INT_MIN;

void kiln::rt::setOpenMPBlocktime(int ms) {
  if (ms >= 0 && !setBlocktime.load(std::memory_order_acquire))
    setBlocktime.store(reinterpret_cast<SetBlocktimeFn>(
                           dlsym(RTLD_DEFAULT, "kmp_set_blocktime")),
                       std::memory_order_release);
  blocktimeMs.store(ms, std::memory_order_release);
}

int kiln::rt::openMPBlocktime() {
  return blocktimeMs.load(std::memory_order_acquire);
}

CallScope::CallScope(CallContext &context) : previous(current) {
  // libomp's blocktime is a per-thread setting of the regions the thread
  // forks: applied on the first call of each calling thread (and again if
  // the policy changed), a few stores in libomp.
  int bt = blocktimeMs.load(std::memory_order_acquire);
  if (bt >= 0 && bt != appliedBlocktime)
    if (SetBlocktimeFn set = setBlocktime.load(std::memory_order_acquire)) {
      set(bt);
      appliedBlocktime = bt;
    }
  if (!omptActive) {
    serial = std::unique_lock<std::mutex>(serialMutex);
    serialCall.store(&context, std::memory_order_release);
  }
  current = &context;
}

CallScope::~CallScope() {
  current = previous;
  if (serial.owns_lock())
    serialCall.store(nullptr, std::memory_order_release);
}

extern "C" void kiln_cpu_runtime_error(int64_t id, int64_t v0, int64_t v1,
                                       int64_t v2, int64_t v3, int64_t v4,
                                       int64_t v5, int64_t v6, int64_t v7) {
  static_assert(kCallErrorValues == 8, "update the signature");
  CallContext *call = currentCall();
  if (!call)
    return; // not inside a call of the backend (cannot happen)
  std::lock_guard<std::mutex> guard(call->mutex);
  if (!call->errorSet) {
    call->errorSet = true;
    call->errorId = id;
    int64_t values[] = {v0, v1, v2, v3, v4, v5, v6, v7};
    std::memcpy(call->errorValues, values, sizeof(values));
  }
}

bool kiln::rt::takeErrorReport(CallContext &context, int64_t &id,
                               int64_t (&values)[kCallErrorValues]) {
  std::lock_guard<std::mutex> guard(context.mutex);
  if (!context.errorSet)
    return false;
  context.errorSet = false;
  id = context.errorId;
  std::memcpy(values, context.errorValues, sizeof(values));
  return true;
}

std::string kiln::rt::formatRuntimeError(const std::string &tmpl,
                                        const int64_t *values, size_t count) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    // {k:bytes}: value k as a byte count, "N bytes (X.Y GiB)".
    if (tmpl[i] == '{' && i + 9 <= tmpl.size() && tmpl.compare(i + 2, 7, ":bytes}") == 0 &&
        tmpl[i + 1] >= '0' && tmpl[i + 1] <= '9' &&
        (size_t)(tmpl[i + 1] - '0') < count) {
      out += byteCountString((uint64_t)values[tmpl[i + 1] - '0']);
      i += 8;
      continue;
    }
    if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}' &&
        tmpl[i + 1] >= '0' && tmpl[i + 1] <= '9' &&
        (size_t)(tmpl[i + 1] - '0') < count) {
      out += std::to_string(values[tmpl[i + 1] - '0']);
      i += 2;
      continue;
    }
    out += tmpl[i];
  }
  return out;
}

bool kiln::rt::takeFormattedError(CallContext &context,
                                  const std::string *messages, size_t count,
                                  std::string &message) {
  int64_t id;
  int64_t values[kCallErrorValues];
  if (!takeErrorReport(context, id, values))
    return false;
  if (id < 0 || (uint64_t)id >= count)
    message = "run-time error #" + std::to_string(id) + " (no message)";
  else
    message = formatRuntimeError(messages[id], values, kCallErrorValues);
  return true;
}

std::string kiln::rt::byteCountString(uint64_t bytes) {
  std::string s = std::to_string(bytes) + " bytes";
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  if (unit >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), " (%.1f %s)", v, units[unit]);
    s += buf;
  }
  return s;
}
