//===- RuntimeChecks.h - Run-time errors of compiled kt code ----*- C++ -*-===//
//
// Part of Kiln. The contract between the kt-to-linalg lowering and the CPU
// backend for run-time errors (what the interpreter reports at an op's
// location: an index out of range, integer division by zero, ...).
//
// Generated code never aborts. Where a check fails it calls
//   void kiln_cpu_runtime_error(i64 id, i64 v0, ..., i64 v7)
// (declared `func.func private` by the lowering, provided by the backend)
// and goes on with a safe value (e.g. a clamped index, a zero-filled operand
// of the expected size), so no memory outside the operands is read. `id`
// indexes the module's `kiln.runtime_errors` array of message templates,
// "<file>:<line>:<col>: <text>", where {0} ... {7} stand for v0 ... v7 (run-
// time sizes, indices; static parts of a message are in its text). The
// backend keeps the first error of a call and fails the call with the
// formatted message.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KTTOLINALG_RUNTIMECHECKS_H
#define KILN_CONVERSION_KTTOLINALG_RUNTIMECHECKS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kiln {

/// The function compiled code calls on a failed check.
inline constexpr llvm::StringLiteral kRuntimeErrorFn = "kiln_cpu_runtime_error";
/// The module attribute (array of strings) holding the message templates.
inline constexpr llvm::StringLiteral kRuntimeErrorsAttr = "kiln.runtime_errors";

/// The function compiled code calls right before an allocation, with the
/// id of a template naming the allocating op (kiln-cpu-alloc-sites): a
/// failed allocation then fails the call with that message, the byte count
/// as {0:bytes}.
inline constexpr llvm::StringLiteral kAllocSiteFn = "kiln_cpu_alloc_site";

/// How many values (after the id) the error function takes.
inline constexpr unsigned kRuntimeErrorValues = 8;

// Formatting a template with the reported values is the compiled-code
// runtime's (kiln::rt::formatRuntimeError, runtime/include/kiln/rt/
// CallContext.h): the JIT backend and libkiln_rt share it.

/// Appends the template "<file:line:col of loc>: text" to the
/// `kiln.runtime_errors` of `module` (an identical one shares its id) and
/// returns its id. Declares kiln_cpu_runtime_error in `module` if needed.
int64_t addRuntimeErrorTemplate(mlir::ModuleOp module, mlir::Location loc,
                                llvm::StringRef text);

} // namespace kiln

#endif // KILN_CONVERSION_KTTOLINALG_RUNTIMECHECKS_H
