//===- ToolErrors.cpp - Fatal errors of Kiln's tools ----------------------===//
//
// Part of Kiln. See kiln/Support/ToolErrors.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/ToolErrors.h"
#include "kiln/Support/FatalErrors.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"

#include <cstring>
#include <string>
#include <unistd.h>

static const char *toolName = "kiln";

/// Writes "<tool>: error: <reason> (fatal error in LLVM/MLIR)" without
/// allocating (the failure may be
/// out of memory), removes the files registered for removal on a signal,
/// and exits 1.
[[noreturn]] static void fatal(const char *reason) {
  auto put = [](const char *s) { (void)!::write(2, s, strlen(s)); };
  put(toolName);
  put(": error: ");
  put(reason ? reason : "fatal error");
  // Tells a resource limit (the usual cause) from a bug, and lets
  // kiln-reduce --crash find it.
  put(" (fatal error in LLVM/MLIR)\n");
  llvm::sys::RunInterruptHandlers();
  ::_exit(1);
}

void kiln::installToolFatalErrorHandlers(const char *name) {
  toolName = name;
  // Inside runCatchingFatalErrors (FatalErrors.h) the error is the work's,
  // which reports it; elsewhere it ends the tool.
  noteFatalErrorHandlerInstalled();
  llvm::install_fatal_error_handler([](void *, const char *reason, bool) {
    recoverFromFatalError(reason);
    fatal(reason);
  });
  llvm::install_bad_alloc_error_handler([](void *, const char *reason, bool) {
    recoverFromFatalError(reason);
    fatal(reason);
  });
}
