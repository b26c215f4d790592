//===- VJPUtils.h - Helpers for vector-Jacobian rules -----------*- C++ -*-===//
//
// Part of Kiln. Private to lib/Autodiff: how rules attach to ops, and a small
// emitter of kt ops that keeps each rule close to its formula.
//
// A rule of a single-result op is a free function
//   LogicalResult vjpFoo(FooOp op, GradEmitter &e, Value grad,
//                        SmallVectorImpl<Value> &operandGrads);
// attached with `attachVJP<FooOp, vjpFoo>(ctx)`. `grad` is never null.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_AUTODIFF_VJPUTILS_H
#define KILN_LIB_AUTODIFF_VJPUTILS_H

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Autodiff/VJPInterface.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln::autodiff {

/// Emits kt ops at a builder's insertion point, at one location. Result types
/// are inferred by the ops.
class GradEmitter {
public:
  GradEmitter(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

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
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return op<kt::AddOp>({x, y});
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return op<kt::SubOp>({x, y});
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return op<kt::MulOp>({x, y});
  }
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return op<kt::DivOp>({x, y});
  }
  mlir::Value neg(mlir::Value x) { return op<kt::NegOp>({x}); }
  mlir::Value exp(mlir::Value x) { return op<kt::ExpOp>({x}); }
  mlir::Value log(mlir::Value x) { return op<kt::LogOp>({x}); }
  mlir::Value eq(mlir::Value x, mlir::Value y) { return op<kt::EqOp>({x, y}); }
  mlir::Value ne(mlir::Value x, mlir::Value y) { return op<kt::NeOp>({x, y}); }
  mlir::Value gt(mlir::Value x, mlir::Value y) { return op<kt::GtOp>({x, y}); }
  mlir::Value ge(mlir::Value x, mlir::Value y) { return op<kt::GeOp>({x, y}); }
  mlir::Value lt(mlir::Value x, mlir::Value y) { return op<kt::LtOp>({x, y}); }
  mlir::Value le(mlir::Value x, mlir::Value y) { return op<kt::LeOp>({x, y}); }
  mlir::Value where(mlir::Value c, mlir::Value x, mlir::Value y) {
    return op<kt::WhereOp>({c, x, y});
  }
  mlir::Value cast(mlir::Value x, mlir::Type elementType) {
    return op<kt::CastOp>({x},
                          {attr("dtype", mlir::TypeAttr::get(elementType))});
  }
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalar(double v, mlir::Value like) {
    return buildScalar(b, loc, v, elementType(like));
  }
  /// x * v for a constant v.
  mlir::Value scale(mlir::Value x, double v) { return mul(x, scalar(v, x)); }
  mlir::Value zerosLike(mlir::Value like) {
    return buildFullLike(b, loc, like, 0);
  }
  mlir::Value onesLike(mlir::Value like) {
    return buildFullLike(b, loc, like, 1);
  }
  /// `g` where `c` holds, else 0 (broadcasting a rank-0 zero).
  mlir::Value maskGrad(mlir::Value c, mlir::Value g) {
    return where(c, g, scalar(0, g));
  }

  // Reductions and shapes. Generic builders do not fill default-valued
  // attributes: every attribute is passed.
  mlir::Value sum(mlir::Value x, llvm::ArrayRef<int64_t> dims, bool keepdim) {
    return op<kt::SumOp>({x}, {attr("dim", i64s(dims)),
                               attr("keepdim", b.getBoolAttr(keepdim))});
  }
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    return op<kt::ReshapeOp>({x}, {attr("shape", i64s(shape))});
  }
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
  mlir::Value permute(mlir::Value x, llvm::ArrayRef<int64_t> dims) {
    return op<kt::PermuteOp>({x}, {attr("dims", i64s(dims))});
  }
  mlir::Value matmul(mlir::Value x, mlir::Value y) {
    return op<kt::MatmulOp>({x, y});
  }
  mlir::Value pad(mlir::Value x, llvm::ArrayRef<int64_t> pads) {
    return op<kt::PadOp>(
        {x}, {attr("pad", i64s(pads)), attr("value", b.getF64FloatAttr(0.0))});
  }
  /// Pads (or, negative, crops) dim `dim` of `x` by `lo` before and `hi`
  /// after, with zeros.
  mlir::Value padDim(mlir::Value x, int64_t dim, int64_t lo, int64_t hi);
  /// `x` with new dims of size 1 inserted so that it has `rank` dims, at the
  /// (normalized) positions `dims` of the result (reverses a reduction
  /// without keepdim).
  mlir::Value unsqueezeDims(mlir::Value x, llvm::ArrayRef<int64_t> dims);
  /// `x` (with keepdim shape) broadcast to the shape of `like`.
  mlir::Value expandLike(mlir::Value x, mlir::Value like);
  /// One-hot over the last dim: `(unsqueeze(index, -1) == arange(n))` as
  /// `elementType` (shape index.shape + [n]).
  mlir::Value oneHot(mlir::Value index, int64_t n, mlir::Type elementType);
  /// unbroadcast(g, type)
  mlir::Value unbroadcastTo(mlir::Value g, mlir::Type t) {
    return unbroadcast(b, loc, g, t);
  }

  static mlir::Type elementType(mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
  }
  static llvm::ArrayRef<int64_t> shape(mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getShape();
  }
  static int64_t rank(mlir::Value v) { return shape(v).size(); }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// True for a ranked tensor (or scalar) of a float element type.
bool isFloatValue(mlir::Value v);

/// Dims of a reduction op over `rank` dims (an absent list is all dims),
/// normalized and sorted.
llvm::SmallVector<int64_t> reductionDims(std::optional<mlir::ArrayAttr> dim,
                                         int64_t rank);

/// Number of elements of `shape` at `dims`; -1 when one is `?`.
int64_t countAt(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> dims);

/// The external model that runs `Fn` for the single-result op `OpT`.
template <typename OpT, auto Fn>
struct VJPModel
    : public DifferentiableOpInterface::ExternalModel<VJPModel<OpT, Fn>, OpT> {
  llvm::LogicalResult
  buildVJP(mlir::Operation *op, mlir::OpBuilder &b,
           llvm::ArrayRef<mlir::Value> resultGrads,
           llvm::SmallVectorImpl<mlir::Value> &operandGrads) const {
    operandGrads.assign(op->getNumOperands(), mlir::Value());
    if (resultGrads.empty() || !resultGrads[0])
      return mlir::success();
    GradEmitter e(b, op->getLoc());
    return Fn(mlir::cast<OpT>(op), e, resultGrads[0], operandGrads);
  }
};

template <typename OpT, auto Fn> void attachVJP(mlir::MLIRContext *ctx) {
  OpT::template attachInterface<VJPModel<OpT, Fn>>(*ctx);
}

/// The rule of an op without differentiable operands, or whose derivative is
/// zero almost everywhere (floor, sign, comparisons, ...): no gradient.
template <typename OpT>
llvm::LogicalResult vjpNone(OpT, GradEmitter &, mlir::Value,
                            llvm::SmallVectorImpl<mlir::Value> &) {
  return mlir::success();
}

// Registration hooks, one per family (called by Registration.cpp).
void registerElementwiseVJPs(mlir::MLIRContext *ctx);
void registerReductionVJPs(mlir::MLIRContext *ctx);
void registerNNVJPs(mlir::MLIRContext *ctx);
void registerNormVJPs(mlir::MLIRContext *ctx);
void registerShapeVJPs(mlir::MLIRContext *ctx);
void registerCreationVJPs(mlir::MLIRContext *ctx);
void registerConvVJPs(mlir::MLIRContext *ctx);

} // namespace kiln::autodiff

#endif // KILN_LIB_AUTODIFF_VJPUTILS_H
