//===- RuntimeErrors.h - Per-call state of compiled CPU code -----*- C++ -*-===//
//
// Part of Kiln. The host side of kiln/Conversion/KTToLinalg/RuntimeChecks.h
// and of the buffer pool's failure handling (BufferPool.h): each call of
// compiled code has a CallContext, which holds the first run-time error the
// code reports (kiln_cpu_runtime_error) and the blocks it allocates. A
// CallScope makes a context current on the calling thread and on the OpenMP
// workers that run the call's parallel regions, so calls on different
// threads run at the same time and each one sees only its own reports.
//
// The workers learn which call they work for through OMPT, OpenMP's tool
// interface: Kiln registers itself as an OMPT tool of libomp (it defines
// `ompt_start_tool`), and passes the current call from the thread that
// starts a parallel region to the region's implicit tasks. When libomp does
// not start the tool (e.g. OMP_TOOL=disabled, or another OMPT tool named by
// OMP_TOOL_LIBRARIES), calls of compiled code in the process run one at a
// time, as before (callsRunConcurrently() says which).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_RUNTIMEERRORS_H
#define KILN_BACKEND_CPU_RUNTIMEERRORS_H

#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"

#include "llvm/ADT/ArrayRef.h"

#include <csetjmp>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace mlir {
class ExecutionEngine;
class ModuleOp;
} // namespace mlir

namespace kiln::cpu {

/// Makes kiln_cpu_runtime_error resolvable by the JIT-compiled code.
void registerRuntimeErrorSymbol(mlir::ExecutionEngine &engine);
/// The message templates of a lowered module (its kiln.runtime_errors).
std::vector<std::string> runtimeErrorMessages(mlir::ModuleOp module);

/// The state of one call of compiled code. Reports and allocations may come
/// from any thread working for the call (the caller, OpenMP workers).
struct CallContext {
  std::mutex mutex;
  /// The first run-time error report of the call.
  bool errorSet = false;
  int64_t errorId = 0;
  int64_t errorValues[kRuntimeErrorValues] = {};
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
/// (libomp started Kiln's OMPT tool). Meaningful once libomp is loaded.
bool callsRunConcurrently();

/// Makes libomp start Kiln's OMPT tool when it initializes (call right
/// before loading libomp), then initializes libomp.
void prepareOpenMPTool();
void initializeOpenMP();

/// The formatted first report of the call, if any, and forgets it.
std::optional<std::string>
takeRuntimeError(CallContext &context, llvm::ArrayRef<std::string> messages);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_RUNTIMEERRORS_H
