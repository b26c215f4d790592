//===- CreationKernels.cpp - Interpreter kernels of creation ops ----------===//
//
// Part of Kiln. constant, full, arange, and the Philox4x32-10 random ops
// (rand, randn, dropout) whose generator contract is documented in
// KTCreationOps.td.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {

/// Reads a dense elements attribute into a tensor (also used for
/// arith.constant).
FailureOr<Tensor> tensorFromElements(Operation *op, ElementsAttr attr);

FailureOr<Tensor> tensorFromElements(Operation *op, ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<DType> dt = dtypeFromType(type.getElementType());
  if (!dt) {
    op->emitError("unsupported constant element type ") << type.getElementType();
    return failure();
  }
  Tensor t;
  if (failed(allocTensor(op, t, *dt, type.getShape())))
    return failure();
  int64_t i = 0;
  if (isFloatDType(*dt)) {
    for (APFloat v : attr.getValues<APFloat>())
      t.setF(i++, v.convertToDouble());
  } else {
    for (APInt v : attr.getValues<APInt>())
      t.setI(i++, *dt == DType::I1 ? (int64_t)v.getZExtValue() : v.getSExtValue());
  }
  return t;
}

namespace {

LogicalResult interpretConstant(ConstantOp op, ArrayRef<Tensor>,
                                SmallVectorImpl<Tensor> &results) {
  FailureOr<Tensor> t = tensorFromElements(op, op.getValue());
  if (failed(t))
    return failure();
  results.push_back(*t);
  return success();
}

/// The runtime shape of a sized creation op: `size` with each -1 replaced by
/// the next dynamic size operand; checks them against the result type.
FailureOr<SmallVector<int64_t>> runtimeShape(Operation *op, ArrayAttr sizeAttr,
                                             ArrayRef<Tensor> dynSizes) {
  SmallVector<int64_t> shape;
  size_t next = 0;
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  for (auto [i, d] : llvm::enumerate(getI64Array(sizeAttr))) {
    if (d == -1) {
      if (next >= dynSizes.size()) {
        op->emitError("missing dynamic size operand");
        return failure();
      }
      d = dynSizes[next++].getI(0);
      if (d < 0) {
        op->emitError("dynamic size ") << d << " (dim " << i
                                       << ") must be non-negative";
        return failure();
      }
    }
    int64_t expected = resultType.getDimSize(i);
    if (!ShapedType::isDynamic(expected) && expected != d) {
      op->emitError("dim ") << i << " has size " << d
                            << " at run time but the result type has "
                            << expected;
      return failure();
    }
    shape.push_back(d);
  }
  return shape;
}

LogicalResult interpretFull(FullOp op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  FailureOr<SmallVector<int64_t>> shape =
      runtimeShape(op, op.getSize(), operands);
  if (failed(shape))
    return failure();
  DType dt = resultDType(op);
  Tensor out;
  if (failed(allocTensor(op, out, dt, *shape)))
    return failure();
  double v = op.getValue().convertToDouble();
  for (int64_t i = 0, e = out.numel(); i < e; ++i) {
    if (isFloatDType(dt))
      out.setF(i, v);
    else
      out.setI(i, (int64_t)v);
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretArange(ArangeOp op, ArrayRef<Tensor>,
                              SmallVectorImpl<Tensor> &results) {
  double start = op.getStart().convertToDouble();
  double end = op.getEnd().convertToDouble();
  double step = op.getStep().convertToDouble();
  double count = std::ceil((end - start) / step);
  // Beyond int64 (the conversion would be undefined): reported as too large.
  int64_t n = count < 0x1p63 ? (int64_t)count
                             : std::numeric_limits<int64_t>::max();
  DType dt = resultDType(op);
  Tensor out;
  if (failed(allocTensor(op, out, dt, {n})))
    return failure();
  for (int64_t i = 0; i < n; ++i) {
    if (dt == DType::F16 || dt == DType::BF16) {
      // PyTorch (CPU) accumulates half types in float.
      float fs = (float)start, fst = (float)step;
      out.setF(i, (double)(fs + fst * (float)i));
    } else if (isFloatDType(dt)) {
      out.setF(i, start + step * (double)i);
    } else {
      int64_t s = (int64_t)start, st = (int64_t)step;
      out.setI(i, (int64_t)((uint64_t)s + (uint64_t)st * (uint64_t)i));
    }
  }
  results.push_back(std::move(out));
  return success();
}

//===----------------------------------------------------------------------===//
// Philox4x32-10
//===----------------------------------------------------------------------===//

std::array<uint32_t, 4> philox(uint64_t seed, uint64_t index) {
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32), c2 = 0, c3 = 0;
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

constexpr double kTwoM24 = 1.0 / 16777216.0;
constexpr double kTwoM53 = 1.0 / 9007199254740992.0;

double u53(uint32_t a, uint32_t b) {
  return (double)(((uint64_t)(a >> 5) << 26) | (uint64_t)(b >> 6));
}

double uniformAt(uint64_t seed, uint64_t i, DType dt) {
  std::array<uint32_t, 4> o = philox(seed, i);
  if (dt == DType::F64)
    return u53(o[0], o[1]) * kTwoM53;
  return (double)(o[0] >> 8) * kTwoM24;
}

double normalAt(uint64_t seed, uint64_t i, DType dt) {
  std::array<uint32_t, 4> o = philox(seed, i);
  double u1, u2;
  if (dt == DType::F64) {
    u1 = (u53(o[0], o[1]) + 1.0) * kTwoM53;
    u2 = u53(o[2], o[3]) * kTwoM53;
  } else {
    u1 = ((double)(o[0] >> 8) + 1.0) * kTwoM24;
    u2 = (double)(o[1] >> 8) * kTwoM24;
  }
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

template <typename OpT, bool Normal>
LogicalResult interpretRandom(OpT op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  FailureOr<SmallVector<int64_t>> shape =
      runtimeShape(op, op.getSize(), operands.drop_front());
  if (failed(shape))
    return failure();
  uint64_t seed = (uint64_t)operands[0].getI(0);
  DType dt = resultDType(op);
  Tensor out;
  if (failed(allocTensor(op, out, dt, *shape)))
    return failure();
  for (int64_t i = 0, e = out.numel(); i < e; ++i)
    out.setF(i, Normal ? normalAt(seed, i, dt) : uniformAt(seed, i, dt));
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretDropout(DropoutOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  if (!op.getTrain()) {
    results.push_back(x);
    return success();
  }
  uint64_t seed = (uint64_t)operands[1].getI(0);
  double p = op.getP().convertToDouble();
  DType dt = x.dtype();
  Tensor out;
  if (failed(allocTensor(op, out, dt, x.shape())))
    return failure();
  double scale = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
  for (int64_t i = 0, e = x.numel(); i < e; ++i) {
    bool keep = uniformAt(seed, i, dt) >= p;
    out.setF(i, x.getF(i) * (keep ? scale : 0.0));
  }
  results.push_back(std::move(out));
  return success();
}

} // namespace

void registerCreationKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<ConstantOp, interpretConstant>(ctx);
    attachKernel<FullOp, interpretFull>(ctx);
    attachKernel<ArangeOp, interpretArange>(ctx);
    attachKernel<RandOp, interpretRandom<RandOp, false>>(ctx);
    attachKernel<RandnOp, interpretRandom<RandnOp, true>>(ctx);
    attachKernel<DropoutOp, interpretDropout>(ctx);
  });
}

} // namespace kiln::interp
