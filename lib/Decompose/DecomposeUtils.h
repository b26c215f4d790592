//===- DecomposeUtils.h - Helpers for decompositions ------------*- C++ -*-===//
//
// Part of Kiln. Private to lib/Decompose: how decompositions attach to ops,
// and a small emitter of kt ops that keeps each decomposition close to its
// formula. Shares nothing with the interpreter or the lowerings.
//
// A decomposition of an op is a free function
//   FailureOr<SmallVector<Value>> decomposeFoo(FooOp op, Emitter &e);
// attached with `attachDecomposition<FooOp, decomposeFoo>(ctx)`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DECOMPOSE_DECOMPOSEUTILS_H
#define KILN_LIB_DECOMPOSE_DECOMPOSEUTILS_H

#include "kiln/Decompose/Decompose.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln::decompose {

using Values = llvm::SmallVector<mlir::Value>;

/// Emits kt ops at a builder's insertion point, at one location. Result types
/// are inferred by the ops. Generic builders do not fill default-valued
/// attributes: every attribute is passed.
class Emitter {
public:
  Emitter(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location getLoc() { return loc; }

  template <typename OpT>
  mlir::Value op(mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return OpT::create(b, loc, operands, attrs)->getResult(0);
  }
  mlir::NamedAttribute attr(llvm::StringRef name, mlir::Attribute a) {
    return b.getNamedAttr(name, a);
  }
  mlir::ArrayAttr i64s(llvm::ArrayRef<int64_t> v) {
    return b.getI64ArrayAttr(v);
  }

  // Pointwise (NumPy broadcasting).
  mlir::Value add(mlir::Value x, mlir::Value y) { return op<kt::AddOp>({x, y}); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return op<kt::SubOp>({x, y}); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return op<kt::MulOp>({x, y}); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return op<kt::DivOp>({x, y}); }
  mlir::Value maximum(mlir::Value x, mlir::Value y) {
    return op<kt::MaximumOp>({x, y});
  }
  mlir::Value neg(mlir::Value x) { return op<kt::NegOp>({x}); }
  mlir::Value abs(mlir::Value x) { return op<kt::AbsOp>({x}); }
  mlir::Value exp(mlir::Value x) { return op<kt::ExpOp>({x}); }
  mlir::Value log(mlir::Value x) { return op<kt::LogOp>({x}); }
  mlir::Value rsqrt(mlir::Value x) { return op<kt::RsqrtOp>({x}); }
  mlir::Value erf(mlir::Value x) { return op<kt::ErfOp>({x}); }
  mlir::Value tanh(mlir::Value x) { return op<kt::TanhOp>({x}); }
  mlir::Value sigmoid(mlir::Value x) { return op<kt::SigmoidOp>({x}); }
  mlir::Value ne(mlir::Value x, mlir::Value y) { return op<kt::NeOp>({x, y}); }
  mlir::Value lt(mlir::Value x, mlir::Value y) { return op<kt::LtOp>({x, y}); }
  mlir::Value gt(mlir::Value x, mlir::Value y) { return op<kt::GtOp>({x, y}); }
  mlir::Value where(mlir::Value c, mlir::Value x, mlir::Value y) {
    return op<kt::WhereOp>({c, x, y});
  }
  mlir::Value cast(mlir::Value x, mlir::Type elementType) {
    if (elementTypeOf(x) == elementType)
      return x;
    return op<kt::CastOp>({x},
                          {attr("dtype", mlir::TypeAttr::get(elementType))});
  }
  /// A rank-0 constant (kt.full) of element type `elementType`.
  mlir::Value scalar(double v, mlir::Type elementType);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalarLike(double v, mlir::Value like) {
    return scalar(v, elementTypeOf(like));
  }

  // Reductions over `dims` (std::nullopt: every dim).
  mlir::Value sum(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                  bool keepdim) {
    return reduce<kt::SumOp>(x, dims, keepdim);
  }
  mlir::Value mean(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                   bool keepdim) {
    return reduce<kt::MeanOp>(x, dims, keepdim);
  }
  mlir::Value amax(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                   bool keepdim) {
    return reduce<kt::AmaxOp>(x, dims, keepdim);
  }

  // Shapes and contractions.
  mlir::Value unsqueeze(mlir::Value x, int64_t dim) {
    return op<kt::UnsqueezeOp>({x}, {attr("dim", b.getI64IntegerAttr(dim))});
  }
  mlir::Value squeeze(mlir::Value x, llvm::ArrayRef<int64_t> dims) {
    return op<kt::SqueezeOp>({x}, {attr("dim", i64s(dims))});
  }
  mlir::Value transpose(mlir::Value x, int64_t d0, int64_t d1) {
    return op<kt::TransposeOp>({x}, {attr("dim0", b.getI64IntegerAttr(d0)),
                                     attr("dim1", b.getI64IntegerAttr(d1))});
  }
  mlir::Value matmul(mlir::Value x, mlir::Value y) {
    return op<kt::MatmulOp>({x, y});
  }
  mlir::Value gather(mlir::Value x, mlir::Value index, int64_t dim) {
    return op<kt::GatherOp>({x, index},
                            {attr("dim", b.getI64IntegerAttr(dim))});
  }
  mlir::Value embedding(mlir::Value table, mlir::Value indices) {
    return op<kt::EmbeddingOp>({table, indices});
  }
  /// arange(0, n) of element type `elementType` (n static).
  mlir::Value arange(int64_t n, mlir::Type elementType);

  /// The number of elements of `x` at `dims` (every dim when absent) as a
  /// rank-0 tensor of element type `elementType`: a constant when those dims
  /// are static, else read with tensor.dim.
  mlir::Value countAt(mlir::Value x,
                      std::optional<llvm::ArrayRef<int64_t>> dims,
                      mlir::Type elementType);

  /// Floats are computed in f32 for f16/bf16 operands (PyTorch's
  /// computation dtype), in their own type otherwise.
  mlir::Value upcast(mlir::Value x) {
    return isLowPrecision(elementTypeOf(x)) ? cast(x, b.getF32Type()) : x;
  }
  static bool isLowPrecision(mlir::Type t) { return t.isF16() || t.isBF16(); }

  static mlir::Type elementTypeOf(mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
  }
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getShape();
  }
  static int64_t rankOf(mlir::Value v) { return shapeOf(v).size(); }

private:
  template <typename OpT>
  mlir::Value reduce(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                     bool keepdim) {
    llvm::SmallVector<mlir::NamedAttribute> attrs{
        attr("keepdim", b.getBoolAttr(keepdim))};
    if (dims)
      attrs.push_back(attr("dim", i64s(*dims)));
    return op<OpT>({x}, attrs);
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
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
