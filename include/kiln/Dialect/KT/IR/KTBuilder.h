//===- KTBuilder.h - A small emitter of kt ops ------------------*- C++ -*-===//
//
// Part of Kiln. Builds kt ops at a builder's insertion point, at one
// location, so that code writing kt formulas (vector-Jacobian rules in
// lib/Autodiff, decompositions in lib/Decompose) stays close to the formula.
// Result types are inferred by the ops. Generic builders do not fill
// default-valued attributes: every attribute is passed.
//
// Users that need more (autodiff's GradEmitter, decompose's Emitter) derive
// from it. Not for the interpreter or the lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTBUILDER_H
#define KILN_DIALECT_KT_IR_KTBUILDER_H

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace kiln::kt {

class KTBuilder {
public:
  KTBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location getLoc() { return loc; }

  /// Creates `OpT` from operands and (inherent) attributes.
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
  mlir::Value add(mlir::Value x, mlir::Value y) { return op<AddOp>({x, y}); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return op<SubOp>({x, y}); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return op<MulOp>({x, y}); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return op<DivOp>({x, y}); }
  mlir::Value maximum(mlir::Value x, mlir::Value y) {
    return op<MaximumOp>({x, y});
  }
  mlir::Value neg(mlir::Value x) { return op<NegOp>({x}); }
  mlir::Value abs(mlir::Value x) { return op<AbsOp>({x}); }
  mlir::Value exp(mlir::Value x) { return op<ExpOp>({x}); }
  mlir::Value log(mlir::Value x) { return op<LogOp>({x}); }
  mlir::Value rsqrt(mlir::Value x) { return op<RsqrtOp>({x}); }
  mlir::Value erf(mlir::Value x) { return op<ErfOp>({x}); }
  mlir::Value tanh(mlir::Value x) { return op<TanhOp>({x}); }
  mlir::Value sigmoid(mlir::Value x) { return op<SigmoidOp>({x}); }
  mlir::Value eq(mlir::Value x, mlir::Value y) { return op<EqOp>({x, y}); }
  mlir::Value ne(mlir::Value x, mlir::Value y) { return op<NeOp>({x, y}); }
  mlir::Value gt(mlir::Value x, mlir::Value y) { return op<GtOp>({x, y}); }
  mlir::Value ge(mlir::Value x, mlir::Value y) { return op<GeOp>({x, y}); }
  mlir::Value lt(mlir::Value x, mlir::Value y) { return op<LtOp>({x, y}); }
  mlir::Value le(mlir::Value x, mlir::Value y) { return op<LeOp>({x, y}); }
  mlir::Value where(mlir::Value c, mlir::Value x, mlir::Value y) {
    return op<WhereOp>({c, x, y});
  }
  /// kt.cast to `elementType` (always emitted, even to the same type).
  mlir::Value cast(mlir::Value x, mlir::Type elementType) {
    return op<CastOp>({x}, {attr("dtype", mlir::TypeAttr::get(elementType))});
  }
  /// A rank-0 constant (kt.full) of element type `elementType`.
  mlir::Value scalar(double v, mlir::Type elementType);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalarLike(double v, mlir::Value like) {
    return scalar(v, elementTypeOf(like));
  }
  /// arange(0, n) of element type `elementType` (n static).
  mlir::Value arange(int64_t n, mlir::Type elementType);
  /// The number of elements of `x` at `dims` (every dim when absent) as a
  /// rank-0 tensor of element type `elementType`: a constant when those dims
  /// are static, else computed from tensor.dim of the `?` dims.
  mlir::Value countAt(mlir::Value x,
                      std::optional<llvm::ArrayRef<int64_t>> dims,
                      mlir::Type elementType);

  // Reductions over `dims` (std::nullopt: the attribute is left out, every
  // dim).
  mlir::Value sum(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                  bool keepdim) {
    return reduce<SumOp>(x, dims, keepdim);
  }
  mlir::Value mean(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                   bool keepdim) {
    return reduce<MeanOp>(x, dims, keepdim);
  }
  mlir::Value amax(mlir::Value x, std::optional<llvm::ArrayRef<int64_t>> dims,
                   bool keepdim) {
    return reduce<AmaxOp>(x, dims, keepdim);
  }

  // Shapes, indexing and contractions.
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    return op<ReshapeOp>({x}, {attr("shape", i64s(shape))});
  }
  /// `x` reshaped to the shape of the tensor `like`: its static dims as
  /// numbers, one `?` dim as the inferred -1, several `?` dims as -2 entries
  /// sized by `tensor.dim` of `like`.
  mlir::Value reshapeLike(mlir::Value x, mlir::Value like) {
    auto t = mlir::cast<mlir::RankedTensorType>(like.getType());
    int64_t numDyn = t.getNumDynamicDims();
    llvm::SmallVector<int64_t> shape(t.getShape());
    llvm::SmallVector<mlir::Value> operands{x};
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (!mlir::ShapedType::isDynamic(d))
        continue;
      if (numDyn == 1) {
        d = -1;
        continue;
      }
      d = -2;
      operands.push_back(mlir::tensor::DimOp::create(b, loc, like, i));
    }
    return op<ReshapeOp>(operands, {attr("shape", i64s(shape))});
  }
  mlir::Value unsqueeze(mlir::Value x, int64_t dim) {
    return op<UnsqueezeOp>({x}, {attr("dim", b.getI64IntegerAttr(dim))});
  }
  mlir::Value squeeze(mlir::Value x, llvm::ArrayRef<int64_t> dims) {
    return op<SqueezeOp>({x}, {attr("dim", i64s(dims))});
  }
  mlir::Value transpose(mlir::Value x, int64_t d0, int64_t d1) {
    return op<TransposeOp>({x}, {attr("dim0", b.getI64IntegerAttr(d0)),
                                 attr("dim1", b.getI64IntegerAttr(d1))});
  }
  mlir::Value permute(mlir::Value x, llvm::ArrayRef<int64_t> dims) {
    return op<PermuteOp>({x}, {attr("dims", i64s(dims))});
  }
  /// kt.pad with zeros (`pads` lists pairs from the last dim).
  mlir::Value pad(mlir::Value x, llvm::ArrayRef<int64_t> pads) {
    return op<PadOp>(
        {x}, {attr("pad", i64s(pads)), attr("value", b.getF64FloatAttr(0.0))});
  }
  mlir::Value matmul(mlir::Value x, mlir::Value y) {
    return op<MatmulOp>({x, y});
  }
  mlir::Value gather(mlir::Value x, mlir::Value index, int64_t dim) {
    return op<GatherOp>({x, index}, {attr("dim", b.getI64IntegerAttr(dim))});
  }
  mlir::Value embedding(mlir::Value table, mlir::Value indices) {
    return op<EmbeddingOp>({table, indices});
  }

  static mlir::Type elementTypeOf(mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
  }
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getShape();
  }
  static int64_t rankOf(mlir::Value v) { return shapeOf(v).size(); }

protected:
  mlir::OpBuilder &b;
  mlir::Location loc;

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
};

} // namespace kiln::kt

#endif // KILN_DIALECT_KT_IR_KTBUILDER_H
