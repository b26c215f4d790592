//===- KTNormOps.cpp - kt Norm ops ---------------------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTNormOps.td.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln::kt;

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTNormOps.cpp.inc"
