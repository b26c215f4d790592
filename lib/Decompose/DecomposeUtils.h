//===- DecomposeUtils.h - Helpers for decompositions ------------*- C++ -*-===//
//
// Part of Kiln. Private to lib/Decompose: how decompositions attach to ops,
// and the emitter of kt ops (kt::KTBuilder plus extras) that keeps each
// decomposition close to its formula. Shares nothing with the interpreter or
// the lowerings.
//
// A decomposition of an op is a free function
//   FailureOr<SmallVector<Value>> decomposeFoo(FooOp op, Emitter &e);
// attached with `attachDecomposition<FooOp, decomposeFoo>(ctx)`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DECOMPOSE_DECOMPOSEUTILS_H
#define KILN_LIB_DECOMPOSE_DECOMPOSEUTILS_H

#include "kiln/Decompose/Decompose.h"
#include "kiln/Dialect/KT/IR/KTBuilder.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln::decompose {

using Values = llvm::SmallVector<mlir::Value>;

/// Emits kt ops at a builder's insertion point, at one location (the shared
/// kt::KTBuilder), plus what decompositions need on top. Its `cast` emits
/// nothing when `x` already has the element type.
class Emitter : public kt::KTBuilder {
public:
  using KTBuilder::KTBuilder;

  mlir::Value cast(mlir::Value x, mlir::Type elementType) {
    if (elementTypeOf(x) == elementType)
      return x;
    return KTBuilder::cast(x, elementType);
  }

  /// Floats are computed in f32 for f16/bf16 operands (PyTorch's
  /// computation dtype), in their own type otherwise.
  mlir::Value upcast(mlir::Value x) {
    return isLowPrecision(elementTypeOf(x)) ? cast(x, b.getF32Type()) : x;
  }
  static bool isLowPrecision(mlir::Type t) { return t.isF16() || t.isBF16(); }
};

/// The dims of a reduction attribute (std::nullopt when absent).
std::optional<llvm::SmallVector<int64_t>>
dimsOf(std::optional<mlir::ArrayAttr> dim);

/// The external model that runs `Fn` for the single-result op `OpT`.
template <typename OpT, auto Fn>
struct DecompositionModel
    : public DecomposableOpInterface::ExternalModel<DecompositionModel<OpT, Fn>,
                                                    OpT> {
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  decompose(mlir::Operation *op, mlir::OpBuilder &b) const {
    Emitter e(b, op->getLoc());
    return Fn(mlir::cast<OpT>(op), e);
  }
};

template <typename OpT, auto Fn>
void attachDecomposition(mlir::MLIRContext *ctx) {
  OpT::template attachInterface<DecompositionModel<OpT, Fn>>(*ctx);
}

// Registration hooks, one per family (called by Registration.cpp).
void registerNormDecompositions(mlir::MLIRContext *ctx);
void registerLossDecompositions(mlir::MLIRContext *ctx);
void registerAttentionDecompositions(mlir::MLIRContext *ctx);
void registerActivationDecompositions(mlir::MLIRContext *ctx);
void registerReductionDecompositions(mlir::MLIRContext *ctx);
void registerLinearDecompositions(mlir::MLIRContext *ctx);

} // namespace kiln::decompose

#endif // KILN_LIB_DECOMPOSE_DECOMPOSEUTILS_H
