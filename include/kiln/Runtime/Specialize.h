//===- Specialize.h - Specializing programs for their inputs ----*- C++ -*-===//
//
// Part of Kiln. How the runtime makes a cache entry: clone the module,
// rewrite the program's argument types and guards for the inputs of the call
// (static sizes, or `?` with a symbolic guard for dims that are dynamic), and
// re-infer the types of everything downstream.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SPECIALIZE_H
#define KILN_RUNTIME_SPECIALIZE_H

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Runtime/Guards.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::runtime {

/// Re-infers result types through `region` after the types of values it uses
/// changed: kt ops (InferTypeOpInterface), kg.graph (inline regions and
/// graph functions), kg.break, scf.if/for, func.call. Graph functions whose
/// signature changes are updated in place. Fails (with a diagnostic) when an
/// op's type cannot be inferred for the new operand types.
mlir::LogicalResult refineTypes(mlir::Region &region);

/// Re-infers the types of `program` (its body, then its result types from
/// kg.return).
mlir::LogicalResult refineProgramTypes(kg::ProgramOp program);

/// Specializes `program` (which must live in `module`, a private clone) for
/// `args`: argument i gets the dtype and shape of args[i], with the dims
/// where dynamicDims[i][d] is true left as `?` and guarded by a symbol;
/// every tensor argument gets a kg.guard_tensor (keeping the symbol names,
/// strides, device and requires_grad of an existing one, updated to the
/// call), scalar kg.guard_value guards take the call's value, and a
/// kg.guard_backend names `backend`. Then refines the types and verifies.
mlir::LogicalResult
specializeProgram(kg::ProgramOp program, llvm::ArrayRef<ArgView> args,
                  llvm::ArrayRef<llvm::SmallVector<bool>> dynamicDims,
                  llvm::StringRef backend, std::string &error);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_SPECIALIZE_H
