//===- KTOps.h - kt ops -----------------------------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTOPS_H
#define KILN_DIALECT_KT_IR_KTOPS_H

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTTypeInference.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTElementwiseOps.h.inc"
#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTCreationOps.h.inc"
#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTReductionOps.h.inc"
#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTNNOps.h.inc"
#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTNormOps.h.inc"
#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTShapeOps.h.inc"
#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTRefOps.h.inc"

#endif // KILN_DIALECT_KT_IR_KTOPS_H
