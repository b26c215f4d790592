//===- ToolErrors.h - Fatal errors of Kiln's tools --------------*- C++ -*-===//
//
// Part of Kiln. LLVM and MLIR end the process on some failures they cannot
// return from (`report_fatal_error`: "pthread_create failed" when threads
// cannot be started under `ulimit -v`, out of memory in LLVM's allocators):
// by default with "LLVM ERROR: ...", a "PLEASE submit a bug report" stack
// dump and abort(). Kiln's tools turn these into their usual error line,
// `<tool>: error: <reason> (fatal error in LLVM/MLIR)`, and exit code 1: the input or the machine's
// limits are at fault, not a bug to report, and nothing the user gave is
// overwritten (outputs are written to temporaries and renamed only at the
// end; kiln/Support/OutputFiles.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_TOOLERRORS_H
#define KILN_SUPPORT_TOOLERRORS_H

namespace kiln {

/// Installs LLVM's fatal-error and bad-alloc handlers for tool `toolName`
/// (a string that lives as long as the process). Call once, early in main,
/// after llvm::InitLLVM. Also calls initToolSignals().
void installToolFatalErrorHandlers(const char *toolName);

/// What every tool does after llvm::InitLLVM about signals:
/// keepIgnoredSignals(), and in a sanitizer build
/// keepLLVMHandlersOutOfSanitizerAborts().
void initToolSignals();

/// In a sanitizer build (the sanitizer runtime is linked into the
/// executable): a sanitizer report that ends the process with abort()
/// (`abort_on_error=1`) dies of SIGABRT's default action, with the report
/// and nothing else. Without this, the abort ran the SIGABRT handler
/// llvm::InitLLVM installs (a stack dump) inside the sanitizer's report,
/// with the sanitizer's locks held; under ThreadSanitizer that handler's
/// `backtrace()` (which loads libgcc_s and allocates) made TSan start a
/// second report ("signal-unsafe call inside of a signal") that waited for
/// the first one's lock forever. Done through
/// `__sanitizer_set_death_callback`: SIGABRT keeps LLVM's handler for every
/// other abort. No-op in other builds.
void keepLLVMHandlersOutOfSanitizerAborts();

/// Ignores again the signals that were ignored when the process started
/// (SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGUSR2, SIGPIPE, SIGXCPU, SIGXFSZ;
/// recorded before main) and that llvm::InitLLVM's stack-dump handler took
/// over. A parent that ignores SIGXFSZ under a file size limit (`ulimit -f`)
/// expects a write past the limit to fail with EFBIG, which the tool reports
/// as an error; LLVM's handler printed a "PLEASE submit a bug report" stack
/// dump first (and under ThreadSanitizer deadlocked in it). Call after
/// llvm::InitLLVM.
void keepIgnoredSignals();

} // namespace kiln

#endif // KILN_SUPPORT_TOOLERRORS_H
