//===- Loss.cpp - Decompositions of nll_loss and cross_entropy ------------===//
//
// Part of Kiln. As PyTorch's decompositions (`_nll_loss_forward`,
// `_cross_entropy_loss` with label smoothing): gather the target class,
// weight it, zero ignored elements with `where` (never by multiplying, so an
// inf at an ignored position does not give NaN), reduce. Computed in the
// input dtype, f32 for f16/bf16.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

using namespace mlir;

namespace kiln::decompose {
namespace {

/// Per-element terms of a class-index target (shape of the target):
/// `valid` (target != ignore_index), `safe` (the target, 0 where ignored, so
/// that it can index), and `weight` (weight[target], 0 where ignored; 1 where
/// valid without a weight), of element type `f`.
struct ClassTerms {
  Value valid, safe, weight;
};

ClassTerms classTerms(Emitter &e, Value target, Value weight,
                      int64_t ignoreIndex, Type f) {
  ClassTerms t;
  Type it = Emitter::elementTypeOf(target);
  t.valid = e.ne(target, e.scalar((double)ignoreIndex, it));
  t.safe = e.where(t.valid, target, e.scalar(0, it));
  if (weight) {
    // weight[safe] as an embedding lookup in the [C, 1] table.
    Value w = e.embedding(e.unsqueeze(weight, 1), t.safe);
    w = e.squeeze(w, {Emitter::rankOf(w) - 1});
    t.weight = e.where(t.valid, w, e.scalar(0, f));
  } else {
    t.weight = e.cast(t.valid, f);
  }
  return t;
}

/// `weight` [C] shaped to broadcast along the class dim of an input of rank
/// `rank` ([C] for rank 1, [C, 1, ...] otherwise).
Value classView(Emitter &e, Value weight, int64_t rank) {
  for (int64_t i = 0; i < rank - 2; ++i)
    weight = e.unsqueeze(weight, -1);
  return weight;
}

/// nll_loss: -weight[t] * input[.., t, ..], 0 where t == ignore_index;
/// mean divides the sum by the sum of weight[t] over non-ignored elements.
FailureOr<Values> decomposeNllLoss(kt::NllLossOp op, Emitter &e) {
  Value in = e.upcast(op.getInput());
  Type f = Emitter::elementTypeOf(in);
  Value target = op.getTarget();
  Value weight = op.getWeight() ? e.upcast(op.getWeight()) : Value();
  // [C] with a rank-0 target is [1, C] with a [1] target.
  bool vector = Emitter::rankOf(in) == 1;
  if (vector) {
    in = e.unsqueeze(in, 0);
    target = e.unsqueeze(target, 0);
  }
  ClassTerms t = classTerms(e, target, weight, op.getIgnoreIndex(), f);
  Value picked = e.squeeze(e.gather(in, e.unsqueeze(t.safe, 1), 1), {1});
  Value loss = e.neg(picked);
  if (weight)
    loss = e.mul(loss, t.weight);
  loss = e.where(t.valid, loss, e.scalar(0, f));
  Value r;
  switch (op.getReduction()) {
  case kt::Reduction::none:
    r = vector ? e.squeeze(loss, {0}) : loss;
    break;
  case kt::Reduction::sum:
    r = e.sum(loss, std::nullopt, false);
    break;
  case kt::Reduction::mean:
    r = e.div(e.sum(loss, std::nullopt, false),
              e.sum(t.weight, std::nullopt, false));
    break;
  }
  return Values{e.cast(r, Emitter::elementTypeOf(op.getInput()))};
}

/// cross_entropy: log_softmax over the class dim, then
/// * class indices: nll_loss, plus with label smoothing `ls`
///   (1 - ls) * nll + ls / C * smooth, smooth = -sum_c weight[c] * logp[c]
///   (0 where ignored), reduced like nll (mean: divided by the sum of
///   weight[t], or by the number of non-ignored elements without weight);
/// * class probabilities: -sum_c weight[c] * logp[c] * t'[c],
///   t' = t * (1 - ls) + ls / C; mean divides by the number of elements
///   without the class dim.
FailureOr<Values> decomposeCrossEntropy(kt::CrossEntropyOp op, Emitter &e) {
  Type resultElem = Emitter::elementTypeOf(op.getInput());
  Value in = e.upcast(op.getInput());
  Type f = Emitter::elementTypeOf(in);
  int64_t rank = Emitter::rankOf(in);
  int64_t classDim = rank == 1 ? 0 : 1;
  Value weight = op.getWeight() ? e.upcast(op.getWeight()) : Value();
  double ls = op.getLabelSmoothing().convertToDouble();
  kt::Reduction red = op.getReduction();
  OpBuilder &b = e.builder();
  Value logp = e.op<kt::LogSoftmaxOp>(
      {in}, {e.attr("dim", b.getI64IntegerAttr(classDim))});
  Value wlogp = weight ? e.mul(logp, classView(e, weight, rank)) : logp;

  Value target = op.getTarget();
  if (isa<FloatType>(Emitter::elementTypeOf(target))) {
    Value t = e.upcast(target);
    Value prod = e.mul(wlogp, t);
    if (ls > 0.0) {
      // t * (1 - ls) + ls / C, distributed: (1 - ls) * sum(w logp t) +
      // ls * mean_c(w logp).
      prod = e.mul(prod, e.scalar(1.0 - ls, f));
      Value count = e.countAt(in, ArrayRef<int64_t>{classDim}, f);
      prod = e.add(prod, e.mul(wlogp, e.div(e.scalar(ls, f), count)));
    }
    Value loss = e.neg(e.sum(prod, ArrayRef<int64_t>{classDim}, false));
    Value r = loss;
    if (red == kt::Reduction::sum)
      r = e.sum(loss, std::nullopt, false);
    else if (red == kt::Reduction::mean)
      r = e.mean(loss, std::nullopt, false);
    return Values{e.cast(r, resultElem)};
  }

  SmallVector<Value> nllOperands{logp, target};
  if (weight)
    nllOperands.push_back(weight);
  Value nll = e.op<kt::NllLossOp>(
      nllOperands, {e.attr("reduction", op.getReductionAttr()),
                    e.attr("ignore_index", op.getIgnoreIndexAttr())});
  if (ls <= 0.0)
    return Values{e.cast(nll, resultElem)};

  // smooth / C = -mean_c(w logp), 0 where ignored.
  ClassTerms t = classTerms(e, target, weight, op.getIgnoreIndex(), f);
  Value smooth = e.neg(e.mean(wlogp, ArrayRef<int64_t>{classDim}, false));
  smooth = e.where(t.valid, smooth, e.scalar(0, f));
  if (red != kt::Reduction::none)
    smooth = e.sum(smooth, std::nullopt, false);
  if (red == kt::Reduction::mean)
    smooth = e.div(smooth, e.sum(t.weight, std::nullopt, false));
  Value r = e.add(e.mul(nll, e.scalar(1.0 - ls, f)),
                  e.mul(smooth, e.scalar(ls, f)));
  return Values{e.cast(r, resultElem)};
}

} // namespace

void registerLossDecompositions(MLIRContext *ctx) {
  attachDecomposition<kt::NllLossOp, decomposeNllLoss>(ctx);
  attachDecomposition<kt::CrossEntropyOp, decomposeCrossEntropy>(ctx);
}

} // namespace kiln::decompose
