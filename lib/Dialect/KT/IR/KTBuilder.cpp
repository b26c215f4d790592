//===- KTBuilder.cpp - A small emitter of kt ops --------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

Value KTBuilder::countAt(Value x, std::optional<ArrayRef<int64_t>> dims,
                         Type elementType) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> ds;
  if (dims && !dims->empty()) {
    for (int64_t d : *dims)
      ds.push_back(wrapDim(d, shape.size()));
  } else {
    for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
      ds.push_back(d);
  }
  int64_t staticCount = 1;
  Value dynamicCount;
  for (int64_t d : ds) {
    // A rank-0 operand reduced over [0] counts one element.
    if (shape.empty())
      continue;
    if (!ShapedType::isDynamic(shape[d])) {
      staticCount *= shape[d];
      continue;
    }
    Value size = tensor::DimOp::create(b, loc, x, d);
    size = arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
    dynamicCount =
        dynamicCount ? arith::MulIOp::create(b, loc, dynamicCount, size)
                     : size;
  }
  if (!dynamicCount)
    return scalar((double)staticCount, elementType);
  Value t = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, b.getI64Type()),
      ValueRange{dynamicCount});
  if (elementType != b.getI64Type())
    t = cast(t, elementType);
  if (staticCount != 1)
    t = mul(t, scalar((double)staticCount, elementType));
  return t;
}

} // namespace kiln::kt
