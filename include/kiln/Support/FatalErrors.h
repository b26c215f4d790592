//===- FatalErrors.h - LLVM's fatal errors as failures ----------*- C++ -*-===//
//
// Part of Kiln. LLVM and MLIR end the process on some errors they cannot
// return from (`llvm::report_fatal_error`, the bad-alloc handler): e.g. a
// pass pipeline string that nests a module pass under `func.func(...)`
// ("Can't add pass ... restricted to 'builtin.module' on a PassManager
// intended to run on 'func.func'"). A library must not take its embedding
// process down for bad input, so Kiln runs such work inside
// runCatchingFatalErrors: a fatal error raised on the calling thread
// abandons the work (a longjmp back to runCatchingFatalErrors) and becomes
// an ordinary error.
//
// Only work that is sound to abandon may run inside: work of the calling
// thread alone (no other thread shares its state), that holds no lock and
// registers nothing that outlives it (a diagnostic handler, a once_flag in
// progress). Destructors of the abandoned frames do not run: what they
// owned is leaked. Kiln uses it for building pass pipelines from strings
// (docs/c-api.md, "Fatal errors"). A fatal error on another thread, or
// outside such work, still ends the process as LLVM does by default
// ("LLVM ERROR: ...").
//
// The handlers are process-wide: the first runCatchingFatalErrors installs
// them unless a Kiln tool installed its own (ToolErrors.h, which also
// recovers inside runCatchingFatalErrors). They replace a handler the
// embedding process installed with llvm::install_fatal_error_handler.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_FATALERRORS_H
#define KILN_SUPPORT_FATALERRORS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace kiln {

/// Runs `fn` on the calling thread. Returns true when it returned; false when
/// LLVM raised a fatal error on this thread during it (`fn` abandoned where
/// it failed, see above), with the error's reason in `error`.
bool runCatchingFatalErrors(llvm::function_ref<void()> fn, std::string &error);

/// For fatal-error handlers: when the calling thread is inside
/// runCatchingFatalErrors, returns there with `reason` (does not return);
/// else does nothing.
void recoverFromFatalError(const char *reason);

/// Tells runCatchingFatalErrors that a Kiln handler calling
/// recoverFromFatalError is installed (ToolErrors.h).
void noteFatalErrorHandlerInstalled();

} // namespace kiln

#endif // KILN_SUPPORT_FATALERRORS_H
