//===- OpNames.h - Resolving op names given as text -------------*- C++ -*-===//
//
// Part of Kiln. Pass options that name ops (`kiln-split-graphs{disallow=..}`,
// `kiln-decompose{keep=..}`) resolve them here, against every dialect the
// context can load, not only those the input happened to load.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_OPNAMES_H
#define KILN_SUPPORT_OPNAMES_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <optional>

namespace kiln {

/// The registered op named `name` (`kt.abs`, `func.call`), or nothing when
/// no registered dialect defines it. The dialect (the prefix before the
/// first '.') is loaded from the context's registry first: whether a name
/// resolves does not depend on which dialects were loaded before. Loads a
/// dialect, so call it outside multi-threaded regions (a module pass's
/// runOnOperation, a tool).
inline std::optional<mlir::RegisteredOperationName>
lookupRegisteredOp(mlir::MLIRContext *ctx, llvm::StringRef name) {
  auto [prefix, rest] = name.split('.');
  if (!rest.empty())
    (void)ctx->getOrLoadDialect(prefix);
  return mlir::RegisteredOperationName::lookup(name, ctx);
}

} // namespace kiln

#endif // KILN_SUPPORT_OPNAMES_H
