//===- Elementwise.cpp - kt pointwise ops to linalg.generic ---------------===//
//
// Part of Kiln. Every pointwise kt op becomes one linalg.generic whose
// indexing maps broadcast the operands (NumPy rules). The scalar body follows
// PyTorch: NaN-propagating maximum/minimum and clamp, Python rounding of
// integer div/remainder, C rounding of fmod, round half to even, `.to(dtype)` casts. f16/bf16
// compute in f32 and round once. uint8 (`ui8`) uses arith's unsigned ops
// (comparisons, division, remainder, max/min; abs, relu and sign know it is
// never negative); add/sub/mul/neg wrap the same bits either way.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

Value cst(OpBuilder &b, Location loc, Type t, double v) {
  return scalarConst(b, loc, t, v);
}

/// Applies `fn` to float scalars in their compute type (f32 for halves).
Value inOpmath(OpBuilder &b, Location loc, ValueRange args,
               llvm::function_ref<Value(ValueRange)> fn) {
  Type t = args[0].getType();
  if (!isHalf(t))
    return fn(args);
  SmallVector<Value> ext;
  for (Value a : args)
    ext.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), a));
  Value r = fn(ext);
  return arith::TruncFOp::create(b, loc, t, r);
}

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }
bool isUnsigned(Value v) { return isUnsignedInt(v.getType()); }

Value sigmoidOf(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(
      b, loc, cst(b, loc, t, 1),
      arith::AddFOp::create(b, loc, cst(b, loc, t, 1), e));
}

// --- unary ------------------------------------------------------------------

template <typename MathOp> struct FloatUnary {
  static Value build(OpBuilder &b, Location loc, ValueRange a) {
    return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
      return MathOp::create(b, loc, x[0]);
    });
  }
};

Value scalar(kt::NegOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::NegFOp::create(b, loc, a[0]);
  return arith::SubIOp::create(b, loc, cst(b, loc, a[0].getType(), 0), a[0]);
}
Value scalar(kt::AbsOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return math::AbsFOp::create(b, loc, a[0]);
  if (isUnsigned(a[0]))
    return a[0];
  Type t = a[0].getType();
  Value neg = arith::SubIOp::create(b, loc, cst(b, loc, t, 0), a[0]);
  Value isNeg = arith::CmpIOp::create(b, loc, CmpIPredicate::slt, a[0],
                                      cst(b, loc, t, 0));
  return arith::SelectOp::create(b, loc, isNeg, neg, a[0]);
}
Value scalar(kt::ExpOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::ExpOp>::build(b, loc, a);
}
Value scalar(kt::LogOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::LogOp>::build(b, loc, a);
}
Value scalar(kt::Log1pOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::Log1pOp>::build(b, loc, a);
}
Value scalar(kt::Expm1Op, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::ExpM1Op>::build(b, loc, a);
}
Value scalar(kt::SqrtOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::SqrtOp>::build(b, loc, a);
}
Value scalar(kt::RsqrtOp, OpBuilder &b, Location loc, ValueRange a) {
  return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
    return arith::DivFOp::create(b, loc, cst(b, loc, x[0].getType(), 1),
                                 math::SqrtOp::create(b, loc, x[0]));
  });
}
Value scalar(kt::SinOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::SinOp>::build(b, loc, a);
}
Value scalar(kt::CosOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::CosOp>::build(b, loc, a);
}
Value scalar(kt::TanhOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::TanhOp>::build(b, loc, a);
}
Value scalar(kt::ErfOp, OpBuilder &b, Location loc, ValueRange a) {
  return FloatUnary<math::ErfOp>::build(b, loc, a);
}
Value scalar(kt::SigmoidOp, OpBuilder &b, Location loc, ValueRange a) {
  return inOpmath(b, loc, a,
                  [&](ValueRange x) { return sigmoidOf(b, loc, x[0]); });
}
Value scalar(kt::SiluOp, OpBuilder &b, Location loc, ValueRange a) {
  return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
    return arith::MulFOp::create(b, loc, x[0], sigmoidOf(b, loc, x[0]));
  });
}
Value scalar(kt::ReciprocalOp, OpBuilder &b, Location loc, ValueRange a) {
  return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
    return arith::DivFOp::create(b, loc, cst(b, loc, x[0].getType(), 1), x[0]);
  });
}
Value scalar(kt::ReluOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isUnsigned(a[0]))
    return a[0];
  Type t = a[0].getType();
  Value zero = cst(b, loc, t, 0);
  // x < 0 ? 0 : x keeps NaN and -0.0.
  Value neg =
      isFloat(a[0])
          ? (Value)arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, a[0], zero)
          : (Value)arith::CmpIOp::create(b, loc, CmpIPredicate::slt, a[0],
                                         zero);
  return arith::SelectOp::create(b, loc, neg, zero, a[0]);
}
Value scalar(kt::FloorOp, OpBuilder &b, Location loc, ValueRange a) {
  if (!isFloat(a[0]))
    return a[0];
  return math::FloorOp::create(b, loc, a[0]);
}
Value scalar(kt::CeilOp, OpBuilder &b, Location loc, ValueRange a) {
  if (!isFloat(a[0]))
    return a[0];
  return math::CeilOp::create(b, loc, a[0]);
}
Value scalar(kt::RoundOp, OpBuilder &b, Location loc, ValueRange a) {
  if (!isFloat(a[0]))
    return a[0];
  return math::RoundEvenOp::create(b, loc, a[0]);
}
Value scalar(kt::SignOp, OpBuilder &b, Location loc, ValueRange a) {
  Type t = a[0].getType();
  Value zero = cst(b, loc, t, 0);
  Value gt, lt;
  if (isFloat(a[0])) {
    gt = arith::CmpFOp::create(b, loc, CmpFPredicate::OGT, a[0], zero);
    lt = arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, a[0], zero);
  } else if (isUnsigned(a[0])) {
    gt = arith::CmpIOp::create(b, loc, CmpIPredicate::ne, a[0], zero);
    lt = cst(b, loc, b.getI1Type(), 0);
  } else {
    gt = arith::CmpIOp::create(b, loc, CmpIPredicate::sgt, a[0], zero);
    lt = arith::CmpIOp::create(b, loc, CmpIPredicate::slt, a[0], zero);
  }
  Value r = arith::SelectOp::create(b, loc, lt, cst(b, loc, t, -1), zero);
  return arith::SelectOp::create(b, loc, gt, cst(b, loc, t, 1), r);
}
Value scalar(kt::LogicalNotOp, OpBuilder &b, Location loc, ValueRange a) {
  Value nz = toBool(b, loc, a[0]);
  return arith::XOrIOp::create(b, loc, nz, cst(b, loc, b.getI1Type(), 1));
}
Value scalar(kt::IsnanOp, OpBuilder &b, Location loc, ValueRange a) {
  if (!isFloat(a[0]))
    return cst(b, loc, b.getI1Type(), 0);
  return arith::CmpFOp::create(b, loc, CmpFPredicate::UNO, a[0], a[0]);
}

Value gelu(kt::GeluOp op, OpBuilder &b, Location loc, ValueRange a) {
  bool tanhApprox = op.getApproximate() == kt::GeluApproximate::tanh;
  return inOpmath(b, loc, a, [&](ValueRange xs) -> Value {
    Value x = xs[0];
    Type t = x.getType();
    Value half = cst(b, loc, t, 0.5), one = cst(b, loc, t, 1);
    Value inner;
    if (tanhApprox) {
      Value x3 =
          arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
      Value poly = arith::AddFOp::create(
          b, loc, x,
          arith::MulFOp::create(b, loc, cst(b, loc, t, 0.044715), x3));
      inner = math::TanhOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, cst(b, loc, t, std::sqrt(2.0 / M_PI)),
                                poly));
    } else {
      inner = math::ErfOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, cst(b, loc, t, M_SQRT1_2)));
    }
    Value hx = arith::MulFOp::create(b, loc, half, x);
    return arith::MulFOp::create(b, loc, hx,
                                 arith::AddFOp::create(b, loc, one, inner));
  });
}

// --- binary -----------------------------------------------------------------

#define KT_ARITH_BINARY(OP, FOP, IOP, UOP)                                     \
  Value scalar(kt::OP, OpBuilder &b, Location loc, ValueRange a) {             \
    if (isFloat(a[0]))                                                         \
      return inOpmath(b, loc, a, [&](ValueRange x) -> Value {                  \
        return arith::FOP::create(b, loc, x[0], x[1]);                         \
      });                                                                      \
    if (isUnsigned(a[0]))                                                      \
      return arith::UOP::create(b, loc, a[0], a[1]);                           \
    return arith::IOP::create(b, loc, a[0], a[1]);                             \
  }
KT_ARITH_BINARY(AddOp, AddFOp, AddIOp, AddIOp)
KT_ARITH_BINARY(SubOp, SubFOp, SubIOp, SubIOp)
KT_ARITH_BINARY(MulOp, MulFOp, MulIOp, MulIOp)
KT_ARITH_BINARY(MaximumOp, MaximumFOp, MaxSIOp, MaxUIOp)
KT_ARITH_BINARY(MinimumOp, MinimumFOp, MinSIOp, MinUIOp)
#undef KT_ARITH_BINARY

/// Integer power by squaring (64 rounds, wrap-around); negative exponents as
/// torch.pow: 1 for base 1, +-1 for base -1, else 0.
Value intPow(OpBuilder &b, Location loc, Value base, Value exp) {
  Type t = base.getType();
  Value zero = cst(b, loc, t, 0), one = cst(b, loc, t, 1);
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, t.getIntOrFloatBitWidth());
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{one, base, exp},
      [&](OpBuilder &nb, Location nl, Value, ValueRange it) {
        Value r = it[0], p = it[1], e = it[2];
        Value bit = arith::AndIOp::create(nb, nl, e, one);
        Value odd = arith::CmpIOp::create(nb, nl, CmpIPredicate::ne, bit, zero);
        Value rp = arith::MulIOp::create(nb, nl, r, p);
        r = arith::SelectOp::create(nb, nl, odd, rp, r);
        p = arith::MulIOp::create(nb, nl, p, p);
        e = arith::ShRUIOp::create(nb, nl, e, one);
        scf::YieldOp::create(nb, nl, ValueRange{r, p, e});
      });
  Value pos = loop.getResult(0);
  Value isOne = arith::CmpIOp::create(b, loc, CmpIPredicate::eq, base, one);
  Value isMinusOne = arith::CmpIOp::create(b, loc, CmpIPredicate::eq, base,
                                           cst(b, loc, t, -1));
  Value expOdd = arith::CmpIOp::create(
      b, loc, CmpIPredicate::ne, arith::AndIOp::create(b, loc, exp, one), zero);
  Value m1 = arith::SelectOp::create(b, loc, expOdd, cst(b, loc, t, -1), one);
  Value neg = arith::SelectOp::create(
      b, loc, isOne, one,
      arith::SelectOp::create(b, loc, isMinusOne, m1, zero));
  if (isUnsignedInt(t)) // an unsigned exponent is never negative
    return pos;
  Value expNeg = arith::CmpIOp::create(b, loc, CmpIPredicate::slt, exp, zero);
  return arith::SelectOp::create(b, loc, expNeg, neg, pos);
}
Value scalar(kt::PowOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
      return math::PowFOp::create(b, loc, x[0], x[1]);
    });
  return intPow(b, loc, a[0], a[1]);
}

/// A divisor safe for x86 division: -1 and 0 are replaced by 1 (the callers
/// select the -1 result; integer division by zero gives 0 in compiled code,
/// where the interpreter reports an error).
Value safeDivisor(OpBuilder &b, Location loc, Value y, Value &isMinusOne) {
  Type t = y.getType();
  // An unsigned divisor is never -1 (255 is 255).
  isMinusOne = isUnsignedInt(t) ? cst(b, loc, b.getI1Type(), 0)
                                : (Value)arith::CmpIOp::create(
                                      b, loc, CmpIPredicate::eq, y,
                                      cst(b, loc, t, -1));
  Value isZero =
      arith::CmpIOp::create(b, loc, CmpIPredicate::eq, y, cst(b, loc, t, 0));
  Value bad = arith::OrIOp::create(b, loc, isMinusOne, isZero);
  return arith::SelectOp::create(b, loc, bad, cst(b, loc, t, 1), y);
}

Value floatRemainder(OpBuilder &b, Location loc, Value x, Value y) {
  Type t = x.getType();
  Value zero = cst(b, loc, t, 0);
  Value mod = arith::RemFOp::create(b, loc, x, y);
  Value nz = arith::CmpFOp::create(b, loc, CmpFPredicate::ONE, mod, zero);
  Value yNeg = arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, y, zero);
  Value mNeg = arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, mod, zero);
  Value differ = arith::XOrIOp::create(b, loc, yNeg, mNeg);
  Value fix = arith::AndIOp::create(b, loc, nz, differ);
  return arith::SelectOp::create(b, loc, fix,
                                 arith::AddFOp::create(b, loc, mod, y), mod);
}

Value scalar(kt::RemainderOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return inOpmath(b, loc, a, [&](ValueRange x) {
      return floatRemainder(b, loc, x[0], x[1]);
    });
  Type t = a[0].getType();
  Value zero = cst(b, loc, t, 0);
  Value isM1;
  Value y = safeDivisor(b, loc, a[1], isM1);
  if (isUnsigned(a[0])) // unsigned: the remainder is never negative
    return arith::RemUIOp::create(b, loc, a[0], y);
  Value r = arith::RemSIOp::create(b, loc, a[0], y);
  Value nz = arith::CmpIOp::create(b, loc, CmpIPredicate::ne, r, zero);
  Value differ = arith::XOrIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, CmpIPredicate::slt, r, zero),
      arith::CmpIOp::create(b, loc, CmpIPredicate::slt, y, zero));
  Value fix = arith::AndIOp::create(b, loc, nz, differ);
  r = arith::SelectOp::create(b, loc, fix, arith::AddIOp::create(b, loc, r, y),
                              r);
  return arith::SelectOp::create(b, loc, isM1, zero, r);
}

/// C's fmod: arith.remf on floats (exact, so f16/bf16 in f32 round back
/// unchanged); on integers the sign of the dividend, `x fmod -1` is 0.
Value scalar(kt::FmodOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
      return arith::RemFOp::create(b, loc, x[0], x[1]);
    });
  Value isM1;
  Value y = safeDivisor(b, loc, a[1], isM1);
  if (isUnsigned(a[0]))
    return arith::RemUIOp::create(b, loc, a[0], y);
  Value r = arith::RemSIOp::create(b, loc, a[0], y);
  return arith::SelectOp::create(b, loc, isM1, cst(b, loc, a[0].getType(), 0),
                                 r);
}

Value scalar(kt::Atan2Op, OpBuilder &b, Location loc, ValueRange a) {
  return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
    return math::Atan2Op::create(b, loc, x[0], x[1]);
  });
}

/// The runtime function of kt.special / kt.zeta: `kiln_cpu_special_<name>`.
std::string specialSymbol(Operation *op) {
  if (auto s = dyn_cast<kt::SpecialOp>(op))
    return ("kiln_cpu_special_" + kt::stringifySpecialFn(s.getFn())).str();
  return "kiln_cpu_special_zeta";
}

/// Declares (once per module) the runtime's double-precision function that
/// `op` (kt.special or kt.zeta) calls per element: f64 operands, an i64
/// order first for polygamma.
void declareSpecial(OpBuilder &b, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string sym = specialSymbol(op);
  if (module.lookupSymbol(sym))
    return;
  Type f64 = b.getF64Type();
  SmallVector<Type> argTypes;
  auto s = dyn_cast<kt::SpecialOp>(op);
  if (s && s.getFn() == kt::SpecialFn::polygamma)
    argTypes.push_back(b.getI64Type());
  argTypes.append(op->getNumOperands(), f64);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(
      b, module.getLoc(), sym,
      FunctionType::get(b.getContext(), argTypes, {f64}));
  fn.setPrivate();
}

/// A call to the compiled-code runtime's function (kiln/rt/
/// SpecialFunctions.h; double precision; declared by declareSpecial): the
/// float operands are extended to f64 and the result rounded to f32 (and
/// then to f16/bf16), as the interpreter computes. `n`, if set, is passed first.
Value specialCall(OpBuilder &b, Location loc, StringRef sym, ValueRange a,
                  std::optional<int64_t> n = std::nullopt) {
  Type f64 = b.getF64Type();
  Type t = a[0].getType();
  SmallVector<Value> args;
  if (n)
    args.push_back(arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(*n)));
  for (Value v : a)
    args.push_back(t.isF64() ? v : (Value)arith::ExtFOp::create(b, loc, f64, v));
  Value r = func::CallOp::create(b, loc, sym, TypeRange{f64}, args).getResult(0);
  if (t.isF64())
    return r;
  // f16/bf16 through f32, as PyTorch rounds its float (opmath) result and
  // the interpreter its double: one direct f64 -> f16 rounding differs
  // from those at ties of the f32 value (f16 i1(17 * 2^-24)).
  r = arith::TruncFOp::create(b, loc, b.getF32Type(), r);
  return t.isF32() ? r : (Value)arith::TruncFOp::create(b, loc, t, r);
}

Value scalar(kt::SpecialOp op, OpBuilder &b, Location loc, ValueRange a) {
  return specialCall(b, loc, specialSymbol(op), a,
                     op.getFn() == kt::SpecialFn::polygamma
                         ? std::optional<int64_t>(op.getNAttr().getInt())
                         : std::nullopt);
}

Value scalar(kt::ZetaOp op, OpBuilder &b, Location loc, ValueRange a) {
  return specialCall(b, loc, specialSymbol(op), a);
}

/// PyTorch's div_floor_floating.
Value floatFloorDiv(OpBuilder &b, Location loc, Value x, Value y) {
  Type t = x.getType();
  Value zero = cst(b, loc, t, 0), one = cst(b, loc, t, 1);
  Value q = arith::DivFOp::create(b, loc, x, y);
  Value mod = arith::RemFOp::create(b, loc, x, y);
  Value div =
      arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, x, mod), y);
  Value nz = arith::CmpFOp::create(b, loc, CmpFPredicate::ONE, mod, zero);
  Value differ = arith::XOrIOp::create(
      b, loc, arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, y, zero),
      arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, mod, zero));
  div =
      arith::SelectOp::create(b, loc, arith::AndIOp::create(b, loc, nz, differ),
                              arith::SubFOp::create(b, loc, div, one), div);
  Value fl = math::FloorOp::create(b, loc, div);
  Value gtHalf = arith::CmpFOp::create(b, loc, CmpFPredicate::OGT,
                                       arith::SubFOp::create(b, loc, div, fl),
                                       cst(b, loc, t, 0.5));
  fl = arith::SelectOp::create(b, loc, gtHalf,
                               arith::AddFOp::create(b, loc, fl, one), fl);
  Value divZero = arith::CmpFOp::create(b, loc, CmpFPredicate::OEQ, div, zero);
  // copysign(0, q) through the sign bit (math.copysign has no libm
  // lowering in convert-math-to-libm).
  Type bits = b.getIntegerType(cast<FloatType>(t).getWidth());
  Value qNeg = arith::CmpIOp::create(b, loc, CmpIPredicate::slt,
                                     arith::BitcastOp::create(b, loc, bits, q),
                                     cst(b, loc, bits, 0));
  Value signedZero =
      arith::SelectOp::create(b, loc, qNeg, cst(b, loc, t, -0.0), zero);
  Value r = arith::SelectOp::create(b, loc, divZero, signedZero, fl);
  Value yZero = arith::CmpFOp::create(b, loc, CmpFPredicate::OEQ, y, zero);
  return arith::SelectOp::create(b, loc, yZero, q, r);
}

Value divide(kt::DivOp op, OpBuilder &b, Location loc, ValueRange a) {
  std::optional<kt::RoundingMode> mode = op.getRoundingMode();
  if (isFloat(a[0]))
    return inOpmath(b, loc, a, [&](ValueRange x) -> Value {
      if (!mode)
        return arith::DivFOp::create(b, loc, x[0], x[1]);
      if (*mode == kt::RoundingMode::trunc)
        return math::TruncOp::create(b, loc,
                                     arith::DivFOp::create(b, loc, x[0], x[1]));
      return floatFloorDiv(b, loc, x[0], x[1]);
    });
  Type t = a[0].getType();
  Value isM1;
  Value y = safeDivisor(b, loc, a[1], isM1);
  // Unsigned: floor and trunc are the same quotient.
  Value q = isUnsigned(a[0]) ? (Value)arith::DivUIOp::create(b, loc, a[0], y)
            : mode && *mode == kt::RoundingMode::floor
                ? (Value)arith::FloorDivSIOp::create(b, loc, a[0], y)
                : (Value)arith::DivSIOp::create(b, loc, a[0], y);
  Value isZero =
      arith::CmpIOp::create(b, loc, CmpIPredicate::eq, a[1], cst(b, loc, t, 0));
  q = arith::SelectOp::create(b, loc, isZero, cst(b, loc, t, 0), q);
  Value neg = arith::SubIOp::create(b, loc, cst(b, loc, t, 0), a[0]);
  return arith::SelectOp::create(b, loc, isM1, neg, q);
}

Value compare(OpBuilder &b, Location loc, ValueRange a, CmpFPredicate fp,
              CmpIPredicate sp, CmpIPredicate up) {
  if (isFloat(a[0]))
    return arith::CmpFOp::create(b, loc, fp, a[0], a[1]);
  bool isUnsignedCmp = a[0].getType().isInteger(1) || isUnsigned(a[0]);
  return arith::CmpIOp::create(b, loc, isUnsignedCmp ? up : sp, a[0], a[1]);
}
#define KT_COMPARE(OP, F, S, U)                                                \
  Value scalar(kt::OP, OpBuilder &b, Location loc, ValueRange a) {             \
    return compare(b, loc, a, CmpFPredicate::F, CmpIPredicate::S,              \
                   CmpIPredicate::U);                                          \
  }
KT_COMPARE(EqOp, OEQ, eq, eq)
KT_COMPARE(NeOp, UNE, ne, ne)
KT_COMPARE(LtOp, OLT, slt, ult)
KT_COMPARE(LeOp, OLE, sle, ule)
KT_COMPARE(GtOp, OGT, sgt, ugt)
KT_COMPARE(GeOp, OGE, sge, uge)
#undef KT_COMPARE

Value scalar(kt::LogicalAndOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::AndIOp::create(b, loc, toBool(b, loc, a[0]),
                               toBool(b, loc, a[1]));
}
Value scalar(kt::LogicalOrOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::OrIOp::create(b, loc, toBool(b, loc, a[0]),
                              toBool(b, loc, a[1]));
}
Value scalar(kt::LogicalXorOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::XOrIOp::create(b, loc, toBool(b, loc, a[0]),
                               toBool(b, loc, a[1]));
}
// Bitwise ops on integers and i1 (where and/or/xor are the logical ones).
Value scalar(kt::BitwiseAndOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::AndIOp::create(b, loc, a[0], a[1]);
}
Value scalar(kt::BitwiseOrOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::OrIOp::create(b, loc, a[0], a[1]);
}
Value scalar(kt::BitwiseXorOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::XOrIOp::create(b, loc, a[0], a[1]);
}
Value scalar(kt::BitwiseNotOp, OpBuilder &b, Location loc, ValueRange a) {
  Type t = a[0].getType();
  Value ones = arith::ConstantOp::create(
      b, loc, t, b.getIntegerAttr(t, APInt::getAllOnes(t.getIntOrFloatBitWidth())));
  return arith::XOrIOp::create(b, loc, a[0], ones);
}
Value scalar(kt::WhereOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
}

/// clamp as PyTorch computes it: `x < min ? min : x`, then `x > max ? max :
/// x`. A bound equal to x leaves x (clamp(-0.0, min=0.0) is -0.0, unlike
/// maximum), NaN stays NaN, a single NaN bound is ignored (the comparison
/// is false) and with both bounds a NaN bound gives NaN everywhere.
Value clamp(kt::ClampOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Type t = x.getType();
  bool fl = isFloat(x);
  std::optional<APFloat> lo = op.getMin(), hi = op.getMax();
  if (fl && lo && hi && (lo->isNaN() || hi->isNaN()))
    return cst(b, loc, t, std::nan(""));
  if (lo) {
    Value c = cst(b, loc, t, lo->convertToDouble());
    x = fl ? (Value)arith::SelectOp::create(
                 b, loc,
                 arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, x, c), c, x)
           : isUnsigned(x) ? (Value)arith::MaxUIOp::create(b, loc, x, c)
                           : (Value)arith::MaxSIOp::create(b, loc, x, c);
  }
  if (hi) {
    Value c = cst(b, loc, t, hi->convertToDouble());
    x = fl ? (Value)arith::SelectOp::create(
                 b, loc,
                 arith::CmpFOp::create(b, loc, CmpFPredicate::OGT, x, c), c, x)
           : isUnsigned(x) ? (Value)arith::MinUIOp::create(b, loc, x, c)
                           : (Value)arith::MinSIOp::create(b, loc, x, c);
  }
  return x;
}

/// Lowers `OpTy` with the `scalar(OpTy, ...)` overload above.
template <typename OpTy>
struct PointwiseLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    // Integer division / remainder by zero is a run-time error
    // (RuntimeChecks.h); the element gives 0.
    int64_t divByZero = -1;
    if constexpr (std::is_same_v<OpTy, kt::DivOp> ||
                  std::is_same_v<OpTy, kt::RemainderOp> ||
                  std::is_same_v<OpTy, kt::FmodOp>) {
      Type e = cast<RankedTensorType>(adaptor.getOperands()[1].getType())
                   .getElementType();
      if (isa<IntegerType>(e))
        divByZero =
            lowering::registerRuntimeError(rewriter, op, "integer division by zero");
    }
    // Mismatched `?` dims (and a result type whose static dims the run-time
    // shape does not match) are run-time errors, as in the interpreter.
    lowering::checkBroadcastCompatible(rewriter, op.getLoc(),
                                       adaptor.getOperands(), type);
    if constexpr (std::is_same_v<OpTy, kt::SpecialOp> ||
                  std::is_same_v<OpTy, kt::ZetaOp>)
      declareSpecial(rewriter, op);
    Value r = buildElementwise(
        rewriter, op.getLoc(), adaptor.getOperands(), type,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (divByZero >= 0) {
            Value y = args[1];
            lowering::emitRuntimeCheck(
                b, loc,
                arith::CmpIOp::create(b, loc, CmpIPredicate::eq, y,
                                      cst(b, loc, y.getType(), 0)),
                divByZero, Value(), Value());
          }
          if constexpr (std::is_same_v<OpTy, kt::GeluOp>)
            return gelu(op, b, loc, args);
          else if constexpr (std::is_same_v<OpTy, kt::ClampOp>)
            return clamp(op, b, loc, args);
          else if constexpr (std::is_same_v<OpTy, kt::DivOp>)
            return divide(op, b, loc, args);
          else if constexpr (std::is_same_v<OpTy, kt::CastOp>)
            return convertScalar(b, loc, args[0], type.getElementType());
          else
            return scalar(op, b, loc, args);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void kiln::populateKTElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<
      PointwiseLowering<kt::NegOp>, PointwiseLowering<kt::AbsOp>,
      PointwiseLowering<kt::ExpOp>, PointwiseLowering<kt::LogOp>,
      PointwiseLowering<kt::Log1pOp>, PointwiseLowering<kt::Expm1Op>,
      PointwiseLowering<kt::SqrtOp>, PointwiseLowering<kt::RsqrtOp>,
      PointwiseLowering<kt::SinOp>, PointwiseLowering<kt::CosOp>,
      PointwiseLowering<kt::TanhOp>, PointwiseLowering<kt::SigmoidOp>,
      PointwiseLowering<kt::ReluOp>, PointwiseLowering<kt::SiluOp>,
      PointwiseLowering<kt::ErfOp>, PointwiseLowering<kt::ReciprocalOp>,
      PointwiseLowering<kt::FloorOp>, PointwiseLowering<kt::CeilOp>,
      PointwiseLowering<kt::RoundOp>, PointwiseLowering<kt::SignOp>,
      PointwiseLowering<kt::LogicalNotOp>, PointwiseLowering<kt::IsnanOp>,
      PointwiseLowering<kt::GeluOp>, PointwiseLowering<kt::ClampOp>,
      PointwiseLowering<kt::CastOp>, PointwiseLowering<kt::AddOp>,
      PointwiseLowering<kt::SubOp>, PointwiseLowering<kt::MulOp>,
      PointwiseLowering<kt::PowOp>, PointwiseLowering<kt::MaximumOp>,
      PointwiseLowering<kt::MinimumOp>, PointwiseLowering<kt::RemainderOp>,
      PointwiseLowering<kt::EqOp>, PointwiseLowering<kt::NeOp>,
      PointwiseLowering<kt::LtOp>, PointwiseLowering<kt::LeOp>,
      PointwiseLowering<kt::GtOp>, PointwiseLowering<kt::GeOp>,
      PointwiseLowering<kt::LogicalAndOp>, PointwiseLowering<kt::LogicalOrOp>,
      PointwiseLowering<kt::DivOp>, PointwiseLowering<kt::WhereOp>,
      PointwiseLowering<kt::FmodOp>, PointwiseLowering<kt::Atan2Op>,
      PointwiseLowering<kt::SpecialOp>, PointwiseLowering<kt::ZetaOp>,
      PointwiseLowering<kt::BitwiseAndOp>, PointwiseLowering<kt::BitwiseOrOp>,
      PointwiseLowering<kt::BitwiseXorOp>, PointwiseLowering<kt::BitwiseNotOp>,
      PointwiseLowering<kt::LogicalXorOp>>(ctx);
}
