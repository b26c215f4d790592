//===- NormKernels.cpp - Interpreter kernels of Norm ops ----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {} // namespace

void registerNormKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {});
}

} // namespace kiln::interp
