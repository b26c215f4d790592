//===- KTFusionOps.h - kt.fusion and kt.yield -------------------*- C++ -*-===//
//
// Part of Kiln. The fusion-group ops (KTFusionOps.td), in their own header so
// that only the code that needs them (fusion, kernel formation, the
// interpreter model, the dialect) includes them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTFUSIONOPS_H
#define KILN_DIALECT_KT_IR_KTFUSIONOPS_H

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Interfaces/ControlFlowInterfaces.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTFusionOps.h.inc"

#endif // KILN_DIALECT_KT_IR_KTFUSIONOPS_H
