//===- InterpreterInterface.td - How to interpret an op ----*- tablegen -*-===//
//
// Part of Kiln. The reference interpreter runs any op that implements this
// interface. Implementations are attached to kt (and upstream arith/tensor)
// ops as external models by lib/Interpreter, so the dialects know nothing of
// the interpreter and the interpreter shares no code with the lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_INTERPRETER_INTERPRETERINTERFACE_TD
#define KILN_INTERPRETER_INTERPRETERINTERFACE_TD

include "mlir/IR/OpBase.td"

def Kiln_InterpretableOpInterface : OpInterface<"InterpretableOpInterface"> {
  let cppNamespace = "::kiln::interp";
  let description = [{
    An op the reference interpreter can run: given its operand values it
    computes its result values with PyTorch semantics. A runtime error (a
    dynamic dim that does not match, an index out of range, an integer
    division by zero) is reported with `emitError` on the op and returns
    failure.
  }];
  let methods = [
    InterfaceMethod<"Computes the results of this op from operand values.",
      "::llvm::LogicalResult", "interpret",
      (ins "::llvm::ArrayRef<::kiln::interp::Tensor>":$operands,
           "::llvm::SmallVectorImpl<::kiln::interp::Tensor> &":$results)>,
  ];
}

#endif // KILN_INTERPRETER_INTERPRETERINTERFACE_TD
