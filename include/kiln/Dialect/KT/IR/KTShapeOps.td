//===- KTShapeOps.td - kt Shape ops --------------------------*- tablegen -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTSHAPEOPS_TD
#define KILN_DIALECT_KT_IR_KTSHAPEOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

#endif // KILN_DIALECT_KT_IR_KTSHAPEOPS_TD
