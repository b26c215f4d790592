//===- Interpreter.h - The reference interpreter ----------------*- C++ -*-===//
//
// Part of Kiln. Runs `func.func`s of kt ops (plus func, scf, arith and the
// tensor ops Kiln emits) on host tensors with PyTorch semantics. It is the
// `eager` backend and the oracle that every later stage is checked against.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_INTERPRETER_INTERPRETER_H
#define KILN_INTERPRETER_INTERPRETER_H

#include "kiln/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <functional>
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "kiln/Interpreter/InterpreterInterface.h.inc"

namespace kiln::interp {

/// Attaches the interpreter's kernels to kt, arith and tensor ops. Call before
/// creating the context (or append to its registry).
void registerInterpreterInterfaces(mlir::DialectRegistry &registry);

/// Checks that `value` can be passed where `type` is expected: same dtype
/// (index takes i64), same rank, equal static dims. On mismatch returns false
/// and sets `why` ("expected tensor<2x3xf32>, got f32 tensor of shape 2x4").
bool matchesType(const Tensor &value, mlir::Type type, std::string &why);
/// The same check on a dtype and shape (no tensor needed).
bool matchesType(DType dtype, llvm::ArrayRef<int64_t> shape, mlir::Type type,
                 std::string &why);

/// The interpreter. Errors are reported through the context's diagnostic
/// engine, at the location of the op that failed.
class Interpreter {
public:
  /// Runs one op: computes `results` from `operands`; may run regions of the
  /// op through `interp.runBlock`. Emits an error at the op and fails on a
  /// runtime error.
  using OpHandler = std::function<mlir::LogicalResult(
      mlir::Operation &op, llvm::ArrayRef<Tensor> operands,
      llvm::SmallVectorImpl<Tensor> &results, Interpreter &interp)>;

  explicit Interpreter(mlir::ModuleOp module) : module(module) {}

  /// Runs ops named `opName` with `handler` instead of their
  /// InterpretableOpInterface model. This is how an embedder (the runtime)
  /// gives meaning to ops the interpreter does not know, such as host
  /// callbacks, without the interpreter depending on it.
  void setHandler(llvm::StringRef opName, OpHandler handler) {
    handlers[opName] = std::move(handler);
  }

  /// Runs `fn` (a func.func, kg.program, ...) on `args` (checked against its
  /// signature).
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  call(mlir::FunctionOpInterface fn, llvm::ArrayRef<Tensor> args);
  /// Runs the function-like op named `name` in the module.
  mlir::FailureOr<llvm::SmallVector<Tensor>> call(llvm::StringRef name,
                                                  llvm::ArrayRef<Tensor> args);

  /// Runs the ops of `block` with `args` bound to its arguments, and returns
  /// the operands of its terminator. Used by control-flow ops.
  mlir::FailureOr<llvm::SmallVector<Tensor>> runBlock(mlir::Block &block,
                                                      llvm::ArrayRef<Tensor> args);

private:
  mlir::LogicalResult runOp(mlir::Operation &op);
  Tensor lookup(mlir::Value v) const;

  mlir::ModuleOp module;
  llvm::StringMap<OpHandler> handlers;
  llvm::DenseMap<mlir::Value, Tensor> values;
  unsigned callDepth = 0;
};

} // namespace kiln::interp

#endif // KILN_INTERPRETER_INTERPRETER_H
