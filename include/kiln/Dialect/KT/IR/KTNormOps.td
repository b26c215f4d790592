//===- KTNormOps.td - kt Norm ops --------------------------*- tablegen -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTNORMOPS_TD
#define KILN_DIALECT_KT_IR_KTNORMOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

#endif // KILN_DIALECT_KT_IR_KTNORMOPS_TD
