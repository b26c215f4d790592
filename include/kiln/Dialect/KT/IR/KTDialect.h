//===- KTDialect.h - The kt dialect -----------------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTDIALECT_H
#define KILN_DIALECT_KT_IR_KTDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "kiln/Dialect/KT/IR/KTDialect.h.inc"
#include "kiln/Dialect/KT/IR/KTEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/KT/IR/KTAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "kiln/Dialect/KT/IR/KTTypes.h.inc"

namespace kiln::kt {

/// The kind of a kt op, from its kind trait (see KTInterfaces.td).
enum class OpKind { Pointwise, Reduction, Contraction, Shape, Creation, Composite };

/// Returns the name of `kind` ("pointwise", ...).
llvm::StringRef stringifyOpKind(OpKind kind);

/// Reads the kind trait of `op`; every kt op has exactly one.
OpKind getOpKindFromTraits(mlir::Operation *op);

// Kind traits; each kt op carries exactly one (KTBase.td).
template <typename ConcreteType>
class PointwiseOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, PointwiseOpTrait> {};
template <typename ConcreteType>
class ReductionOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, ReductionOpTrait> {};
template <typename ConcreteType>
class ContractionOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, ContractionOpTrait> {};
template <typename ConcreteType>
class ShapeOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, ShapeOpTrait> {};
template <typename ConcreteType>
class CreationOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, CreationOpTrait> {};
template <typename ConcreteType>
class CompositeOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, CompositeOpTrait> {};

/// Verifies that `op` carries only attributes it defines: an attribute
/// whose name has no dialect prefix (no '.') must be one of the op's own
/// (`getAttributeNames()`), so a misspelled or foreign attribute
/// (`kt.round {decimals = 2}`) is an error naming it and listing the op's
/// attributes instead of being ignored. Attributes with a prefix
/// (`kiln.kernel`, `kg.source_fn`) are discardable annotations and allowed;
/// so is `sym_visibility` on symbols.
mlir::LogicalResult verifyKnownAttributes(mlir::Operation *op);

/// Every kt and kg op carries this trait (KT_Op / KG_Op and the other base
/// classes): it runs verifyKnownAttributes.
template <typename ConcreteType>
class KnownAttributesOnly
    : public mlir::OpTrait::TraitBase<ConcreteType, KnownAttributesOnly> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyKnownAttributes(op);
  }
};

} // namespace kiln::kt

#include "kiln/Dialect/KT/IR/KTInterfaces.h.inc"

#endif // KILN_DIALECT_KT_IR_KTDIALECT_H
