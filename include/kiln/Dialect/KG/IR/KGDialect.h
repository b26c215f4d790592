//===- KGDialect.h - The kg dialect -----------------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KG_IR_KGDIALECT_H
#define KILN_DIALECT_KG_IR_KGDIALECT_H

#include "mlir/IR/Dialect.h"

#include "kiln/Dialect/KG/IR/KGDialect.h.inc"

#endif // KILN_DIALECT_KG_IR_KGDIALECT_H
