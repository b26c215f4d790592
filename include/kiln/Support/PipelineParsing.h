//===- PipelineParsing.h - Pass pipelines from strings, safely --*- C++ -*-===//
//
// Part of Kiln. mlir::parsePassPipeline, except that LLVM's fatal errors
// raised while building the pipeline (a module pass nested under
// `func.func(...)`: "Can't add pass ... restricted to 'builtin.module' on a
// PassManager intended to run on 'func.func'") are errors, not the end of
// the process (kiln/Support/FatalErrors.h: building a pipeline happens on
// the calling thread, holds no lock and registers nothing, so it is sound to
// abandon). Every pipeline string from outside (the C API, the runtime
// session's options) goes through it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_PIPELINEPARSING_H
#define KILN_SUPPORT_PIPELINEPARSING_H

#include "kiln/Support/FatalErrors.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// Parses `text` into `pm`; on failure `message` says why (parse errors,
/// option errors, or the fatal error's reason).
inline mlir::LogicalResult parsePipelineCatchingFatalErrors(
    llvm::StringRef text, mlir::OpPassManager &pm, std::string &message) {
  llvm::raw_string_ostream os(message);
  bool parsed = false;
  std::string fatal;
  if (!runCatchingFatalErrors(
          [&] { parsed = succeeded(mlir::parsePassPipeline(text, pm, os)); },
          fatal)) {
    message = fatal;
    return mlir::failure();
  }
  return mlir::success(parsed);
}

} // namespace kiln

#endif // KILN_SUPPORT_PIPELINEPARSING_H
