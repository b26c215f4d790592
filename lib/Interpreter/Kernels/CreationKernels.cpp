//===- CreationKernels.cpp - Interpreter kernels of creation ops ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {

/// Reads a dense elements attribute into a tensor (also used for
/// arith.constant).
FailureOr<Tensor> tensorFromElements(Operation *op, ElementsAttr attr);

FailureOr<Tensor> tensorFromElements(Operation *op, ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<DType> dt = dtypeFromType(type.getElementType());
  if (!dt) {
    op->emitError("unsupported constant element type ") << type.getElementType();
    return failure();
  }
  Tensor t(*dt, type.getShape());
  int64_t i = 0;
  if (isFloatDType(*dt)) {
    for (APFloat v : attr.getValues<APFloat>())
      t.setF(i++, v.convertToDouble());
  } else {
    for (APInt v : attr.getValues<APInt>())
      t.setI(i++, *dt == DType::I1 ? (int64_t)v.getZExtValue() : v.getSExtValue());
  }
  return t;
}

namespace {

LogicalResult interpretConstant(ConstantOp op, ArrayRef<Tensor>,
                                SmallVectorImpl<Tensor> &results) {
  FailureOr<Tensor> t = tensorFromElements(op, op.getValue());
  if (failed(t))
    return failure();
  results.push_back(*t);
  return success();
}

} // namespace

void registerCreationKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<ConstantOp, interpretConstant>(ctx);
  });
}

} // namespace kiln::interp
