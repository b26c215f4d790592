//===- CallContext.h - Per-call state of compiled code ----------*- C++ -*-===//
//
// Part of Kiln's compiled-code runtime (runtime/): what compiled Kiln code
// needs from the process it runs in, in plain C++17 without LLVM or MLIR, so
// that both the JIT CPU backend (lib/Backend/CPU) and a standalone runtime
// library built without Kiln's compiler use the same code.
//
// Each call of compiled code has a CallContext, which holds the first
// run-time error the code reports (kiln_cpu_runtime_error, see
// kiln/Conversion/KTToLinalg/RuntimeChecks.h for the contract) and the
// blocks it allocates (BufferPool.h). A CallScope makes a context current on
// the calling thread and on the OpenMP workers that run the call's parallel
// regions, so calls on different threads run at the same time and each one
// sees only its own reports.
//
// The workers learn which call they work for through OMPT, OpenMP's tool
// interface: the runtime registers itself as an OMPT tool of libomp (it
// defines `ompt_start_tool`), and passes the current call from the thread
// that starts a parallel region to the region's implicit tasks. When libomp
// does not start the tool (e.g. OMP_TOOL=disabled, or another OMPT tool named
// by OMP_TOOL_LIBRARIES), calls of compiled code in the process run one at a
// time (callsRunConcurrently() says which).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RT_CALLCONTEXT_H
#define KILN_RT_CALLCONTEXT_H

#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

namespace kiln::rt {

/// How many values (after the id) kiln_cpu_runtime_error takes; equal to
/// kiln::kRuntimeErrorValues of the lowering (checked where both are seen).
inline constexpr unsigned kCallErrorValues = 8;

/// The state of one call of compiled code. Reports and allocations may come
/// from any thread working for the call (the caller, OpenMP workers).
struct CallContext {
  std::mutex mutex;
  /// The first run-time error report of the call.
  bool errorSet = false;
  int64_t errorId = 0;
  int64_t errorValues[kCallErrorValues] = {};
  /// Set by invokeCompiled (BufferPool.h) while the code runs.
  bool active = false;
  std::thread::id caller;
  std::jmp_buf *exit = nullptr;
  /// Blocks the code allocated and has not freed.
  std::unordered_set<void *> live;
  size_t failedBytes = 0;
};

/// While alive, `context` is the current call of this thread and of the
/// OpenMP workers of the parallel regions this thread starts. Without OMPT
/// (see above) it also holds the process-wide lock that makes calls run one
/// at a time.
class CallScope {
public:
  explicit CallScope(CallContext &context);
  ~CallScope();
  CallScope(const CallScope &) = delete;
  CallScope &operator=(const CallScope &) = delete;

private:
  CallContext *previous;
  std::unique_lock<std::mutex> serial;
};

/// The call the calling thread works for (null outside calls).
CallContext *currentCall();

/// Whether calls of compiled code on different threads run at the same time
/// (libomp started the OMPT tool). Meaningful once libomp is loaded.
bool callsRunConcurrently();

/// Makes libomp start the OMPT tool when it initializes (call right before
/// loading libomp), then initializes libomp (found among the process's
/// loaded libraries).
void prepareOpenMPTool();
void initializeOpenMP();

/// How long (ms) libomp's idle workers spin after a parallel region forked
/// by a thread that calls compiled code, before they sleep: each calling
/// thread applies it (libomp's per-thread `kmp_set_blocktime`) on its next
/// call (CallScope). -1 (the default): leave libomp's setting alone. Call
/// once libomp is loaded.
void setOpenMPBlocktime(int ms);
int openMPBlocktime();

/// The first report of the call, if any (its id and values), and forgets
/// it. Formatting the message is the caller's (it knows the templates).
bool takeErrorReport(CallContext &context, int64_t &id,
                     int64_t (&values)[kCallErrorValues]);

/// The message of template `tmpl` (one of a compiled module's run-time
/// error templates: the `kiln.runtime_errors` attribute of the lowered
/// module, the `runtime_errors` of a package manifest) with each `{k}`
/// (k a digit below `count`) replaced by `values[k]`, and each `{k:bytes}`
/// by byteCountString(values[k]).
std::string formatRuntimeError(const std::string &tmpl, const int64_t *values,
                               size_t count);

/// The formatted first report of the call, if any (and forgets it), with
/// the templates `messages` / `count` (an id out of range gives
/// "run-time error #N (no message)").
bool takeFormattedError(CallContext &context, const std::string *messages,
                        size_t count, std::string &message);

/// "N bytes" or "N bytes (X.Y MiB)", as the interpreter writes sizes.
std::string byteCountString(uint64_t bytes);

} // namespace kiln::rt

/// The function compiled code calls on a failed run-time check.
extern "C" void kiln_cpu_runtime_error(int64_t id, int64_t v0, int64_t v1,
                                       int64_t v2, int64_t v3, int64_t v4,
                                       int64_t v5, int64_t v6, int64_t v7);

#endif // KILN_RT_CALLCONTEXT_H
