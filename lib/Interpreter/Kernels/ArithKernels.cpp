//===- ArithKernels.cpp - Interpreter kernels of arith and tensor ops -----===//
//
// Part of Kiln. Host scalars are rank-0 tensors; `index` is i64. Covers the
// arith ops that appear in host code and shape computations, and the tensor
// ops Kiln emits (dim, extract, from_elements, cast, empty, splat).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

namespace kiln::interp {

FailureOr<Tensor> tensorFromElements(Operation *op, ElementsAttr attr);

namespace {


/// Elementwise over (equal-shape) operands: arith ops on tensors or scalars.
template <typename F>
LogicalResult mapInts(Operation *op, ArrayRef<Tensor> operands,
                      SmallVectorImpl<Tensor> &results, F f) {
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), operands[0].shape())))
    return failure();
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setI(i, f(operands[0].getI(i), operands[1].getI(i)));
  results.push_back(out);
  return success();
}

template <typename F>
LogicalResult mapFloats(Operation *op, ArrayRef<Tensor> operands,
                        SmallVectorImpl<Tensor> &results, F f) {
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), operands[0].shape())))
    return failure();
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setF(i, f(operands[0].getF(i), operands.size() > 1 ? operands[1].getF(i) : 0.0));
  results.push_back(out);
  return success();
}

LogicalResult checkDivisor(Operation *op, const Tensor &d) {
  for (int64_t i = 0; i < d.numel(); ++i)
    if (d.getI(i) == 0)
      return op->emitError("integer division by zero");
  return success();
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

#define INT_BINARY(NAME, OPT, EXPR)                                            \
  LogicalResult NAME(OPT op, ArrayRef<Tensor> operands,                        \
                     SmallVectorImpl<Tensor> &results) {                       \
    return mapInts(op, operands, results,                                      \
                   [](int64_t a, int64_t b) -> int64_t { return EXPR; });      \
  }
#define FLOAT_BINARY(NAME, OPT, EXPR)                                          \
  LogicalResult NAME(OPT op, ArrayRef<Tensor> operands,                        \
                     SmallVectorImpl<Tensor> &results) {                       \
    return mapFloats(op, operands, results,                                    \
                     [](double a, double b) -> double { return EXPR; });       \
  }

INT_BINARY(addi, arith::AddIOp, (int64_t)((uint64_t)a + (uint64_t)b))
INT_BINARY(subi, arith::SubIOp, (int64_t)((uint64_t)a - (uint64_t)b))
INT_BINARY(muli, arith::MulIOp, (int64_t)((uint64_t)a * (uint64_t)b))
INT_BINARY(maxsi, arith::MaxSIOp, std::max(a, b))
INT_BINARY(minsi, arith::MinSIOp, std::min(a, b))
INT_BINARY(andi, arith::AndIOp, a &b)
INT_BINARY(ori, arith::OrIOp, a | b)
INT_BINARY(xori, arith::XOrIOp, a ^ b)
FLOAT_BINARY(addf, arith::AddFOp, a + b)
FLOAT_BINARY(subf, arith::SubFOp, a - b)
FLOAT_BINARY(mulf, arith::MulFOp, a *b)
FLOAT_BINARY(divf, arith::DivFOp, a / b)
FLOAT_BINARY(negf, arith::NegFOp, -a)
FLOAT_BINARY(maximumf, arith::MaximumFOp, ieeeMaximum(a, b))
FLOAT_BINARY(minimumf, arith::MinimumFOp, ieeeMinimum(a, b))

LogicalResult divsi(arith::DivSIOp op, ArrayRef<Tensor> operands,
                    SmallVectorImpl<Tensor> &results) {
  if (failed(checkDivisor(op, operands[1])))
    return failure();
  return mapInts(op, operands, results, [](int64_t a, int64_t b) { return a / b; });
}
LogicalResult remsi(arith::RemSIOp op, ArrayRef<Tensor> operands,
                    SmallVectorImpl<Tensor> &results) {
  if (failed(checkDivisor(op, operands[1])))
    return failure();
  return mapInts(op, operands, results, [](int64_t a, int64_t b) { return a % b; });
}
LogicalResult floordivsi(arith::FloorDivSIOp op, ArrayRef<Tensor> operands,
                         SmallVectorImpl<Tensor> &results) {
  if (failed(checkDivisor(op, operands[1])))
    return failure();
  return mapInts(op, operands, results, floorDiv);
}
LogicalResult ceildivsi(arith::CeilDivSIOp op, ArrayRef<Tensor> operands,
                        SmallVectorImpl<Tensor> &results) {
  if (failed(checkDivisor(op, operands[1])))
    return failure();
  return mapInts(op, operands, results,
                 [](int64_t a, int64_t b) { return -floorDiv(-a, b); });
}

LogicalResult constant(arith::ConstantOp op, ArrayRef<Tensor>,
                       SmallVectorImpl<Tensor> &results) {
  Attribute v = op.getValue();
  if (auto e = dyn_cast<ElementsAttr>(v)) {
    FailureOr<Tensor> t = tensorFromElements(op, e);
    if (failed(t))
      return failure();
    results.push_back(*t);
    return success();
  }
  DType dt = resultDType(op);
  if (auto f = dyn_cast<FloatAttr>(v))
    results.push_back(Tensor::scalar(dt, f.getValueAsDouble()));
  else if (auto i = dyn_cast<IntegerAttr>(v))
    results.push_back(Tensor::scalarInt(
        dt, dt == DType::I1 ? (int64_t)i.getValue().getZExtValue()
                            : i.getValue().getSExtValue()));
  else
    return op.emitError("unsupported constant ") << v;
  return success();
}

bool compareInts(arith::CmpIPredicate p, int64_t a, int64_t b) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return (uint64_t)a < (uint64_t)b;
  case P::ule:
    return (uint64_t)a <= (uint64_t)b;
  case P::ugt:
    return (uint64_t)a > (uint64_t)b;
  case P::uge:
    return (uint64_t)a >= (uint64_t)b;
  }
  return false;
}

LogicalResult cmpi(arith::CmpIOp op, ArrayRef<Tensor> operands,
                   SmallVectorImpl<Tensor> &results) {
  auto p = op.getPredicate();
  Tensor out;
  if (failed(allocTensor(op, out, DType::I1, operands[0].shape())))
    return failure();
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setI(i, compareInts(p, operands[0].getI(i), operands[1].getI(i)));
  results.push_back(out);
  return success();
}

bool compareFloats(arith::CmpFPredicate p, double a, double b) {
  using P = arith::CmpFPredicate;
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::AlwaysTrue:
    return true;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  }
  return false;
}

LogicalResult cmpf(arith::CmpFOp op, ArrayRef<Tensor> operands,
                   SmallVectorImpl<Tensor> &results) {
  auto p = op.getPredicate();
  Tensor out;
  if (failed(allocTensor(op, out, DType::I1, operands[0].shape())))
    return failure();
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setI(i, compareFloats(p, operands[0].getF(i), operands[1].getF(i)));
  results.push_back(out);
  return success();
}

LogicalResult select(arith::SelectOp op, ArrayRef<Tensor> operands,
                     SmallVectorImpl<Tensor> &results) {
  const Tensor &c = operands[0], &t = operands[1], &f = operands[2];
  if (c.rank() == 0) {
    results.push_back(c.getB(0) ? t : f);
    return success();
  }
  Tensor out;
  if (failed(allocTensor(op, out, t.dtype(), t.shape())))
    return failure();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const Tensor &src = c.getB(i) ? t : f;
    if (t.isFloat())
      out.setF(i, src.getF(i));
    else
      out.setI(i, src.getI(i));
  }
  results.push_back(out);
  return success();
}

/// Conversions: index_cast, sitofp, fptosi, extf, truncf, extsi, trunci.
template <typename OpT>
LogicalResult convert(OpT op, ArrayRef<Tensor> operands,
                      SmallVectorImpl<Tensor> &results) {
  Tensor out;
  if (failed(takeTensor(op, operands[0].convertTo(resultDType(op)), out)))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult tensorDim(tensor::DimOp op, ArrayRef<Tensor> operands,
                        SmallVectorImpl<Tensor> &results) {
  int64_t d = operands[1].getI(0);
  if (d < 0 || d >= operands[0].rank())
    return op.emitError("dim ") << d << " out of range for rank "
                                << operands[0].rank();
  results.push_back(Tensor::scalarInt(DType::I64, operands[0].dim(d)));
  return success();
}

LogicalResult tensorExtract(tensor::ExtractOp op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  const Tensor &t = operands[0];
  int64_t linear = 0;
  for (int64_t d = 0; d < t.rank(); ++d) {
    int64_t i = operands[1 + d].getI(0);
    if (i < 0 || i >= t.dim(d))
      return op.emitError("index ") << i << " out of range for dim " << d
                                    << " of size " << t.dim(d);
    linear = linear * t.dim(d) + i;
  }
  results.push_back(t.isFloat() ? Tensor::scalar(t.dtype(), t.getF(linear))
                                : Tensor::scalarInt(t.dtype(), t.getI(linear)));
  return success();
}

LogicalResult fromElements(tensor::FromElementsOp op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), op.getType().getShape())))
    return failure();
  for (auto [i, v] : llvm::enumerate(operands)) {
    if (out.isFloat())
      out.setF(i, v.getF(0));
    else
      out.setI(i, v.getI(0));
  }
  results.push_back(out);
  return success();
}

LogicalResult tensorCast(tensor::CastOp, ArrayRef<Tensor> operands,
                         SmallVectorImpl<Tensor> &results) {
  results.push_back(operands[0]); // shape checked against the result type
  return success();
}

LogicalResult tensorEmpty(tensor::EmptyOp op, ArrayRef<Tensor> operands,
                          SmallVectorImpl<Tensor> &results) {
  SmallVector<int64_t> shape;
  unsigned next = 0;
  for (int64_t d : op.getType().getShape())
    shape.push_back(ShapedType::isDynamic(d) ? operands[next++].getI(0) : d);
  for (int64_t d : shape)
    if (d < 0)
      return op.emitError("negative size ") << d;
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult tensorSplat(tensor::SplatOp op, ArrayRef<Tensor> operands,
                          SmallVectorImpl<Tensor> &results) {
  SmallVector<int64_t> shape;
  unsigned next = 1;
  for (int64_t d : op.getType().getShape())
    shape.push_back(ShapedType::isDynamic(d) ? operands[next++].getI(0) : d);
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (out.isFloat())
      out.setF(i, operands[0].getF(0));
    else
      out.setI(i, operands[0].getI(0));
  }
  results.push_back(out);
  return success();
}

} // namespace

void registerArithKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachKernel<arith::ConstantOp, constant>(ctx);
    attachKernel<arith::AddIOp, addi>(ctx);
    attachKernel<arith::SubIOp, subi>(ctx);
    attachKernel<arith::MulIOp, muli>(ctx);
    attachKernel<arith::DivSIOp, divsi>(ctx);
    attachKernel<arith::RemSIOp, remsi>(ctx);
    attachKernel<arith::FloorDivSIOp, floordivsi>(ctx);
    attachKernel<arith::CeilDivSIOp, ceildivsi>(ctx);
    attachKernel<arith::MaxSIOp, maxsi>(ctx);
    attachKernel<arith::MinSIOp, minsi>(ctx);
    attachKernel<arith::AndIOp, andi>(ctx);
    attachKernel<arith::OrIOp, ori>(ctx);
    attachKernel<arith::XOrIOp, xori>(ctx);
    attachKernel<arith::AddFOp, addf>(ctx);
    attachKernel<arith::SubFOp, subf>(ctx);
    attachKernel<arith::MulFOp, mulf>(ctx);
    attachKernel<arith::DivFOp, divf>(ctx);
    attachKernel<arith::NegFOp, negf>(ctx);
    attachKernel<arith::MaximumFOp, maximumf>(ctx);
    attachKernel<arith::MinimumFOp, minimumf>(ctx);
    attachKernel<arith::CmpIOp, cmpi>(ctx);
    attachKernel<arith::CmpFOp, cmpf>(ctx);
    attachKernel<arith::SelectOp, select>(ctx);
    attachKernel<arith::IndexCastOp, convert<arith::IndexCastOp>>(ctx);
    attachKernel<arith::SIToFPOp, convert<arith::SIToFPOp>>(ctx);
    attachKernel<arith::FPToSIOp, convert<arith::FPToSIOp>>(ctx);
    attachKernel<arith::ExtFOp, convert<arith::ExtFOp>>(ctx);
    attachKernel<arith::TruncFOp, convert<arith::TruncFOp>>(ctx);
    attachKernel<arith::ExtSIOp, convert<arith::ExtSIOp>>(ctx);
    attachKernel<arith::TruncIOp, convert<arith::TruncIOp>>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachKernel<tensor::DimOp, tensorDim>(ctx);
    attachKernel<tensor::ExtractOp, tensorExtract>(ctx);
    attachKernel<tensor::FromElementsOp, fromElements>(ctx);
    attachKernel<tensor::CastOp, tensorCast>(ctx);
    attachKernel<tensor::EmptyOp, tensorEmpty>(ctx);
    attachKernel<tensor::SplatOp, tensorSplat>(ctx);
  });
}

} // namespace kiln::interp
