//===- KTTypes.cpp - Types of the kt dialect -------------------------------===//
//
// Part of Kiln. `!kt.ref<4x?xf32>`: parsing, printing, verification.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTTypeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace kiln::kt;

/// `<` dims `x` element-type `>`, the body of a ranked tensor type.
Type RefType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return RefType::getChecked([&] { return parser.emitError(loc); },
                             parser.getContext(), ArrayRef<int64_t>(shape),
                             elementType);
}

void RefType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape()) {
    if (ShapedType::isDynamic(d))
      printer << "?";
    else
      printer << d;
    printer << "x";
  }
  printer << getElementType() << ">";
}

LogicalResult RefType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType) {
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) && d < 0)
      return emitError() << "!kt.ref dim size " << d
                         << " is invalid (expected >= 0 or ?)";
  if (!elementType || !isKTElementType(elementType))
    return emitError() << "!kt.ref element type " << elementType
                       << " is not a kt element type ("
                       << kKTElementTypesText << ")";
  return success();
}
