//===- Linear.cpp - Decomposition of linear -------------------------------===//
//
// Part of Kiln. linear(x, w, b) = x @ w^T + b (PyTorch's decomposition into
// matmul, t and add).
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

using namespace mlir;

namespace kiln::decompose {
namespace {

FailureOr<Values> decomposeLinear(kt::LinearOp op, Emitter &e) {
  Value r = e.matmul(op.getInput(), e.transpose(op.getWeight(), 0, 1));
  if (Value b = op.getBias())
    r = e.add(r, b);
  return Values{r};
}

} // namespace

void registerLinearDecompositions(MLIRContext *ctx) {
  attachDecomposition<kt::LinearOp, decomposeLinear>(ctx);
}

} // namespace kiln::decompose
