//===- ToolErrors.cpp - Fatal errors of Kiln's tools ----------------------===//
//
// Part of Kiln. See kiln/Support/ToolErrors.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/ToolErrors.h"
#include "kiln/Support/FatalErrors.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"

#include <csignal>
#include <cstring>
#include <iterator>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

// The sanitizer runtimes' hook (sanitizer/common_interface_defs.h), weak: it
// is defined only where a sanitizer runtime is linked into the executable
// (KILN_SANITIZE builds, the fuzz build), null elsewhere.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void))
    __attribute__((weak));

static const char *toolName = "kiln";

namespace {
/// The signals LLVM's stack-dump handler catches that a process can ignore
/// and live on (not the crash signals: SIGSEGV, SIGBUS, SIGILL, ...).
constexpr int kIgnorableSignals[] = {SIGHUP,  SIGINT,  SIGTERM, SIGQUIT,
                                     SIGUSR2, SIGPIPE, SIGXCPU, SIGXFSZ};
/// Which of them were ignored when the process started: recorded by a
/// static initializer, before main and so before llvm::InitLLVM.
struct InitiallyIgnored {
  bool ignored[std::size(kIgnorableSignals)] = {};
  InitiallyIgnored() {
    for (size_t i = 0; i < std::size(kIgnorableSignals); ++i) {
      struct sigaction old;
      ignored[i] = ::sigaction(kIgnorableSignals[i], nullptr, &old) == 0 &&
                   !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
    }
  }
} initiallyIgnored;
} // namespace

void kiln::keepIgnoredSignals() {
  for (size_t i = 0; i < std::size(kIgnorableSignals); ++i)
    if (initiallyIgnored.ignored[i])
      ::signal(kIgnorableSignals[i], SIG_IGN);
}

/// Runs inside the sanitizer's Die(), before its abort(): gives SIGABRT
/// its default action again, so the abort kills the process without running
/// LLVM's stack-dump handler inside the report. Through the system call
/// itself: ThreadSanitizer intercepts sigaction() (it would record the
/// change in its own state, under locks the report may hold) and keeps the
/// user's handler in a table of its own; the kernel's disposition is what
/// an abort() meets. Nothing here allocates or locks.
static void restoreDefaultAbort() {
  // The kernel's struct sigaction on Linux (not libc's): handler, flags,
  // restorer, an 8-byte mask.
  struct {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
  } action = {SIG_DFL, 0, nullptr, 0};
  (void)::syscall(SYS_rt_sigaction, SIGABRT, &action, nullptr,
                  sizeof(action.mask));
}

void kiln::keepLLVMHandlersOutOfSanitizerAborts() {
  if (__sanitizer_set_death_callback)
    __sanitizer_set_death_callback(restoreDefaultAbort);
}

void kiln::initToolSignals() {
  keepIgnoredSignals();
  keepLLVMHandlersOutOfSanitizerAborts();
}

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
  initToolSignals();
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
