//===- Norm.cpp - Vector-Jacobian rules of softmax, norms and losses ------===//
//
// Part of Kiln. softmax/log_softmax use their result (PyTorch's
// _softmax_backward_data formulas); layer_norm recomputes mean and rstd from
// the input; nll_loss and cross_entropy build the gradient with respect to
// the log-probabilities from a one-hot of the target (ignore_index, class
// weights, label smoothing and every reduction as in PyTorch), then
// cross_entropy goes back through log_softmax. batch_norm (inference form)
// gives input, weight and bias gradients (none for the running statistics);
// batch_norm_train's backward is one kt.batch_norm_backward (into which
// foldNormActivationMasks folds a following relu / relu6 mask on request);
// scaled_dot_product_attention recomputes the attention probabilities.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

LogicalResult vjpSoftmax(kt::SoftmaxOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  Value r = op.getResult();
  int64_t d = kt::wrapDim(op.getDim(), std::max<int64_t>(GradEmitter::rankOf(r), 1));
  if (GradEmitter::rankOf(r) == 0) {
    grads[0] = e.zerosLike(r); // softmax of a scalar is the constant 1
    return success();
  }
  // r * (g - sum(g * r, dim))
  Value s = e.sum(e.mul(g, r), {d}, /*keepdim=*/true);
  grads[0] = e.mul(r, e.sub(g, s));
  return success();
}

LogicalResult vjpLogSoftmax(kt::LogSoftmaxOp op, GradEmitter &e, Value g,
                            Grads &grads) {
  Value r = op.getResult();
  if (GradEmitter::rankOf(r) == 0) {
    grads[0] = e.zerosLike(r);
    return success();
  }
  int64_t d = kt::wrapDim(op.getDim(), GradEmitter::rankOf(r));
  // g - exp(r) * sum(g, dim)
  Value s = e.sum(g, {d}, /*keepdim=*/true);
  grads[0] = e.sub(g, e.mul(e.exp(r), s));
  return success();
}

LogicalResult vjpLayerNorm(kt::LayerNormOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  Value x = op.getInput();
  int64_t r = GradEmitter::rankOf(x);
  int64_t k = op.getNormalizedShape().size();
  SmallVector<int64_t> dims, lead;
  for (int64_t i = 0; i < r; ++i)
    (i >= r - k ? dims : lead).push_back(i);
  // kt.mean divides by the element count, read at run time over `?` dims.
  auto meanOver = [&](Value v) {
    return e.op<kt::MeanOp>({v},
                            {e.attr("dim", e.i64s(dims)),
                             e.attr("keepdim", e.builder().getBoolAttr(true))});
  };
  Value xc = e.sub(x, meanOver(x));
  Value var = meanOver(e.mul(xc, xc));
  Value eps = e.scalarLike(op.getEps().convertToDouble(), x);
  Value rstd = e.op<kt::RsqrtOp>({e.add(var, eps)});
  Value xhat = e.mul(xc, rstd);
  Value gxhat = op.getWeight() ? e.mul(g, op.getWeight()) : g;
  // rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))
  grads[0] = e.mul(rstd, e.sub(e.sub(gxhat, meanOver(gxhat)),
                               e.mul(xhat, meanOver(e.mul(gxhat, xhat)))));
  auto sumLead = [&](Value v) {
    return lead.empty() ? v : e.sum(v, lead, /*keepdim=*/false);
  };
  unsigned next = 1;
  if (op.getWeight())
    grads[next++] = sumLead(e.mul(g, xhat));
  if (op.getBias())
    grads[next] = sumLead(g);
  return success();
}

/// Moves the last dim of `v` (rank r) to position `d`.
Value moveLastTo(GradEmitter &e, Value v, int64_t d) {
  int64_t r = GradEmitter::rankOf(v);
  if (d == r - 1)
    return v;
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i + 1 < r; ++i)
    perm.push_back(i);
  perm.insert(perm.begin() + d, r - 1);
  return e.permute(v, perm);
}

/// The gradient of an nll-style loss with respect to log-probabilities `lp`
/// ([C] or [N, C, d...]) with class-index targets:
///   -(coef) * ((1 - ls) * onehot(t) * w + ls / C * valid * w)
/// with coef the loss gradient per element (divided by sum of w[t] for mean).
/// Without a weight, `rowSum` (when given) gets the gradient's sum over the
/// class dim (keepdim), -(coef) * valid, without a pass over the classes.
FailureOr<Value> nllLogProbGrad(Operation *op, GradEmitter &e, Value lp,
                                Value target, Value weight,
                                kt::Reduction reduction, int64_t ignoreIndex,
                                double ls, Value g, Value *rowSum = nullptr) {
  int64_t r = GradEmitter::rankOf(lp);
  int64_t cd = r == 1 ? 0 : 1;
  int64_t c = GradEmitter::shapeOf(lp)[cd];
  if (ShapedType::isDynamic(c))
    return op->emitError("no gradient for '")
           << op->getName() << "' with a dynamic class dim";
  Type et = GradEmitter::elementTypeOf(lp);
  Value ignore = buildScalar(e.builder(), e.getLoc(), (double)ignoreIndex,
                             GradEmitter::elementTypeOf(target));
  Value validF = e.cast(e.ne(target, ignore), et); // target shape
  Value validU = e.unsqueeze(validF, cd);
  Value oh = e.mul(moveLastTo(e, e.oneHot(target, c, et), cd), validU);
  Value wB;
  if (weight) {
    SmallVector<int64_t> wShape(r, 1);
    wShape[cd] = c;
    wB = e.reshape(weight, wShape);
  }
  Value gl = g;
  if (reduction == kt::Reduction::mean) {
    Value wt = weight ? e.sum(e.mul(oh, wB), {cd}, false) : validF;
    SmallVector<int64_t> all;
    for (int64_t i = 0; i < GradEmitter::rankOf(wt); ++i)
      all.push_back(i);
    Value denom = all.empty() ? wt : e.sum(wt, all, false);
    // Every target ignored (the loss is 0 / 0 = NaN): a zero gradient, as
    // PyTorch (its backward writes no element), not inf * 0 = NaN.
    gl = e.maskGrad(e.ne(denom, e.scalarLike(0, denom)), e.div(g, denom));
  }
  if (GradEmitter::rankOf(gl) > 0)
    gl = e.unsqueeze(gl, cd);
  if (rowSum && !weight)
    *rowSum = e.neg(e.mul(gl, validU)); // (1 - ls) + ls / C * C = 1
  Value d = e.scale(oh, 1.0 - ls);
  if (ls > 0)
    d = e.add(d, e.scale(validU, ls / (double)c));
  if (wB)
    d = e.mul(d, wB);
  return e.neg(e.mul(gl, d));
}

LogicalResult vjpNllLoss(kt::NllLossOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  auto glp =
      nllLogProbGrad(op, e, op.getInput(), op.getTarget(), op.getWeight(),
                     op.getReduction(), op.getIgnoreIndex(), 0.0, g);
  if (failed(glp))
    return failure();
  grads[0] = *glp;
  return success();
}

LogicalResult vjpCrossEntropy(kt::CrossEntropyOp op, GradEmitter &e, Value g,
                              Grads &grads) {
  Value x = op.getInput(), target = op.getTarget(), weight = op.getWeight();
  int64_t r = GradEmitter::rankOf(x);
  int64_t cd = r == 1 ? 0 : 1;
  double ls = op.getLabelSmoothing().convertToDouble();
  Value lp = e.op<kt::LogSoftmaxOp>(
      {x}, {e.attr("dim", e.builder().getI64IntegerAttr(cd))});
  Value glp, rowSum;
  if (isFloatValue(target)) {
    // Probabilities: loss = -sum_c w_c * t'_c * lp_c, t' = t(1-ls) + ls/C;
    // mean divides by the number of elements without the class dim.
    int64_t c = GradEmitter::shapeOf(x)[cd];
    if (ShapedType::isDynamic(c))
      return op.emitError("no gradient for kt.cross_entropy with a dynamic "
                          "class dim");
    Value wB;
    if (weight) {
      SmallVector<int64_t> wShape(r, 1);
      wShape[cd] = c;
      wB = e.reshape(weight, wShape);
    }
    Value gl = g;
    if (op.getReduction() == kt::Reduction::mean) {
      SmallVector<int64_t> others;
      for (int64_t i = 0; i < r; ++i)
        if (i != cd)
          others.push_back(i);
      int64_t n = countAt(GradEmitter::shapeOf(x), others);
      // Over `?` dims the count is read when the gradient runs.
      gl = n >= 0 ? e.scale(g, 1.0 / (double)n)
                  : e.div(g, e.countAt(x, others,
                                       GradEmitter::elementTypeOf(x)));
    }
    if (GradEmitter::rankOf(gl) > 0)
      gl = e.unsqueeze(gl, cd);
    Value tp = target;
    if (ls > 0)
      tp = e.add(e.scale(target, 1.0 - ls), e.scalarLike(ls / (double)c, target));
    Value wt = wB ? e.mul(tp, wB) : tp;
    glp = e.neg(e.mul(gl, wt));
    Value gt = e.neg(e.mul(gl, wB ? e.mul(lp, wB) : lp));
    grads[1] = ls > 0 ? e.scale(gt, 1.0 - ls) : gt;
  } else {
    auto v = nllLogProbGrad(op, e, lp, target, weight, op.getReduction(),
                            op.getIgnoreIndex(), ls, g, &rowSum);
    if (failed(v))
      return failure();
    glp = *v;
  }
  // Back through log_softmax over the class dim: glp - softmax * s, s the
  // row sum of glp (known without a pass over the classes for class
  // indices without a weight: the backward kernel is then the row
  // statistics and one pass writing the gradient).
  Value s = rowSum ? rowSum : e.sum(glp, {cd}, /*keepdim=*/true);
  grads[0] = e.sub(glp, e.mul(e.exp(lp), s));
  return success();
}

/// `v` ([C]) reshaped to broadcast along dim 1 of a rank-`r` tensor.
Value channelView(GradEmitter &e, Value v, int64_t r) {
  SmallVector<int64_t> shape(r - 1, 1);
  shape[0] = GradEmitter::shapeOf(v)[0];
  return e.reshape(v, shape);
}

LogicalResult vjpBatchNorm(kt::BatchNormOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  // Inference form: y = (x - m) * rstd * w + b with rstd = 1/sqrt(v + eps).
  // running_mean/running_var get no gradient (PyTorch refuses requires_grad
  // on them: native_batch_norm is not differentiable with respect to them).
  Value x = op.getInput();
  int64_t r = GradEmitter::rankOf(x);
  if (ShapedType::isDynamic(GradEmitter::shapeOf(op.getRunningMean())[0]))
    return op.emitError("no gradient for kt.batch_norm with a dynamic C");
  Value eps = e.scalarLike(op.getEps().convertToDouble(), x);
  Value rstd = channelView(
      e, e.op<kt::RsqrtOp>({e.add(op.getRunningVar(), eps)}), r);
  Value scale = op.getWeight() ? e.mul(rstd, channelView(e, op.getWeight(), r))
                               : rstd;
  grads[0] = e.mul(g, scale);
  SmallVector<int64_t> others;
  for (int64_t i = 0; i < r; ++i)
    if (i != 1)
      others.push_back(i);
  unsigned next = 3;
  if (op.getWeight()) {
    Value xhat =
        e.mul(e.sub(x, channelView(e, op.getRunningMean(), r)), rstd);
    grads[next++] = e.sum(e.mul(g, xhat), others, /*keepdim=*/false);
  }
  if (op.getBias())
    grads[next] = e.sum(g, others, /*keepdim=*/false);
  return success();
}

/// Whether `v` is a rank-0 kt.full of value `c` (GradEmitter::scalarLike).
bool isScalarFull(Value v, double c) {
  auto f = v.getDefiningOp<kt::FullOp>();
  return f && f.getSize().empty() && f.getValue().convertToDouble() == c;
}

/// The activation whose gradient `g`, the cotangent of batch norm's result
/// `y`, is: `where(mask, g0, 0)` as kt.relu's rule builds it (mask
/// `gt(relu(y), 0)`) or kt.clamp's with min 0 and max 6 (`and(ge(y, 0),
/// le(y, 6))`). Sets `g0`, the gradient of the activation's result; none
/// otherwise (`g` is then read as it is). A `y` with other uses has an
/// accumulated cotangent (a kt.add), so it is not matched.
kt::NormActivation foldedActivation(Value y, Value g, Value &g0) {
  auto where = g.getDefiningOp<kt::WhereOp>();
  if (!where || !isScalarFull(where->getOperand(2), 0))
    return kt::NormActivation::none;
  Value mask = where->getOperand(0);
  auto cmpOf = [&](Value m, auto tag, double c) {
    using Cmp = decltype(tag);
    auto op = m.getDefiningOp<Cmp>();
    return op && isScalarFull(op->getOperand(1), c) ? op->getOperand(0)
                                                   : Value();
  };
  kt::NormActivation act = kt::NormActivation::none;
  if (Value r = cmpOf(mask, kt::GtOp(), 0)) {
    auto relu = r.getDefiningOp<kt::ReluOp>();
    if (relu && relu->getOperand(0) == y)
      act = kt::NormActivation::relu;
  } else if (auto both = mask.getDefiningOp<kt::LogicalAndOp>()) {
    if (cmpOf(both->getOperand(0), kt::GeOp(), 0) == y &&
        cmpOf(both->getOperand(1), kt::LeOp(), 6) == y)
      act = kt::NormActivation::relu6;
  }
  if (act != kt::NormActivation::none)
    g0 = where->getOperand(1);
  return act;
}

/// kt.batch_norm_train's rule sees all three result cotangents: the
/// result's goes through one kt.batch_norm_backward (input, weight and bias
/// gradients, aten native_batch_norm_backward); those of save_mean and
/// save_invstd (rarely used: a program returning the statistics) add
/// gmean[c] / M and -ginvstd[c] * invstd^3 * (x - mean) / M to the input's.
struct BatchNormTrainVJP
    : public DifferentiableOpInterface::ExternalModel<BatchNormTrainVJP,
                                                      kt::BatchNormTrainOp> {
  LogicalResult buildVJP(Operation *o, OpBuilder &b,
                         ArrayRef<Value> resultGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto op = cast<kt::BatchNormTrainOp>(o);
    operandGrads.assign(o->getNumOperands(), Value());
    auto at = [&](unsigned i) {
      return i < resultGrads.size() ? resultGrads[i] : Value();
    };
    Value g = at(0), gMean = at(1), gInvstd = at(2);
    GradEmitter e(b, o->getLoc());
    Value x = op.getInput(), mean = op.getSaveMean(),
          invstd = op.getSaveInvstd();
    Value gx;
    if (g) {
      auto bwd = kt::BatchNormBackwardOp::create(
          b, o->getLoc(), g, x, mean, invstd, op.getWeight(), /*bias=*/Value(),
          kt::NormActivationAttr());
      gx = bwd.getGradInput();
      unsigned next = 1;
      if (op.getWeight())
        operandGrads[next++] = bwd.getGradWeight();
      if (op.getBias())
        operandGrads[next] = bwd.getGradBias();
    }
    if (gMean || gInvstd) {
      // In the statistics type (f32 for half inputs), then cast to x's.
      int64_t r = GradEmitter::rankOf(x);
      SmallVector<int64_t> others, view(r - 1, 1);
      for (int64_t i = 0; i < r; ++i)
        if (i != 1)
          others.push_back(i);
      view[0] = -1;
      Type st = GradEmitter::elementTypeOf(mean);
      Value m = e.countAt(x, ArrayRef<int64_t>(others), st);
      Value xs = GradEmitter::elementTypeOf(x) == st ? x : e.cast(x, st);
      Value extra;
      if (gMean)
        extra = e.reshape(e.div(gMean, m), view);
      if (gInvstd) {
        Value i3 = e.mul(e.mul(invstd, invstd), invstd);
        Value coef = e.reshape(e.neg(e.div(e.mul(gInvstd, i3), m)), view);
        Value t = e.mul(e.sub(xs, e.reshape(mean, view)), coef);
        extra = extra ? e.add(t, extra) : t;
      }
      if (GradEmitter::shapeOf(extra) != GradEmitter::shapeOf(x))
        extra = e.expandLike(extra, xs);
      extra = e.cast(extra, GradEmitter::elementTypeOf(x));
      gx = gx ? e.add(gx, extra) : extra;
    }
    operandGrads[0] = gx;
    return success();
  }
};

LogicalResult vjpSDPA(kt::ScaledDotProductAttentionOp op, GradEmitter &e,
                      Value g, Grads &grads) {
  // Recomputes P = softmax(q k^T * scale + bias) (the math backend), then
  //   gv = P^T g, gS = P * (g v^T - rowsum(g v^T * P)),
  //   gq = gS k * scale, gk = gS^T q * scale, gmask (float) = gS,
  // each summed back to its operand's (broadcast) shape.
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto qs = GradEmitter::shapeOf(q), ks = GradEmitter::shapeOf(k);
  int64_t L = qs[qs.size() - 2], E = qs.back(), S = ks[ks.size() - 2];
  double scale;
  if (op.getScale())
    scale = op.getScale()->convertToDouble();
  else if (ShapedType::isDynamic(E))
    return op.emitError("no gradient for kt.scaled_dot_product_attention "
                        "with a dynamic E and no scale");
  else
    scale = 1.0 / std::sqrt((double)E);
  Value s = e.scale(e.matmul(q, e.transpose(k, -1, -2)), scale);
  Value ninf = e.scalarLike(-std::numeric_limits<double>::infinity(), q);
  Value mask = op.getAttnMask();
  if (mask) {
    if (GradEmitter::elementTypeOf(mask).isInteger(1))
      s = e.where(mask, s, ninf);
    else
      s = e.add(s, mask);
  } else if (op.getIsCausal()) {
    if (ShapedType::isDynamic(L) || ShapedType::isDynamic(S))
      return op.emitError("no gradient for a causal "
                          "kt.scaled_dot_product_attention with dynamic L, S");
    auto ar = [&](int64_t n) {
      return e.op<kt::ArangeOp>(
          {}, {e.attr("start", e.builder().getF64FloatAttr(0.0)),
               e.attr("end", e.builder().getF64FloatAttr((double)n)),
               e.attr("step", e.builder().getF64FloatAttr(1.0)),
               e.attr("dtype", TypeAttr::get(e.builder().getI64Type()))});
    };
    Value keep = e.le(ar(S), e.unsqueeze(ar(L), -1)); // [L, S]
    s = e.where(keep, s, ninf);
  }
  Value p = e.op<kt::SoftmaxOp>(
      {s}, {e.attr("dim", e.builder().getI64IntegerAttr(-1))});
  grads[2] = e.unbroadcastTo(e.matmul(e.transpose(p, -1, -2), g), v.getType());
  Value gp = e.matmul(g, e.transpose(v, -1, -2));
  Value gs = e.mul(p, e.sub(gp, e.sum(e.mul(gp, p), {GradEmitter::rankOf(gp) - 1}, /*keepdim=*/true)));
  grads[0] = e.unbroadcastTo(e.scale(e.matmul(gs, k), scale), q.getType());
  grads[1] = e.unbroadcastTo(
      e.scale(e.matmul(e.transpose(gs, -1, -2), q), scale), k.getType());
  if (mask && isFloatValue(mask))
    grads[3] = e.unbroadcastTo(gs, mask.getType());
  return success();
}

} // namespace

void autodiff::registerNormVJPs(MLIRContext *ctx) {
  attachVJP<kt::SoftmaxOp, vjpSoftmax>(ctx);
  attachVJP<kt::LogSoftmaxOp, vjpLogSoftmax>(ctx);
  attachVJP<kt::LayerNormOp, vjpLayerNorm>(ctx);
  attachVJP<kt::NllLossOp, vjpNllLoss>(ctx);
  attachVJP<kt::CrossEntropyOp, vjpCrossEntropy>(ctx);
  attachVJP<kt::BatchNormOp, vjpBatchNorm>(ctx);
  kt::BatchNormTrainOp::attachInterface<BatchNormTrainVJP>(*ctx);
  // kt.batch_norm_backward has no rule (as the pools' backward ops): a
  // second derivative through it is kiln-autodiff's "no vector-Jacobian
  // rule" error.
  attachVJP<kt::ScaledDotProductAttentionOp, vjpSDPA>(ctx);
}

unsigned autodiff::foldNormActivationMasks(func::FuncOp joint) {
  SmallVector<kt::BatchNormBackwardOp> bwds;
  joint.walk([&](kt::BatchNormBackwardOp op) {
    if (op.getActivation() == kt::NormActivation::none)
      bwds.push_back(op);
  });
  unsigned folded = 0;
  for (kt::BatchNormBackwardOp op : bwds) {
    // The batch norm whose statistics (and input, weight) it reads.
    auto train = op.getSaveMean().getDefiningOp<kt::BatchNormTrainOp>();
    if (!train || op.getSaveInvstd() != train.getSaveInvstd() ||
        op.getInput() != train.getInput() ||
        op.getWeight() != train.getWeight())
      continue;
    Value g0;
    Value g = op.getGradOutput();
    kt::NormActivation act = foldedActivation(train.getResult(), g, g0);
    // The mask must be built from values available where the backward is.
    if (act == kt::NormActivation::none || !g.hasOneUse())
      continue;
    OpBuilder b(op);
    auto fused = kt::BatchNormBackwardOp::create(
        b, op.getLoc(), g0, op.getInput(), op.getSaveMean(),
        op.getSaveInvstd(), op.getWeight(), train.getBias(),
        kt::NormActivationAttr::get(b.getContext(), act));
    op->replaceAllUsesWith(fused->getResults());
    op->erase();
    // The where, its mask and their constants, once unused (each op once:
    // a constant feeds both the where and a compare).
    llvm::SetVector<Operation *> work;
    work.insert(g.getDefiningOp());
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *dead : llvm::to_vector(work)) {
        if (!isOpTriviallyDead(dead))
          continue;
        for (Value v : dead->getOperands())
          if (Operation *d = v.getDefiningOp(); d && d != train)
            work.insert(d);
        work.remove(dead);
        dead->erase();
        changed = true;
      }
    }
    ++folded;
  }
  return folded;
}
