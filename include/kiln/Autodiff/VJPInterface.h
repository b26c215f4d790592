//===- VJPInterface.h - Vector-Jacobian rules of kt ops ---------*- C++ -*-===//
//
// Part of Kiln. The DifferentiableOpInterface (see VJPInterface.td) and the
// registration of its kt rules.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_AUTODIFF_VJPINTERFACE_H
#define KILN_AUTODIFF_VJPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "kiln/Autodiff/VJPInterface.h.inc"

namespace kiln::autodiff {

/// Attaches the vector-Jacobian rules of kt ops (one file per op family in
/// lib/Autodiff). Call before creating the context (or append to its
/// registry).
void registerVJPInterfaces(mlir::DialectRegistry &registry);

} // namespace kiln::autodiff

#endif // KILN_AUTODIFF_VJPINTERFACE_H
