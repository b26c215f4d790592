//===- KTDialect.cpp - The kt dialect -------------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Dialect/KT/IR/KTFusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::kt;

#include "kiln/Dialect/KT/IR/KTDialect.cpp.inc"
#include "kiln/Dialect/KT/IR/KTEnums.cpp.inc"
#include "kiln/Dialect/KT/IR/KTInterfaces.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/KT/IR/KTAttrs.cpp.inc"
// Type storage, accessors and the dialect's type parser/printer (the custom
// parts of !kt.ref are in KTTypes.cpp).
#define GET_TYPEDEF_CLASSES
#include "kiln/Dialect/KT/IR/KTTypes.cpp.inc"

void KTDialect::initialize() {
  // One list per op family (each family is generated separately).
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTElementwiseOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTCreationOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTReductionOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTNNOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTNormOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTShapeOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTRefOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KT/IR/KTFusionOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "kiln/Dialect/KT/IR/KTTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/KT/IR/KTAttrs.cpp.inc"
      >();
}

Operation *KTDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<DenseElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

LogicalResult kiln::kt::verifyKnownAttributes(Operation *op) {
  std::optional<RegisteredOperationName> info = op->getRegisteredInfo();
  if (!info)
    return success();
  ArrayRef<StringAttr> known = info->getAttributeNames();
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name.contains('.') || llvm::is_contained(known, attr.getName()))
      continue;
    if (name == SymbolTable::getVisibilityAttrName() &&
        isa<SymbolOpInterface>(op))
      continue;
    // The op's own, without the segment sizes ODS keeps for variadic
    // operands (not written by hand).
    SmallVector<StringRef> own;
    for (StringAttr a : known)
      if (a.getValue() != "operandSegmentSizes" &&
          a.getValue() != "resultSegmentSizes")
        own.push_back(a.getValue());
    InFlightDiagnostic diag = op->emitOpError("has no attribute '")
                              << name << "' (attributes: ";
    if (own.empty())
      diag << "none";
    llvm::interleaveComma(own, diag);
    return diag << "; an annotation needs a dialect prefix, as in "
                   "'kiln.note')";
  }
  return success();
}

StringRef kiln::kt::stringifyOpKind(OpKind kind) {
  switch (kind) {
  case OpKind::Pointwise:
    return "pointwise";
  case OpKind::Reduction:
    return "reduction";
  case OpKind::Contraction:
    return "contraction";
  case OpKind::Shape:
    return "shape";
  case OpKind::Creation:
    return "creation";
  case OpKind::Composite:
    return "composite";
  }
  llvm_unreachable("unknown op kind");
}

OpKind kiln::kt::getOpKindFromTraits(Operation *op) {
  if (op->hasTrait<PointwiseOpTrait>())
    return OpKind::Pointwise;
  if (op->hasTrait<ReductionOpTrait>())
    return OpKind::Reduction;
  if (op->hasTrait<ContractionOpTrait>())
    return OpKind::Contraction;
  if (op->hasTrait<ShapeOpTrait>())
    return OpKind::Shape;
  if (op->hasTrait<CreationOpTrait>())
    return OpKind::Creation;
  return OpKind::Composite;
}
