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
/// after llvm::InitLLVM. Also calls keepIgnoredSignals().
void installToolFatalErrorHandlers(const char *toolName);

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
