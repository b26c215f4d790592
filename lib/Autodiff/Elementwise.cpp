//===- Elementwise.cpp - Vector-Jacobian rules of pointwise kt ops --------===//
//
// Part of Kiln. The formulas are PyTorch's (tools/autograd/derivatives.yaml,
// FunctionsManual.cpp), ties included: maximum/minimum split the gradient
// evenly between equal operands, relu/clamp pass it where the input is inside
// the range (bounds included for clamp), abs has gradient 0 at 0. Broadcast
// operands get their gradient summed back (unbroadcast). Ops on integers or
// bools have no gradient; floor/ceil/round/sign have gradient zero.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

// Unary: operandGrads[0] = f(x, result, g); only for float operands.
#define UNARY_VJP(NAME, OP, EXPR)                                              \
  LogicalResult NAME(kt::OP op, GradEmitter &e, Value g, Grads &grads) {       \
    Value x = op.getSelf();                                                    \
    Value r = op.getResult();                                                  \
    (void)r;                                                                   \
    if (!isFloatValue(x))                                                      \
      return success();                                                        \
    grads[0] = (EXPR);                                                         \
    return success();                                                          \
  }

UNARY_VJP(vjpNeg, NegOp, e.neg(g))
UNARY_VJP(vjpAbs, AbsOp, e.mul(g, e.op<kt::SignOp>({x})))
UNARY_VJP(vjpExp, ExpOp, e.mul(g, r))
UNARY_VJP(vjpLog, LogOp, e.div(g, x))
UNARY_VJP(vjpLog1p, Log1pOp, e.div(g, e.add(x, e.scalarLike(1, x))))
UNARY_VJP(vjpExpm1, Expm1Op, e.mul(g, e.add(r, e.scalarLike(1, r))))
UNARY_VJP(vjpSqrt, SqrtOp, e.div(g, e.scale(r, 2)))
// d rsqrt = -0.5 * r^3
UNARY_VJP(vjpRsqrt, RsqrtOp, e.mul(e.scale(g, -0.5), e.mul(r, e.mul(r, r))))
UNARY_VJP(vjpSin, SinOp, e.mul(g, e.op<kt::CosOp>({x})))
UNARY_VJP(vjpCos, CosOp, e.neg(e.mul(g, e.op<kt::SinOp>({x}))))
UNARY_VJP(vjpTanh, TanhOp, e.mul(g, e.sub(e.scalarLike(1, r), e.mul(r, r))))
UNARY_VJP(vjpSigmoid, SigmoidOp, e.mul(g, e.mul(r, e.sub(e.scalarLike(1, r), r))))
// threshold_backward(grad, result, 0): the gradient where the result > 0.
UNARY_VJP(vjpRelu, ReluOp, e.maskGrad(e.gt(r, e.scalarLike(0, r)), g))
// 2/sqrt(pi) * exp(-x^2)
UNARY_VJP(vjpErf, ErfOp,
          e.mul(e.scale(g, 2.0 / std::sqrt(M_PI)), e.exp(e.neg(e.mul(x, x)))))
// -g * r^2
UNARY_VJP(vjpReciprocal, ReciprocalOp, e.neg(e.mul(g, e.mul(r, r))))

/// kt.special with `fn` (and `n`).
Value special(GradEmitter &e, kt::SpecialFn fn, Value x,
              std::optional<int64_t> n = std::nullopt) {
  SmallVector<NamedAttribute> attrs{
      e.attr("fn", kt::SpecialFnAttr::get(x.getContext(), fn))};
  if (n)
    attrs.push_back(e.attr("n", IntegerAttr::get(
                                    IntegerType::get(x.getContext(), 64), *n)));
  return e.op<kt::SpecialOp>({x}, attrs);
}

/// PyTorch's derivatives.yaml entries of lgamma, digamma, polygamma, erfc,
/// erfinv, special_erfcx, special_ndtr, special_ndtri, special_log_ndtr,
/// i0, special_i0e, special_i1 and special_i1e (i1_backward and
/// i1e_backward: 0.5 at |x| <= eps).
LogicalResult vjpSpecial(kt::SpecialOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  using kt::SpecialFn;
  Value x = op.getSelf(), r = op.getResult();
  const double kInvSqrt2Pi = 1.0 / std::sqrt(2 * M_PI);
  Value d;
  switch (op.getFn()) {
  case SpecialFn::lgamma:
    d = special(e, SpecialFn::digamma, x);
    break;
  case SpecialFn::digamma:
    d = special(e, SpecialFn::polygamma, x, 1);
    break;
  case SpecialFn::polygamma:
    d = special(e, SpecialFn::polygamma, x, op.getNAttr().getInt() + 1);
    break;
  case SpecialFn::erfc:
    d = e.scale(e.exp(e.neg(e.mul(x, x))), -2.0 / std::sqrt(M_PI));
    break;
  case SpecialFn::erfinv:
    d = e.scale(e.exp(e.mul(r, r)), std::sqrt(M_PI) / 2);
    break;
  case SpecialFn::erfcx:
    d = e.sub(e.scale(e.mul(x, r), 2), e.scalarLike(2.0 / std::sqrt(M_PI), x));
    break;
  case SpecialFn::ndtr:
    d = e.scale(e.exp(e.scale(e.mul(x, x), -0.5)), kInvSqrt2Pi);
    break;
  case SpecialFn::ndtri:
    d = e.scale(e.exp(e.scale(e.mul(r, r), 0.5)), std::sqrt(2 * M_PI));
    break;
  case SpecialFn::log_ndtr:
    d = e.scale(e.exp(e.neg(e.add(r, e.scale(e.mul(x, x), 0.5)))),
                kInvSqrt2Pi);
    break;
  case SpecialFn::i0:
    d = special(e, SpecialFn::i1, x);
    break;
  case SpecialFn::i0e:
    d = e.sub(special(e, SpecialFn::i1e, x), e.mul(e.op<kt::SignOp>({x}), r));
    break;
  case SpecialFn::i1:
  case SpecialFn::i1e: {
    // i1' = i0 - i1 / x, i1e' = i0e - i1e (sgn(x) + 1 / x); 0.5 at 0.
    double eps = getElementTypeOrSelf(x.getType()).isF64()
                     ? std::numeric_limits<double>::epsilon()
                     : (double)std::numeric_limits<float>::epsilon();
    Value big = e.gt(e.abs(x), e.scalarLike(eps, x));
    Value safe = e.where(big, x, e.scalarLike(eps, x));
    Value inv = e.op<kt::ReciprocalOp>({safe});
    Value dx;
    if (op.getFn() == SpecialFn::i1)
      dx = e.sub(special(e, SpecialFn::i0, safe), e.mul(r, inv));
    else
      dx = e.sub(special(e, SpecialFn::i0e, safe),
                 e.mul(r, e.add(e.op<kt::SignOp>({safe}), inv)));
    d = e.where(big, dx, e.scalarLike(0.5, x));
    break;
  }
  default:
    // The Bessel functions, spherical_bessel_j0 and airy_ai: PyTorch 1.13
    // defines no derivative for them (their results do not require grad).
    return op.emitError("no gradient for kt.special fn = ")
           << kt::stringifySpecialFn(op.getFn())
           << " (not differentiable in PyTorch: torch.special."
           << kt::stringifySpecialFn(op.getFn()) << " has no derivative)";
  }
  grads[0] = e.mul(g, d);
  return success();
}

LogicalResult vjpSilu(kt::SiluOp op, GradEmitter &e, Value g, Grads &grads) {
  // sigmoid(x) * (1 + x * (1 - sigmoid(x)))
  Value x = op.getSelf();
  Value s = e.op<kt::SigmoidOp>({x});
  Value one = e.scalarLike(1, x);
  grads[0] = e.mul(g, e.mul(s, e.add(one, e.mul(x, e.sub(one, s)))));
  return success();
}

LogicalResult vjpGelu(kt::GeluOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  if (op.getApproximate() == kt::GeluApproximate::none) {
    // Phi(x) + x * phi(x)
    Value cdf = e.scale(
        e.add(e.scalarLike(1, x), e.op<kt::ErfOp>({e.scale(x, M_SQRT1_2)})), 0.5);
    Value pdf =
        e.scale(e.exp(e.scale(e.mul(x, x), -0.5)), 1.0 / std::sqrt(2 * M_PI));
    grads[0] = e.mul(g, e.add(cdf, e.mul(x, pdf)));
    return success();
  }
  // PyTorch's GeluBackward with approximate='tanh'.
  const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
  Value xSq = e.mul(x, x);
  Value xCube = e.mul(xSq, x);
  Value inner = e.scale(e.add(x, e.scale(xCube, kKappa)), kBeta);
  Value t = e.op<kt::TanhOp>({inner});
  Value one = e.scalarLike(1, x);
  Value left = e.scale(x, 0.5);
  Value right = e.add(one, t);
  Value leftDerivative = e.scale(right, 0.5);
  Value tanhDerivative = e.sub(one, e.mul(t, t));
  Value innerDerivative = e.scale(e.add(one, e.scale(xSq, 3 * kKappa)), kBeta);
  Value rightDerivative = e.mul(left, e.mul(tanhDerivative, innerDerivative));
  grads[0] = e.mul(g, e.add(leftDerivative, rightDerivative));
  return success();
}

LogicalResult vjpClamp(kt::ClampOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  // clamp_backward: the gradient where min <= x <= max.
  Value mask;
  if (auto lo = op.getMin())
    mask = e.ge(x, e.scalarLike(lo->convertToDouble(), x));
  if (auto hi = op.getMax()) {
    Value m = e.le(x, e.scalarLike(hi->convertToDouble(), x));
    mask = mask ? e.op<kt::LogicalAndOp>({mask, m}) : m;
  }
  grads[0] = mask ? e.maskGrad(mask, g) : g;
  return success();
}

LogicalResult vjpCast(kt::CastOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  // Only float -> float casts carry a gradient (as in PyTorch, where an
  // integer result cannot require grad).
  if (!isFloatValue(x) || !isFloatValue(op.getResult()))
    return success();
  Type src = GradEmitter::elementTypeOf(x);
  grads[0] = src == GradEmitter::elementTypeOf(g) ? g : e.cast(g, src);
  return success();
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

/// Sets grads[i] = unbroadcast(v) to operand i's type when it is float.
void setBinary(Operation *op, GradEmitter &e, Grads &grads, Value gx,
               Value gy) {
  Value vals[2] = {gx, gy};
  for (int i = 0; i < 2; ++i)
    if (vals[i] && isFloatValue(op->getOperand(i)))
      grads[i] = e.unbroadcastTo(vals[i], op->getOperand(i).getType());
}

LogicalResult vjpAdd(kt::AddOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  setBinary(op, e, grads, g, g);
  return success();
}

LogicalResult vjpSub(kt::SubOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  setBinary(op, e, grads, g, e.neg(g));
  return success();
}

LogicalResult vjpMul(kt::MulOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  setBinary(op, e, grads, e.mul(g, op.getOther()), e.mul(g, op.getSelf()));
  return success();
}

LogicalResult vjpDiv(kt::DivOp op, GradEmitter &e, Value g, Grads &grads) {
  // With a rounding mode the result is piecewise constant: gradient zero.
  if (!isFloatValue(op.getSelf()) || op.getRoundingMode())
    return success();
  Value x = op.getSelf(), y = op.getOther();
  setBinary(op, e, grads, e.div(g, y), e.neg(e.div(e.mul(g, x), e.mul(y, y))));
  return success();
}

LogicalResult vjpPow(kt::PowOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  Value x = op.getSelf(), y = op.getOther(), r = op.getResult();
  Value zero = e.scalarLike(0, x);
  // pow_backward_self: where(y == 0, 0, g * y * x^(y-1))
  Value gx = e.where(
      e.eq(y, zero), zero,
      e.mul(g, e.mul(y, e.op<kt::PowOp>({x, e.sub(y, e.scalarLike(1, y))}))));
  // pow_backward_exponent: where(x == 0 & y >= 0, 0, g * r * log(x))
  Value cond = e.op<kt::LogicalAndOp>({e.eq(x, zero), e.ge(y, zero)});
  Value gy = e.where(cond, zero, e.mul(g, e.mul(r, e.log(x))));
  setBinary(op, e, grads, gx, gy);
  return success();
}

/// maximum (isMax) / minimum: the gradient goes to the winning operand; on
/// ties each operand gets half (PyTorch's rule).
template <typename OpT, bool isMax>
LogicalResult vjpMinMax(OpT op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  Value x = op.getSelf(), y = op.getOther();
  Value zero = e.scalarLike(0, g);
  Value half = e.scale(g, 0.5);
  Value tie = e.eq(x, y);
  Value xWins = isMax ? e.gt(x, y) : e.lt(x, y);
  Value yWins = isMax ? e.lt(x, y) : e.gt(x, y);
  Value gx = e.where(xWins, g, e.where(tie, half, zero));
  Value gy = e.where(yWins, g, e.where(tie, half, zero));
  setBinary(op, e, grads, gx, gy);
  return success();
}

LogicalResult vjpRemainder(kt::RemainderOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  // other: -g * floor(self / other)
  Value q = e.op<kt::DivOp>(
      {op.getSelf(), op.getOther()},
      {e.attr("rounding_mode", kt::RoundingModeAttr::get(
                                   op.getContext(), kt::RoundingMode::floor))});
  setBinary(op, e, grads, g, e.neg(e.mul(g, q)));
  return success();
}

LogicalResult vjpFmod(kt::FmodOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  // self: g; other: -g * trunc(self / other) (derivatives.yaml).
  Value q = e.op<kt::DivOp>(
      {op.getSelf(), op.getOther()},
      {e.attr("rounding_mode", kt::RoundingModeAttr::get(
                                   op.getContext(), kt::RoundingMode::trunc))});
  setBinary(op, e, grads, g, e.neg(e.mul(g, q)));
  return success();
}

LogicalResult vjpAtan2(kt::Atan2Op op, GradEmitter &e, Value g, Grads &grads) {
  // atan2_backward: with r = g / (self^2 + other^2),
  // self: other * r, other: -self * r.
  Value x = op.getSelf(), y = op.getOther();
  Value r = e.div(g, e.add(e.mul(x, x), e.mul(y, y)));
  setBinary(op, e, grads, e.mul(y, r), e.neg(e.mul(x, r)));
  return success();
}

LogicalResult vjpZeta(kt::ZetaOp op, GradEmitter &e, Value g, Grads &grads) {
  // derivatives.yaml: other: grad * -self * zeta(self + 1, other); PyTorch
  // has no gradient for self (not_implemented): none is given here either.
  Value x = op.getSelf(), q = op.getOther();
  Value z = e.op<kt::ZetaOp>({e.add(x, e.scalarLike(1, x)), q});
  setBinary(op, e, grads, Value(), e.mul(g, e.neg(e.mul(x, z))));
  return success();
}

LogicalResult vjpWhere(kt::WhereOp op, GradEmitter &e, Value g, Grads &grads) {
  Value c = op.getCondition();
  Value zero = e.scalarLike(0, g);
  for (int i = 1; i < 3; ++i) {
    Value v = op->getOperand(i);
    if (!isFloatValue(v))
      continue;
    Value gi = i == 1 ? e.where(c, g, zero) : e.where(c, zero, g);
    grads[i] = e.unbroadcastTo(gi, v.getType());
  }
  return success();
}

} // namespace

void autodiff::registerElementwiseVJPs(MLIRContext *ctx) {
  attachVJP<kt::NegOp, vjpNeg>(ctx);
  attachVJP<kt::AbsOp, vjpAbs>(ctx);
  attachVJP<kt::ExpOp, vjpExp>(ctx);
  attachVJP<kt::LogOp, vjpLog>(ctx);
  attachVJP<kt::Log1pOp, vjpLog1p>(ctx);
  attachVJP<kt::Expm1Op, vjpExpm1>(ctx);
  attachVJP<kt::SqrtOp, vjpSqrt>(ctx);
  attachVJP<kt::RsqrtOp, vjpRsqrt>(ctx);
  attachVJP<kt::SinOp, vjpSin>(ctx);
  attachVJP<kt::CosOp, vjpCos>(ctx);
  attachVJP<kt::TanhOp, vjpTanh>(ctx);
  attachVJP<kt::SigmoidOp, vjpSigmoid>(ctx);
  attachVJP<kt::ReluOp, vjpRelu>(ctx);
  attachVJP<kt::SiluOp, vjpSilu>(ctx);
  attachVJP<kt::ErfOp, vjpErf>(ctx);
  attachVJP<kt::ReciprocalOp, vjpReciprocal>(ctx);
  attachVJP<kt::GeluOp, vjpGelu>(ctx);
  attachVJP<kt::ClampOp, vjpClamp>(ctx);
  attachVJP<kt::CastOp, vjpCast>(ctx);
  // Zero gradient almost everywhere (PyTorch returns zeros).
  attachVJP<kt::FloorOp, vjpNone<kt::FloorOp>>(ctx);
  attachVJP<kt::CeilOp, vjpNone<kt::CeilOp>>(ctx);
  attachVJP<kt::RoundOp, vjpNone<kt::RoundOp>>(ctx);
  attachVJP<kt::SignOp, vjpNone<kt::SignOp>>(ctx);
  // Bool results: never on a gradient path; attached so that every op says
  // what it does.
  attachVJP<kt::LogicalNotOp, vjpNone<kt::LogicalNotOp>>(ctx);
  attachVJP<kt::IsnanOp, vjpNone<kt::IsnanOp>>(ctx);
  attachVJP<kt::EqOp, vjpNone<kt::EqOp>>(ctx);
  attachVJP<kt::NeOp, vjpNone<kt::NeOp>>(ctx);
  attachVJP<kt::LtOp, vjpNone<kt::LtOp>>(ctx);
  attachVJP<kt::LeOp, vjpNone<kt::LeOp>>(ctx);
  attachVJP<kt::GtOp, vjpNone<kt::GtOp>>(ctx);
  attachVJP<kt::GeOp, vjpNone<kt::GeOp>>(ctx);
  attachVJP<kt::LogicalAndOp, vjpNone<kt::LogicalAndOp>>(ctx);
  attachVJP<kt::LogicalOrOp, vjpNone<kt::LogicalOrOp>>(ctx);
  attachVJP<kt::LogicalXorOp, vjpNone<kt::LogicalXorOp>>(ctx);
  // Integer and bool operands only: no gradient.
  attachVJP<kt::BitwiseAndOp, vjpNone<kt::BitwiseAndOp>>(ctx);
  attachVJP<kt::BitwiseOrOp, vjpNone<kt::BitwiseOrOp>>(ctx);
  attachVJP<kt::BitwiseXorOp, vjpNone<kt::BitwiseXorOp>>(ctx);
  attachVJP<kt::BitwiseNotOp, vjpNone<kt::BitwiseNotOp>>(ctx);

  attachVJP<kt::AddOp, vjpAdd>(ctx);
  attachVJP<kt::SubOp, vjpSub>(ctx);
  attachVJP<kt::MulOp, vjpMul>(ctx);
  attachVJP<kt::DivOp, vjpDiv>(ctx);
  attachVJP<kt::PowOp, vjpPow>(ctx);
  attachVJP<kt::MaximumOp, vjpMinMax<kt::MaximumOp, true>>(ctx);
  attachVJP<kt::MinimumOp, vjpMinMax<kt::MinimumOp, false>>(ctx);
  attachVJP<kt::RemainderOp, vjpRemainder>(ctx);
  attachVJP<kt::FmodOp, vjpFmod>(ctx);
  attachVJP<kt::Atan2Op, vjpAtan2>(ctx);
  attachVJP<kt::SpecialOp, vjpSpecial>(ctx);
  attachVJP<kt::ZetaOp, vjpZeta>(ctx);
  attachVJP<kt::WhereOp, vjpWhere>(ctx);
}
