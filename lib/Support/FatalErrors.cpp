//===- FatalErrors.cpp - LLVM's fatal errors as failures ------------------===//
//
// Part of Kiln. See kiln/Support/FatalErrors.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/FatalErrors.h"

#include "llvm/Support/ErrorHandling.h"

#include <atomic>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

namespace {
/// A runCatchingFatalErrors in progress on this thread.
struct Recovery {
  std::jmp_buf *exit;
  Recovery *previous;
  char reason[1024];
};
thread_local Recovery *recovery = nullptr;
std::atomic<bool> handlerInstalled{false};
std::once_flag installOnce;

void put(const char *s) { (void)!::write(2, s, std::strlen(s)); }

/// Outside runCatchingFatalErrors: as LLVM without a handler ("LLVM ERROR:"
/// then LLVM exits or aborts once the handler returns).
void fatalHandler(void *, const char *reason, bool) {
  kiln::recoverFromFatalError(reason);
  put("LLVM ERROR: ");
  put(reason ? reason : "fatal error");
  put("\n");
}

/// A bad-alloc handler must not return.
void badAllocHandler(void *, const char *reason, bool) {
  kiln::recoverFromFatalError(reason ? reason : "out of memory");
  put("LLVM ERROR: out of memory\n");
  std::abort();
}
} // namespace

void kiln::noteFatalErrorHandlerInstalled() { handlerInstalled = true; }

void kiln::recoverFromFatalError(const char *reason) {
  Recovery *r = recovery;
  if (!r)
    return;
  // No allocation: the error may be out of memory.
  std::strncpy(r->reason, reason ? reason : "fatal error",
               sizeof(r->reason) - 1);
  r->reason[sizeof(r->reason) - 1] = 0;
  recovery = r->previous;
  std::longjmp(*r->exit, 1);
}

bool kiln::runCatchingFatalErrors(llvm::function_ref<void()> fn,
                                  std::string &error) {
  std::call_once(installOnce, [] {
    if (handlerInstalled.exchange(true))
      return; // a tool's (ToolErrors.h), which recovers too
    llvm::install_fatal_error_handler(fatalHandler);
    llvm::install_bad_alloc_error_handler(badAllocHandler);
  });
  std::jmp_buf exit;
  Recovery r;
  r.exit = &exit;
  r.previous = recovery;
  r.reason[0] = 0;
  if (!setjmp(exit)) {
    recovery = &r;
    fn();
    recovery = r.previous;
    return true;
  }
  // recoverFromFatalError restored `recovery`.
  error = r.reason;
  return false;
}
