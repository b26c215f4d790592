//===- Trace.h - Chrome traces of compiles and runs -------------*- C++ -*-===//
//
// Part of Kiln. `--kiln-trace=FILE` (kiln-opt, kiln-run) or KILN_TRACE=FILE
// (any process: the C API, Python) records what Kiln spends time on as
// Chrome trace events ("X" complete events: name, category, thread, start,
// duration, arguments) and writes them as JSON (the Trace Event Format:
// open in https://ui.perfetto.dev or chrome://tracing) when the process
// exits, or when `flush` is called. Categories: "compile" (a cache entry's
// compile, each pass of each pipeline, the CPU backend's LLVM phases),
// "run" (a program call, the interpreter running a graph), "kernel" (a
// call of compiled code).
//
// The file is written all or nothing (a temporary next to it, renamed);
// at most 1,000,000 events are kept (the rest are counted in the trace's
// metadata). Recording costs nothing while no trace is open (one relaxed
// atomic load per scope).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_TRACE_H
#define KILN_SUPPORT_TRACE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace kiln::trace {

/// Whether a trace is being recorded (reads KILN_TRACE on first use; a
/// path that cannot be written is reported once on stderr and ignored).
bool enabled();

/// Starts recording into `path` (replacing any trace being recorded, whose
/// events are kept). Fails with a message naming the path when a file
/// cannot be created next to it; nothing is recorded then.
bool open(llvm::StringRef path, std::string &error);

/// Writes every event recorded so far to the trace's file (the file holds
/// all events on each flush). Fails, naming the file, when it cannot be
/// written. A no-op (success) when no trace is open. Also run at exit.
bool flush(std::string &error);

/// Microseconds since the process's trace clock started.
uint64_t nowMicros();

/// Records one complete event (`args`: key/value strings shown in the
/// viewer).
void record(llvm::StringRef name, llvm::StringRef category,
            uint64_t startMicros, uint64_t durationMicros,
            std::vector<std::pair<std::string, std::string>> args = {});

/// Records the event of its lifetime (when a trace is open at construction).
class Scope {
public:
  Scope(llvm::StringRef name, llvm::StringRef category);
  ~Scope();
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;
  void arg(llvm::StringRef key, llvm::StringRef value);
  bool active() const { return on; }

private:
  bool on;
  uint64_t start = 0;
  std::string name, category;
  std::vector<std::pair<std::string, std::string>> args;
};

/// Adds an instrumentation to `pm` recording each pass run (on each
/// operation) as a "compile" event, when a trace is open.
void instrument(mlir::PassManager &pm);

} // namespace kiln::trace

#endif // KILN_SUPPORT_TRACE_H
