//===- KGOps.h - kg ops -----------------------------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KG_IR_KGOPS_H
#define KILN_DIALECT_KG_IR_KGOPS_H

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <variant>

#define GET_OP_CLASSES
#include "kiln/Dialect/KG/IR/KGOps.h.inc"

namespace kiln::kg {

/// Name of the argument attribute holding an argument's source name.
inline constexpr llvm::StringLiteral kArgNameAttr = "kg.name";
/// Unit attribute marking a func.func as a graph function (outlined graph).
inline constexpr llvm::StringLiteral kGraphFunctionAttr = "kg.graph_function";

/// A parsed `kg.guard_shape_relation`: `lhs pred rhs`, each side a symbol or
/// an integer.
struct ShapeRelation {
  enum class Pred { EQ, NE, LT, LE, GT, GE };
  using Term = std::variant<std::string, int64_t>;
  Term lhs, rhs;
  Pred pred;
  /// Evaluates the predicate on concrete values.
  bool holds(int64_t a, int64_t b) const;
  static llvm::StringRef predSpelling(Pred p);
};

/// Parses "s0 >= 2"; on failure sets `error`.
std::optional<ShapeRelation> parseShapeRelation(llvm::StringRef text,
                                                std::string &error);

/// The tensor type a guard or kg.grad sees for a value of type `type`: a
/// ranked tensor type itself, the value type of a `!kt.ref`, else null.
mlir::RankedTensorType getGuardedTensorType(mlir::Type type);

/// True if `op` may appear inside a graph (not a host-only op).
bool isAllowedInGraph(mlir::Operation *op);

} // namespace kiln::kg

#endif // KILN_DIALECT_KG_IR_KGOPS_H
