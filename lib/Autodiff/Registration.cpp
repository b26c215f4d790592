//===- Registration.cpp - Attach vector-Jacobian rules to kt ops ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "kiln/Autodiff/VJPInterface.cpp.inc"

void kiln::autodiff::registerVJPInterfaces(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *ctx, kt::KTDialect *) {
    registerElementwiseVJPs(ctx);
    registerReductionVJPs(ctx);
    registerNNVJPs(ctx);
    registerNormVJPs(ctx);
    registerShapeVJPs(ctx);
    registerCreationVJPs(ctx);
    registerConvVJPs(ctx);
  });
}
