//===- KTBuilder.cpp - A small emitter of kt ops --------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTBuilder.h"

using namespace mlir;

namespace kiln::kt {

Value KTBuilder::scalar(double v, Type elementType) {
  return FullOp::create(b, loc, ValueRange(), b.getI64ArrayAttr({}),
                        b.getF64FloatAttr(v), TypeAttr::get(elementType))
      .getResult();
}

Value KTBuilder::arange(int64_t n, Type elementType) {
  return op<ArangeOp>({}, {attr("start", b.getF64FloatAttr(0.0)),
                           attr("end", b.getF64FloatAttr((double)n)),
                           attr("step", b.getF64FloatAttr(1.0)),
                           attr("dtype", TypeAttr::get(elementType))});
}

} // namespace kiln::kt
