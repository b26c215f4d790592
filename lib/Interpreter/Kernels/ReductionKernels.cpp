//===- ReductionKernels.cpp - Interpreter kernels of Reduction ops ----------------===//
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

void registerReductionKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {});
}

} // namespace kiln::interp
