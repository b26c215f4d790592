//===- FusionKernels.cpp - Interpreting kt.fusion --------------------------===//
//
// Part of Kiln. A kt.fusion means exactly its body: the model runs the body's
// block with the operands bound to its arguments (in a nested evaluator, as
// the body is isolated from above) and returns what kt.yield yields. So IR
// after kiln-fuse stays executable in the interpreter.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTFusionOps.h"

#include "kiln/Interpreter/Interpreter.h"

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {
struct FusionModel
    : public InterpretableOpInterface::ExternalModel<FusionModel, FusionOp> {
  LogicalResult interpret(Operation *op, ArrayRef<Tensor> operands,
                          SmallVectorImpl<Tensor> &results) const {
    auto fusion = cast<FusionOp>(op);
    auto module = op->getParentOfType<ModuleOp>();
    if (!module)
      return op->emitError("kt.fusion outside a module");
    Interpreter body(module);
    FailureOr<SmallVector<Tensor>> r =
        body.runBlock(fusion.getBody().front(), operands);
    if (failed(r))
      return failure();
    results.append(r->begin(), r->end());
    return success();
  }
};
} // namespace

void registerFusionKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    FusionOp::attachInterface<FusionModel>(*ctx);
  });
}
} // namespace kiln::interp
