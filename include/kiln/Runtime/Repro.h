//===- Repro.h - Reproducers of failed calls --------------------*- C++ -*-===//
//
// Part of Kiln. With KILN_REPRO_DIR=DIR (or the session option repro_dir), a
// call that fails (a compile error, a pipeline that fails, a run-time error
// of compiled code) leaves a reproducer, as PyTorch's minifier does: a new
// directory DIR/repro-<program>-<pid>-<n> with the loaded module
// (program.mlir, locations included), the call's inputs (input<i>.npy), the
// error (error.txt), and repro.sh, which reruns the call with kiln-run on the
// session's backend and options and shows the kiln-opt / kiln-reduce
// commands that minify the failing graph (docs/debugging.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_REPRO_H
#define KILN_RUNTIME_REPRO_H

#include "kiln/Runtime/Guards.h"
#include "kiln/Runtime/Session.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::runtime {

/// Writes a reproducer of the failed call of `program` with `args` into a new
/// directory under `dir` (created if missing) and returns that directory.
/// Nothing is left behind when it fails.
llvm::Expected<std::string> writeRepro(llvm::StringRef dir,
                                       mlir::ModuleOp module,
                                       llvm::StringRef program,
                                       llvm::ArrayRef<ArgView> args,
                                       const SessionOptions &options,
                                       llvm::StringRef error);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_REPRO_H
