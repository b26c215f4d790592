//===- KTFusionOps.cpp - kt.fusion and kt.yield ---------------------------===//
//
// Part of Kiln. The verifier of kt.fusion (the region contract of
// KTFusionOps.td).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTFusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::kt;

LogicalResult FusionOp::verify() {
  if (getKernel().empty())
    return emitOpError("needs a non-empty kernel name");
  if (getNumResults() == 0)
    return emitOpError("needs at least one result");
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("has ")
           << getInputs().size() << " operands but its block has "
           << body.getNumArguments() << " arguments";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getInputs().getTypes(), body.getArgumentTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("block argument #")
             << i << " has type " << std::get<1>(pair) << " but operand #" << i
             << " has type " << std::get<0>(pair);
  auto yield = dyn_cast_or_null<YieldOp>(
      body.empty() ? nullptr : &body.back());
  if (!yield)
    return emitOpError("body must end in kt.yield");
  if (yield.getOperandTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getNumOperands() << " values of types "
           << yield.getOperandTypes() << " but has result types "
           << getResultTypes();
  WalkResult nested = getBody().walk([&](FusionOp inner) {
    inner.emitOpError("is nested in another kt.fusion");
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTFusionOps.cpp.inc"
