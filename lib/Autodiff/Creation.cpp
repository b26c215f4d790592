//===- Creation.cpp - Vector-Jacobian rules of kt creation ops ------------===//
//
// Part of Kiln. constant, full, arange, rand and randn read no
// differentiable operand. dropout's gradient is the result gradient times
// the same scaled mask, recomputed from the same seed (dropout of ones), so
// no mask needs to be saved and the input's own zeros do not matter.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

LogicalResult vjpDropout(kt::DropoutOp op, GradEmitter &e, Value g,
                         SmallVectorImpl<Value> &grads) {
  if (!op.getTrain()) {
    grads[0] = g;
    return success();
  }
  Value mask = e.op<kt::DropoutOp>(
      {e.onesLike(op.getSelf()), op.getSeed()},
      {e.attr("p", op.getPAttr()), e.attr("train", op.getTrainAttr())});
  grads[0] = e.mul(g, mask);
  return success();
}

} // namespace

void autodiff::registerCreationVJPs(MLIRContext *ctx) {
  attachVJP<kt::ConstantOp, vjpNone<kt::ConstantOp>>(ctx);
  attachVJP<kt::FullOp, vjpNone<kt::FullOp>>(ctx);
  attachVJP<kt::ArangeOp, vjpNone<kt::ArangeOp>>(ctx);
  attachVJP<kt::RandOp, vjpNone<kt::RandOp>>(ctx);
  attachVJP<kt::RandnOp, vjpNone<kt::RandnOp>>(ctx);
  attachVJP<kt::DropoutOp, vjpDropout>(ctx);
}
