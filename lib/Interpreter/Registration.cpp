//===- Registration.cpp - Attach interpreter kernels to ops ---------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "Kernels/KernelUtils.h"

void kiln::interp::registerInterpreterInterfaces(mlir::DialectRegistry &registry) {
  registerElementwiseKernels(registry);
  registerCreationKernels(registry);
  registerReductionKernels(registry);
  registerNNKernels(registry);
  registerNormKernels(registry);
  registerShapeKernels(registry);
  registerArithKernels(registry);
  registerRefKernels(registry);
  registerFusionKernels(registry);
}
