//===- Specialize.h - Specializing programs for their inputs ----*- C++ -*-===//
//
// Part of Kiln. How the runtime makes a cache entry: clone the module,
// rewrite the program's argument types and guards for the inputs of the call
// (static sizes, or `?` with a symbolic guard for dims that are dynamic), and
// re-infer the types of everything downstream (TypeRefiner).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SPECIALIZE_H
#define KILN_RUNTIME_SPECIALIZE_H

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Runtime/Guards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::runtime {

/// Re-infers result types through a program after the types of its
/// arguments changed (constructed on the program as loaded, before any
/// change):
/// * ops with InferTypeOpInterface (kt ops, kt.load, kt.alloc_ref, the
///   views, kg.grad, arith, ...) re-infer their results;
/// * kg.graph: inline regions are refined and give the results; an outlined
///   graph function (and a func.call's callee) is specialized for the
///   call's argument types, in place the first time and as a copy
///   (`@name_1`, ...) for a call with other types, so every call site keeps
///   a function of its own types;
/// * kg.break and scf.if take their results from their yields (scf.if joins
///   its branches: dims that differ become `?`); scf.for and scf.while
///   iterate to a fixed point of the loop-carried types;
/// * kg.host_call keeps its declared result types when called with the
///   operand types of the loaded program; called with other types, its
///   tensor results get `?` dims (rank and element type kept).
/// Ops of no kind above keep their result types. Fails (with a diagnostic)
/// when an op's type cannot be inferred for the new operand types.
class TypeRefiner {
public:
  explicit TypeRefiner(kg::ProgramOp program);

  /// Refines the ops of `region`, in order.
  mlir::LogicalResult refine(mlir::Region &region);
  /// Refines `program`'s body, then its result types from kg.return, and
  /// erases the specialized functions no call uses any more (versions made
  /// for a loop's first round of types).
  mlir::LogicalResult refineProgram(kg::ProgramOp program);

private:
  mlir::LogicalResult refineOp(mlir::Operation &op);
  mlir::LogicalResult refineFunction(mlir::func::FuncOp fn,
                                     mlir::TypeRange argTypes);
  mlir::FailureOr<mlir::func::FuncOp>
  specializeCallee(mlir::Operation *call, mlir::FlatSymbolRefAttr callee,
                   mlir::TypeRange argTypes);

  /// Operand types of each kg.host_call in the loaded program.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Type>>
      hostCallOperandTypes;
  /// The specialized versions of each callee (the function itself first),
  /// and the function each copy was made from.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::func::FuncOp>>
      variants;
  llvm::DenseMap<mlir::Operation *, mlir::func::FuncOp> originOf;
};

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
