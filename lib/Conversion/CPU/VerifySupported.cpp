//===- VerifySupported.cpp - What kiln-cpu can compile ---------------------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h (verifySupported): the
// ops the later passes of kiln-cpu would fail on with an upstream message
// that names neither the op's source nor what is unsupported ("op was not
// bufferized"), reported before bufferization at the op's own location.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"

using namespace mlir;

static bool hasTensor(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<TensorType>(t); });
}

LogicalResult kiln::cpu::verifySupported(ModuleOp module) {
  bool ok = true;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return WalkResult::advance();
    if (op->getName().getDialectNamespace() == "kg") {
      op->emitOpError()
          << "is not supported by kiln-cpu: captured programs (kg) are host "
             "code; kiln-cpu compiles func.func graph functions (run the "
             "program with kiln-run or the runtime, which compile its "
             "graphs)";
      ok = false;
      return WalkResult::skip();
    }
    if ((hasTensor(op->getOperandTypes()) ||
         hasTensor(op->getResultTypes())) &&
        !isa<bufferization::BufferizableOpInterface>(op)) {
      op->emitOpError()
          << "on tensors is not supported by kiln-cpu: it has no "
             "bufferization (write the computation with kt ops, or as a "
             "linalg op on tensors)";
      ok = false;
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return success(ok);
}
