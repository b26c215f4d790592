//===- OnlineStats.cpp - One-read row max and sum of exp ------------------===//
//
// Part of Kiln. The element step of the online max and sum of exp
// (onlineLseStep, KTToLinalg.h) and the rescale that merges two partial
// sums (onlineLseRescale), and the merge of row moments (rowMomentsMerge,
// layer_norm's one-read statistics). They build plain arith/math ops on scalars or
// vectors alike: the same code is the body of cross_entropy's row-statistics
// generic (KTToLinalg, Loss.cpp) and the per-lane update of kiln-cpu's vector
// row kernel (CPU/OnlineRowStats.cpp), so the two cannot disagree.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;

namespace {

/// A float constant of `like`'s type (a splat for a vector).
Value constLike(OpBuilder &b, Location loc, Value like, double v) {
  Type t = like.getType();
  auto ft = cast<FloatType>(getElementTypeOrSelf(t));
  TypedAttr a = b.getFloatAttr(ft, v);
  if (auto vt = dyn_cast<VectorType>(t))
    a = DenseElementsAttr::get(vt, a);
  return arith::ConstantOp::create(b, loc, a);
}

} // namespace

std::pair<Value, Value> kiln::onlineLseStep(OpBuilder &b, Location loc,
                                            Value x, Value m, Value s,
                                            bool mark) {
  double inf = std::numeric_limits<double>::infinity();
  Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, m);
  // -|x - m|: the new element relative to the old max, or the old max
  // relative to the new one.
  Value d = arith::SelectOp::create(b, loc, gt,
                                    arith::SubFOp::create(b, loc, m, x),
                                    arith::SubFOp::create(b, loc, x, m));
  Value minusInf = constLike(b, loc, x, -inf);
  Value isMinusInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, minusInf);
  d = arith::SelectOp::create(b, loc, isMinusInf, minusInf, d);
  auto exp = math::ExpOp::create(b, loc, d);
  if (mark)
    exp->setAttr(kOnlineLseAttr, b.getUnitAttr());
  Value e = exp;
  // exp(x - x): 1, NaN for +-inf or NaN.
  Value self = arith::AddFOp::create(b, loc, arith::SubFOp::create(b, loc, x, x),
                                     constLike(b, loc, x, 1.0));
  Type st = s.getType();
  if (st != x.getType()) {
    e = arith::ExtFOp::create(b, loc, st, e);
    self = arith::ExtFOp::create(b, loc, st, self);
  }
  Value grown = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, s, e),
                                      self);
  Value added = arith::AddFOp::create(b, loc, s, e);
  Value s2 = arith::SelectOp::create(b, loc, gt, grown, added);
  Value m2 = arith::SelectOp::create(b, loc, gt, x, m);
  return {m2, s2};
}

Value kiln::onlineLseRescale(OpBuilder &b, Location loc, Value from,
                             Value to) {
  Value same =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, from, to);
  Value f = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, from, to));
  return arith::SelectOp::create(b, loc, same, constLike(b, loc, from, 1.0), f);
}

std::tuple<Value, Value, Value>
kiln::rowMomentsMerge(OpBuilder &b, Location loc, Value n, Value mean,
                      Value m2, Value nb, Value meanb, Value m2b, bool mark) {
  Value n2 = arith::AddFOp::create(b, loc, n, nb);
  auto div = arith::DivFOp::create(b, loc, nb, n2);
  if (mark)
    div->setAttr(kRowMomentsAttr, b.getUnitAttr());
  Value f = div;
  Value d = arith::SubFOp::create(b, loc, meanb, mean);
  Value mean2 = arith::AddFOp::create(b, loc, mean,
                                      arith::MulFOp::create(b, loc, d, f));
  Value w = arith::MulFOp::create(b, loc, n, f);
  Value m22 = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, m2, m2b),
      arith::MulFOp::create(b, loc, d, arith::MulFOp::create(b, loc, d, w)));
  return {n2, mean2, m22};
}
