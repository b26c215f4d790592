//===- ElementwiseKernels.cpp - Interpreter kernels of pointwise ops ------===//
//
// Part of Kiln. Floats are computed in double and rounded to the result dtype
// when stored; integers in int64 with two's-complement wrap-around.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <cmath>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

/// Applies a binary function with broadcasting: `ff` on doubles for float
/// operands, `fi` on int64 for integer operands.
template <typename FF, typename FI>
LogicalResult binaryKernel(Operation *op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results, FF ff, FI fi) {
  FailureOr<SmallVector<int64_t>> shape = broadcastRuntimeShapes(op, operands);
  if (failed(shape))
    return failure();
  const Tensor &a = operands[0], &b = operands[1];
  Tensor out(resultDType(op), *shape);
  SmallVector<SmallVector<int64_t>> strides{broadcastStrides(a.shape(), *shape),
                                            broadcastStrides(b.shape(), *shape)};
  if (a.isFloat()) {
    forEachBroadcast(*shape, strides, [&](int64_t i, ArrayRef<int64_t> o) {
      out.setF(i, ff(a.getF(o[0]), b.getF(o[1])));
    });
  } else {
    forEachBroadcast(*shape, strides, [&](int64_t i, ArrayRef<int64_t> o) {
      out.setI(i, fi(a.getI(o[0]), b.getI(o[1])));
    });
  }
  results.push_back(std::move(out));
  return success();
}

/// Applies a unary function elementwise on doubles.
template <typename FF>
LogicalResult unaryFloatKernel(Operation *op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results, FF ff) {
  const Tensor &a = operands[0];
  Tensor out(resultDType(op), a.shape());
  for (int64_t i = 0, e = a.numel(); i < e; ++i)
    out.setF(i, ff(a.getF(i)));
  results.push_back(std::move(out));
  return success();
}

int64_t wrapAdd(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x + (uint64_t)y);
}

LogicalResult interpretAdd(AddOp op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  return binaryKernel(
      op, operands, results, [](double x, double y) { return x + y; },
      wrapAdd);
}

LogicalResult interpretExp(ExpOp op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  return unaryFloatKernel(op, operands, results,
                          [](double x) { return std::exp(x); });
}

} // namespace

void registerElementwiseKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<AddOp, interpretAdd>(ctx);
    attachKernel<ExpOp, interpretExp>(ctx);
  });
}

} // namespace kiln::interp
