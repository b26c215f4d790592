//===- ThreadDiagnostics.h - Diagnostic handlers per thread -----*- C++ -*-===//
//
// Part of Kiln. A context's diagnostic handlers are shared by every thread
// that uses the context: a plain ScopedDiagnosticHandler takes whatever any
// thread emits while it is registered, so with calls of one session on
// several threads, one call would report another's error. A
// ThreadDiagnosticHandler takes the diagnostics emitted on the thread that
// created it; with `takeUnowned`, also those of threads that have no
// ThreadDiagnosticHandler of their own (a pass manager's worker threads);
// the rest go on to the handlers registered before it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_THREADDIAGNOSTICS_H
#define KILN_SUPPORT_THREADDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <functional>

namespace kiln {

class ThreadDiagnosticHandler {
public:
  ThreadDiagnosticHandler(mlir::MLIRContext *ctx,
                          std::function<void(mlir::Diagnostic &)> onDiagnostic,
                          bool takeUnowned = false)
      : previous(current()), onDiagnostic(std::move(onDiagnostic)),
        takeUnowned(takeUnowned),
        handler(ctx, [this](mlir::Diagnostic &d) -> mlir::LogicalResult {
          ThreadDiagnosticHandler *owner = current();
          if (owner == this || (!owner && this->takeUnowned)) {
            this->onDiagnostic(d);
            return mlir::success();
          }
          return mlir::failure();
        }) {
    current() = this;
  }
  ~ThreadDiagnosticHandler() { current() = previous; }
  ThreadDiagnosticHandler(const ThreadDiagnosticHandler &) = delete;
  ThreadDiagnosticHandler &operator=(const ThreadDiagnosticHandler &) = delete;

private:
  /// The innermost handler of the calling thread.
  static ThreadDiagnosticHandler *&current() {
    static thread_local ThreadDiagnosticHandler *innermost = nullptr;
    return innermost;
  }
  ThreadDiagnosticHandler *previous;
  std::function<void(mlir::Diagnostic &)> onDiagnostic;
  bool takeUnowned;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace kiln

#endif // KILN_SUPPORT_THREADDIAGNOSTICS_H
