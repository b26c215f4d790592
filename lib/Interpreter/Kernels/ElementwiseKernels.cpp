//===- ElementwiseKernels.cpp - Interpreter kernels of pointwise ops ------===//
//
// Part of Kiln. Floats are computed in double and rounded to the result dtype
// when stored; integers in int64 with two's-complement wrap-around (stores to
// i32 truncate, which equals 32-bit wrap-around for add/sub/mul/neg).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/rt/SpecialFunctions.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Applies a binary function with broadcasting: `ff` on doubles for float
/// operands, `fi` on int64 for integer (and i1) operands. `fi` may return
/// std::nullopt for a division by zero, which becomes a runtime error.
template <typename FF, typename FI>
LogicalResult binaryKernel(Operation *op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results, FF ff, FI fi) {
  FailureOr<SmallVector<int64_t>> shape = broadcastRuntimeShapes(op, operands);
  if (failed(shape))
    return failure();
  const Tensor &a = operands[0], &b = operands[1];
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), *shape)))
    return failure();
  SmallVector<SmallVector<int64_t>> strides{broadcastStrides(a.shape(), *shape),
                                            broadcastStrides(b.shape(), *shape)};
  bool divByZero = false;
  if (a.isFloat()) {
    forEachBroadcast(*shape, strides, [&](int64_t i, ArrayRef<int64_t> o) {
      out.setF(i, ff(a.getF(o[0]), b.getF(o[1])));
    });
  } else {
    forEachBroadcast(*shape, strides, [&](int64_t i, ArrayRef<int64_t> o) {
      std::optional<int64_t> r = fi(a.getI(o[0]), b.getI(o[1]));
      if (!r)
        divByZero = true;
      else
        out.setI(i, *r);
    });
  }
  if (divByZero)
    return op->emitError("integer division by zero");
  results.push_back(std::move(out));
  return success();
}

/// A binary op returning i1: `ff` compares doubles, `fi` int64 values.
template <typename FF, typename FI>
LogicalResult compareKernel(Operation *op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results, FF ff, FI fi) {
  return binaryKernel(
      op, operands, results,
      [&](double x, double y) { return ff(x, y) ? 1.0 : 0.0; },
      [&](int64_t x, int64_t y) -> std::optional<int64_t> {
        return fi(x, y) ? 1 : 0;
      });
}

/// Applies a unary function elementwise on doubles.
template <typename FF>
LogicalResult unaryFloatKernel(Operation *op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results, FF ff) {
  const Tensor &a = operands[0];
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), a.shape())))
    return failure();
  for (int64_t i = 0, e = a.numel(); i < e; ++i)
    out.setF(i, ff(a.getF(i)));
  results.push_back(std::move(out));
  return success();
}

/// A unary op on floats (`ff`) and integers (`fi`).
template <typename FF, typename FI>
LogicalResult unaryKernel(Operation *op, ArrayRef<Tensor> operands,
                          SmallVectorImpl<Tensor> &results, FF ff, FI fi) {
  const Tensor &a = operands[0];
  if (a.isFloat())
    return unaryFloatKernel(op, operands, results, ff);
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), a.shape())))
    return failure();
  for (int64_t i = 0, e = a.numel(); i < e; ++i)
    out.setI(i, fi(a.getI(i)));
  results.push_back(std::move(out));
  return success();
}

int64_t wrapAdd(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x + (uint64_t)y);
}
int64_t wrapSub(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x - (uint64_t)y);
}
int64_t wrapMul(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x * (uint64_t)y);
}
int64_t wrapNeg(int64_t x) { return (int64_t)(0 - (uint64_t)x); }

/// Integer results are stored truncated to the result width, so quotients are
/// computed in int64 except INT64_MIN / -1, which wraps.
std::optional<int64_t> truncDiv(int64_t x, int64_t y) {
  if (y == 0)
    return std::nullopt;
  if (y == -1)
    return wrapNeg(x);
  return x / y;
}
std::optional<int64_t> floorDiv(int64_t x, int64_t y) {
  if (y == 0)
    return std::nullopt;
  if (y == -1)
    return wrapNeg(x);
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0)))
    --q;
  return q;
}
std::optional<int64_t> intRemainder(int64_t x, int64_t y) {
  if (y == 0)
    return std::nullopt;
  if (y == -1)
    return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0)))
    r += y;
  return r;
}

/// C's `%` (torch.fmod on integers): the sign of the dividend; INT_MIN % -1
/// is 0 (the quotient would overflow).
std::optional<int64_t> intFmod(int64_t x, int64_t y) {
  if (y == 0)
    return std::nullopt;
  if (y == -1)
    return 0;
  return x % y;
}

/// PyTorch's div_floor_floating, every step rounded to the operand dtype
/// `dt` as PyTorch's kernel computes it in scalar_t (f16/bf16 included).
double floatFloorDiv(double a, double b, DType dt) {
  if (b == 0)
    return a / b;
  double mod = std::fmod(a, b);
  double div = roundToDType(roundToDType(a - mod, dt) / b, dt);
  if (mod != 0 && ((b < 0) != (mod < 0)))
    div = roundToDType(div - 1, dt);
  double floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5)
      floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  return floordiv;
}

/// PyTorch's float remainder: fmod adjusted to the sign of the divisor.
double floatRemainder(double a, double b, DType dt) {
  double mod = std::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0)))
    mod = roundToDType(mod + b, dt);
  return mod;
}

/// Integer power as torch.pow(Tensor, Tensor) (wrap-around; negative
/// exponents give 1 for base 1, +-1 for base -1, else 0).
int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1)
      return 1;
    if (base == -1)
      return (exp % 2) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = (uint64_t)base;
  while (exp) {
    if (exp & 1)
      result *= b;
    b *= b;
    exp >>= 1;
  }
  return (int64_t)result;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double gelu(double x, bool tanhApprox) {
  if (tanhApprox) {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

#define KT_FLOAT_UNARY(OP, EXPR)                                               \
  LogicalResult interpret##OP(OP op, ArrayRef<Tensor> operands,                \
                              SmallVectorImpl<Tensor> &results) {              \
    return unaryFloatKernel(op, operands, results,                             \
                            [](double x) -> double { return EXPR; });          \
  }

KT_FLOAT_UNARY(ExpOp, std::exp(x))
KT_FLOAT_UNARY(LogOp, std::log(x))
KT_FLOAT_UNARY(Log1pOp, std::log1p(x))
KT_FLOAT_UNARY(Expm1Op, std::expm1(x))
KT_FLOAT_UNARY(SqrtOp, std::sqrt(x))
KT_FLOAT_UNARY(RsqrtOp, 1.0 / std::sqrt(x))
KT_FLOAT_UNARY(SinOp, std::sin(x))
KT_FLOAT_UNARY(CosOp, std::cos(x))
KT_FLOAT_UNARY(TanhOp, std::tanh(x))
KT_FLOAT_UNARY(SigmoidOp, sigmoid(x))
KT_FLOAT_UNARY(SiluOp, x *sigmoid(x))
KT_FLOAT_UNARY(ErfOp, std::erf(x))
KT_FLOAT_UNARY(ReciprocalOp, 1.0 / x)
#undef KT_FLOAT_UNARY

#define KT_NUMERIC_UNARY(OP, FEXPR, IEXPR)                                     \
  LogicalResult interpret##OP(OP op, ArrayRef<Tensor> operands,                \
                              SmallVectorImpl<Tensor> &results) {              \
    return unaryKernel(                                                        \
        op, operands, results, [](double x) -> double { return FEXPR; },       \
        [](int64_t x) -> int64_t { return IEXPR; });                           \
  }

KT_NUMERIC_UNARY(NegOp, -x, wrapNeg(x))
KT_NUMERIC_UNARY(AbsOp, std::fabs(x), x < 0 ? wrapNeg(x) : x)
KT_NUMERIC_UNARY(ReluOp, (std::isnan(x) || !(x < 0)) ? x : 0.0, x < 0 ? 0 : x)
KT_NUMERIC_UNARY(FloorOp, std::floor(x), x)
KT_NUMERIC_UNARY(CeilOp, std::ceil(x), x)
KT_NUMERIC_UNARY(RoundOp, std::nearbyint(x), x)
KT_NUMERIC_UNARY(SignOp, (double)((0.0 < x) - (x < 0.0)),
                 (int64_t)((0 < x) - (x < 0)))
#undef KT_NUMERIC_UNARY

LogicalResult interpretGeluOp(GeluOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  bool tanhApprox = op.getApproximate() == GeluApproximate::tanh;
  return unaryFloatKernel(op, operands, results,
                          [&](double x) { return gelu(x, tanhApprox); });
}

/// kt.special: the double-precision function of kiln/rt/SpecialFunctions.h
/// (the one compiled CPU code calls), rounded once to the element type.
LogicalResult interpretSpecialOp(SpecialOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  namespace sp = kiln::rt::special;
  double (*fn)(double) = nullptr;
  switch (op.getFn()) {
#define KILN_SPECIAL_CASE(name, f)                                             \
  case SpecialFn::name:                                                        \
    fn = sp::f;                                                                \
    break;
    KILN_SPECIAL_UNARY_FNS(KILN_SPECIAL_CASE)
#undef KILN_SPECIAL_CASE
  case SpecialFn::polygamma: {
    int64_t n = op.getNAttr() ? op.getNAttr().getInt() : 0;
    return unaryFloatKernel(op, operands, results,
                            [n](double x) { return sp::polygamma(n, x); });
  }
  }
  if (!fn)
    return op.emitError("unknown special function");
  return unaryFloatKernel(op, operands, results, fn);
}

LogicalResult interpretLogicalNotOp(LogicalNotOp op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  Tensor out;
  if (failed(allocTensor(op, out, DType::I1, a.shape())))
    return failure();
  for (int64_t i = 0, e = a.numel(); i < e; ++i)
    out.setI(i, a.isFloat() ? a.getF(i) == 0.0 : a.getI(i) == 0);
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretBitwiseNotOp(BitwiseNotOp op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  bool isBool = a.dtype() == DType::I1;
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), a.shape())))
    return failure();
  for (int64_t i = 0, e = a.numel(); i < e; ++i)
    out.setI(i, isBool ? (int64_t)(a.getI(i) == 0) : ~a.getI(i));
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretIsnanOp(IsnanOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  Tensor out;
  if (failed(allocTensor(op, out, DType::I1, a.shape())))
    return failure();
  if (a.isFloat())
    for (int64_t i = 0, e = a.numel(); i < e; ++i)
      out.setI(i, std::isnan(a.getF(i)));
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretClampOp(ClampOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  std::optional<double> lo, hi;
  if (auto m = op.getMinAttr())
    lo = m.getValueAsDouble();
  if (auto m = op.getMaxAttr())
    hi = m.getValueAsDouble();
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), a.shape())))
    return failure();
  if (a.isFloat()) {
    // Bounds are converted to the tensor's dtype first, as PyTorch does.
    DType dt = a.dtype();
    std::optional<double> l, h;
    if (lo)
      l = roundToDType(*lo, dt);
    if (hi)
      h = roundToDType(*hi, dt);
    // With both bounds, a NaN bound makes every element NaN (PyTorch's
    // clamp(x, min, max)); a single NaN bound is ignored (clamp_min/max).
    bool nanBound = l && h && (std::isnan(*l) || std::isnan(*h));
    for (int64_t i = 0, e = a.numel(); i < e; ++i) {
      double x = nanBound ? kNaN : a.getF(i);
      if (!std::isnan(x)) {
        if (l)
          x = std::max(x, *l);
        if (h)
          x = std::min(x, *h);
      }
      out.setF(i, x);
    }
  } else {
    for (int64_t i = 0, e = a.numel(); i < e; ++i) {
      int64_t x = a.getI(i);
      if (lo)
        x = std::max(x, (int64_t)*lo);
      if (hi)
        x = std::min(x, (int64_t)*hi);
      out.setI(i, x);
    }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretCastOp(CastOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  Tensor out;
  if (failed(takeTensor(op, operands[0].convertTo(resultDType(op)), out)))
    return failure();
  results.push_back(std::move(out));
  return success();
}

/// PyTorch computes f16/bf16 arithmetic in float32 ("opmath" type).
DType computeDType(DType dt) {
  return dt == DType::F64 ? DType::F64 : DType::F32;
}

#define KT_BINARY(OP, FEXPR, IEXPR)                                            \
  LogicalResult interpret##OP(OP op, ArrayRef<Tensor> operands,                \
                              SmallVectorImpl<Tensor> &results) {              \
    [[maybe_unused]] DType dt = computeDType(operands[0].dtype());                           \
    return binaryKernel(                                                       \
        op, operands, results,                                                 \
        [&](double x, double y) -> double { return FEXPR; },                   \
        [&](int64_t x, int64_t y) -> std::optional<int64_t> { return IEXPR; });\
  }

KT_BINARY(AddOp, x + y, wrapAdd(x, y))
KT_BINARY(SubOp, x - y, wrapSub(x, y))
KT_BINARY(MulOp, x *y, wrapMul(x, y))
KT_BINARY(PowOp, std::pow(x, y), intPow(x, y))
KT_BINARY(MaximumOp, ieeeMaximum(x, y), std::max(x, y))
KT_BINARY(MinimumOp, ieeeMinimum(x, y), std::min(x, y))
KT_BINARY(RemainderOp, floatRemainder(x, y, dt), intRemainder(x, y))
// fmod is exact in any precision; atan2 is computed in double and rounded.
KT_BINARY(FmodOp, std::fmod(x, y), intFmod(x, y))
KT_BINARY(Atan2Op, std::atan2(x, y), std::optional<int64_t>(0))
// Hurwitz zeta in double (kiln/rt/SpecialFunctions.h, as compiled code).
KT_BINARY(ZetaOp, kiln::rt::special::zeta(x, y), std::optional<int64_t>(0))
// Bitwise ops see i1 as 0/1, which and/or/xor keep.
KT_BINARY(BitwiseAndOp, kNaN, x &y)
KT_BINARY(BitwiseOrOp, kNaN, x | y)
KT_BINARY(BitwiseXorOp, kNaN, x ^ y)
#undef KT_BINARY

LogicalResult interpretDivOp(DivOp op, ArrayRef<Tensor> operands,
                             SmallVectorImpl<Tensor> &results) {
  // Rounding modes: PyTorch's kernels compute in the operand dtype itself
  // (trunc(a / b) with a / b rounded to f16/bf16 too), not in float.
  DType dt = operands[0].dtype();
  auto mode = op.getRoundingMode();
  if (!mode)
    return binaryKernel(
        op, operands, results, [](double x, double y) { return x / y; },
        [](int64_t, int64_t) -> std::optional<int64_t> { return 0; });
  if (*mode == RoundingMode::trunc)
    return binaryKernel(
        op, operands, results,
        [&](double x, double y) { return std::trunc(roundToDType(x / y, dt)); },
        truncDiv);
  return binaryKernel(
      op, operands, results,
      [&](double x, double y) { return floatFloorDiv(x, y, dt); }, floorDiv);
}

#define KT_COMPARE(OP, EXPR)                                                   \
  LogicalResult interpret##OP(OP op, ArrayRef<Tensor> operands,                \
                              SmallVectorImpl<Tensor> &results) {              \
    return compareKernel(                                                      \
        op, operands, results, [](double x, double y) { return EXPR; },        \
        [](int64_t x, int64_t y) { return EXPR; });                            \
  }

KT_COMPARE(EqOp, x == y)
KT_COMPARE(NeOp, x != y)
KT_COMPARE(LtOp, x < y)
KT_COMPARE(LeOp, x <= y)
KT_COMPARE(GtOp, x > y)
KT_COMPARE(GeOp, x >= y)
KT_COMPARE(LogicalAndOp, (x != 0) && (y != 0))
KT_COMPARE(LogicalOrOp, (x != 0) || (y != 0))
KT_COMPARE(LogicalXorOp, (x != 0) != (y != 0))
#undef KT_COMPARE

LogicalResult interpretWhereOp(WhereOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  FailureOr<SmallVector<int64_t>> shape = broadcastRuntimeShapes(op, operands);
  if (failed(shape))
    return failure();
  const Tensor &c = operands[0], &a = operands[1], &b = operands[2];
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), *shape)))
    return failure();
  SmallVector<SmallVector<int64_t>> strides{broadcastStrides(c.shape(), *shape),
                                            broadcastStrides(a.shape(), *shape),
                                            broadcastStrides(b.shape(), *shape)};
  bool isFloat = a.isFloat();
  forEachBroadcast(*shape, strides, [&](int64_t i, ArrayRef<int64_t> o) {
    const Tensor &src = c.getI(o[0]) ? a : b;
    int64_t off = c.getI(o[0]) ? o[1] : o[2];
    if (isFloat)
      out.setF(i, src.getF(off));
    else
      out.setI(i, src.getI(off));
  });
  results.push_back(std::move(out));
  return success();
}

} // namespace

void registerElementwiseKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
#define ATTACH(OP) attachKernel<OP, interpret##OP>(ctx);
    ATTACH(NegOp) ATTACH(AbsOp) ATTACH(ExpOp) ATTACH(LogOp) ATTACH(Log1pOp)
    ATTACH(Expm1Op) ATTACH(SqrtOp) ATTACH(RsqrtOp) ATTACH(SinOp) ATTACH(CosOp)
    ATTACH(TanhOp) ATTACH(SigmoidOp) ATTACH(ReluOp) ATTACH(GeluOp)
    ATTACH(SiluOp) ATTACH(ErfOp) ATTACH(ReciprocalOp) ATTACH(FloorOp)
    ATTACH(CeilOp) ATTACH(RoundOp) ATTACH(SignOp) ATTACH(LogicalNotOp)
    ATTACH(IsnanOp) ATTACH(ClampOp) ATTACH(CastOp)
    ATTACH(AddOp) ATTACH(SubOp) ATTACH(MulOp) ATTACH(DivOp) ATTACH(PowOp)
    ATTACH(MaximumOp) ATTACH(MinimumOp) ATTACH(RemainderOp)
    ATTACH(EqOp) ATTACH(NeOp) ATTACH(LtOp) ATTACH(LeOp) ATTACH(GtOp)
    ATTACH(GeOp) ATTACH(LogicalAndOp) ATTACH(LogicalOrOp) ATTACH(WhereOp)
    ATTACH(FmodOp) ATTACH(Atan2Op) ATTACH(ZetaOp) ATTACH(SpecialOp) ATTACH(BitwiseAndOp) ATTACH(BitwiseOrOp)
    ATTACH(BitwiseXorOp) ATTACH(BitwiseNotOp) ATTACH(LogicalXorOp)
#undef ATTACH
  });
}

} // namespace kiln::interp
