//===- RuntimeErrors.cpp - Per-call state of compiled CPU code -------------===//
//
// Part of Kiln. See kiln/Backend/CPU/RuntimeErrors.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/RuntimeErrors.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/DynamicLibrary.h"

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <omp-tools.h>
#include <unistd.h>

using namespace mlir;
using namespace kiln::cpu;

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
  } else if (endpoint == ompt_scope_end) {
    current = taskData ? static_cast<CallContext *>(taskData->ptr) : nullptr;
  }
}

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
  return 1; // keep the tool (its callbacks are harmless when inactive)
}
void toolFinalize(ompt_data_t *) { omptActive = false; }

ompt_start_tool_result_t toolResult = {&toolInitialize, &toolFinalize, {0}};

/// Whether prepareOpenMPTool set OMP_TOOL_LIBRARIES (unset once libomp
/// has read it).
bool setToolLibraries = false;
} // namespace

/// libomp calls this when it initializes (the symbol is exported from the
/// executables and libKilnCAPI.so that contain the CPU backend; where it is
/// not visible to libomp, OMP_TOOL_LIBRARIES names the library holding it).
extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int, const char *) {
  return &toolResult;
}

void kiln::cpu::prepareOpenMPTool() {
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

void kiln::cpu::initializeOpenMP() {
  // Any entry point of libomp initializes it (and OMPT with it).
  using MaxThreadsFn = int (*)();
  if (auto *maxThreads = reinterpret_cast<MaxThreadsFn>(
          llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
              "omp_get_max_threads")))
    (void)maxThreads();
  if (setToolLibraries) {
    unsetenv("OMP_TOOL_LIBRARIES");
    setToolLibraries = false;
  }
}

bool kiln::cpu::callsRunConcurrently() { return omptActive; }

CallContext *kiln::cpu::currentCall() {
  if (current)
    return current;
  return serialCall.load(std::memory_order_acquire);
}

CallScope::CallScope(CallContext &context) : previous(current) {
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
  static_assert(kiln::kRuntimeErrorValues == 8, "update the signature");
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

void kiln::cpu::registerRuntimeErrorSymbol(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner(kRuntimeErrorFn)] = {
        llvm::orc::ExecutorAddr::fromPtr(&kiln_cpu_runtime_error),
        llvm::JITSymbolFlags::Exported};
    return map;
  });
}

std::vector<std::string> kiln::cpu::runtimeErrorMessages(ModuleOp module) {
  std::vector<std::string> out;
  if (auto a = module->getAttrOfType<ArrayAttr>(kiln::kRuntimeErrorsAttr))
    for (Attribute m : a)
      out.push_back(cast<StringAttr>(m).str());
  return out;
}

std::optional<std::string>
kiln::cpu::takeRuntimeError(CallContext &context,
                            llvm::ArrayRef<std::string> messages) {
  int64_t id;
  int64_t values[kiln::kRuntimeErrorValues];
  {
    std::lock_guard<std::mutex> guard(context.mutex);
    if (!context.errorSet)
      return std::nullopt;
    context.errorSet = false;
    id = context.errorId;
    std::memcpy(values, context.errorValues, sizeof(values));
  }
  if (id < 0 || id >= (int64_t)messages.size())
    return "run-time error #" + std::to_string(id) + " (no message)";
  return kiln::formatRuntimeError(messages[id], values);
}
