//===- KTInterfaces.td - Interfaces of kt ops --------------*- tablegen -*-===//
//
// Part of Kiln. Per-op knowledge that passes need lives in op interfaces, so a
// pass extends the dialect instead of switching over it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTINTERFACES_TD
#define KILN_DIALECT_KT_IR_KTINTERFACES_TD

include "mlir/IR/OpBase.td"

def KT_OpKindInterface : OpInterface<"OpKindInterface"> {
  let cppNamespace = "::kiln::kt";
  let description = [{
    Classifies a kt op for scheduling and fusion: pointwise (elementwise with
    broadcasting), reduction, contraction (matmul, conv), shape (data
    movement only), creation (no tensor data read), or composite (an op a
    decomposition expands into primitives, e.g. softmax). The kind comes from
    the op's kind trait.
  }];
  let methods = [
    InterfaceMethod<"Returns the kind of this op.", "::kiln::kt::OpKind",
      "getOpKind", (ins), [{}], [{
        return ::kiln::kt::getOpKindFromTraits($_op.getOperation());
      }]>,
  ];
}

#endif // KILN_DIALECT_KT_IR_KTINTERFACES_TD
