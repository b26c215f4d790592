//===- Activation.cpp - Decompositions of gelu and silu -------------------===//
//
// Part of Kiln. PyTorch's formulas: gelu exact via erf, gelu tanh
// approximation, silu = x * sigmoid(x). Computed in the input dtype, f32 for
// f16/bf16.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

#include <cmath>

using namespace mlir;

namespace kiln::decompose {
namespace {

/// none: 0.5 * x * (1 + erf(x / sqrt(2)));
/// tanh: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
FailureOr<Values> decomposeGelu(kt::GeluOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  Type f = Emitter::elementTypeOf(x);
  Value inner;
  if (op.getApproximate() == kt::GeluApproximate::tanh) {
    Value cube = e.mul(e.mul(x, x), x);
    Value poly = e.add(x, e.mul(cube, e.scalar(0.044715, f)));
    inner = e.tanh(e.mul(poly, e.scalar(std::sqrt(2.0 / M_PI), f)));
  } else {
    inner = e.erf(e.mul(x, e.scalar(M_SQRT1_2, f)));
  }
  Value r = e.mul(e.mul(x, e.scalar(0.5, f)), e.add(inner, e.scalar(1.0, f)));
  return Values{e.cast(r, Emitter::elementTypeOf(op.getSelf()))};
}

/// silu: x * sigmoid(x).
FailureOr<Values> decomposeSilu(kt::SiluOp op, Emitter &e) {
  Value x = e.upcast(op.getSelf());
  return Values{
      e.cast(e.mul(x, e.sigmoid(x)), Emitter::elementTypeOf(op.getSelf()))};
}

} // namespace

void registerActivationDecompositions(MLIRContext *ctx) {
  attachDecomposition<kt::GeluOp, decomposeGelu>(ctx);
  attachDecomposition<kt::SiluOp, decomposeSilu>(ctx);
}

} // namespace kiln::decompose
