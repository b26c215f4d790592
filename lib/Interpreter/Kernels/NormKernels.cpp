//===- NormKernels.cpp - Interpreter kernels of Norm ops ----------------===//
//
// Part of Kiln. Softmax, normalization, losses and attention, computed in
// double and rounded to the result dtype when stored. The algorithms follow
// PyTorch's (max-subtracted softmax, biased variance, PyTorch's label
// smoothing formula) so that NaN/inf behave the same way.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// The maximum of `n` values read by `get`, NaN if any is NaN, -inf if empty.
template <typename Get> double rowMax(int64_t n, Get get) {
  double m = -kInf;
  for (int64_t j = 0; j < n; ++j) {
    double x = get(j);
    if (std::isnan(x))
      return x;
    m = std::max(m, x);
  }
  return m;
}

/// log_softmax (log=true) or softmax of `n` values read by `get`, written by
/// `put`.
template <typename Get, typename Put>
void softmaxRow(int64_t n, bool log, Get get, Put put) {
  double m = rowMax(n, get);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += std::exp(get(j) - m);
  if (log) {
    double lse = std::log(sum);
    for (int64_t j = 0; j < n; ++j)
      put(j, get(j) - m - lse);
  } else {
    for (int64_t j = 0; j < n; ++j)
      put(j, std::exp(get(j) - m) / sum);
  }
}

/// Softmax/log_softmax of `in` along `dim` (normalized; rank 0 allowed), as
/// result #0 of `op` (or, with `result` std::nullopt, a temporary of it).
FailureOr<Tensor> softmaxTensor(Operation *op, const Tensor &in, int64_t dim,
                                bool log, DType dt,
                                std::optional<unsigned> result = 0) {
  Tensor out;
  if (failed(allocTensor(op, out, dt, in.shape(), result)))
    return failure();
  ArrayRef<int64_t> s = in.shape();
  int64_t outer = 1, n = 1, inner = 1;
  if (!s.empty()) {
    outer = product(s.take_front(dim));
    n = s[dim];
    inner = product(s.drop_front(dim + 1));
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      softmaxRow(
          n, log, [&](int64_t j) { return in.getF(base + j * inner); },
          [&](int64_t j, double v) { out.setF(base + j * inner, v); });
    }
  return out;
}

LogicalResult interpretSoftmax(SoftmaxOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  FailureOr<Tensor> out = softmaxTensor(
      op, operands[0], kt::wrapDim((int64_t)op.getDim(), operands[0].rank()),
      false, resultDType(op));
  if (failed(out))
    return failure();
  results.push_back(std::move(*out));
  return success();
}

LogicalResult interpretLogSoftmax(LogSoftmaxOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &results) {
  FailureOr<Tensor> out = softmaxTensor(
      op, operands[0], kt::wrapDim((int64_t)op.getDim(), operands[0].rank()),
      true, resultDType(op));
  if (failed(out))
    return failure();
  results.push_back(std::move(*out));
  return success();
}

/// The sum of squared deviations `m2` (exact here, in double) as PyTorch's
/// CPU layer_norm / batch_norm / group_norm see it for `dt`: they accumulate
/// it in float for every dtype but double, so a sum past float's range is
/// +inf there (the variance is then inf, 1/sqrt(var + eps) is 0 and the
/// normalized values are 0: issue 15's fuzz seed 201252). Only the overflow
/// is modeled, not float's rounding of the sum, which depends on PyTorch's
/// vectorized summation order (docs/debugging.md, "Normalizations whose
/// variance overflows").
double m2AsAccumulated(double m2, DType dt) {
  if (dt != DType::F64 && std::isinf(static_cast<float>(m2)))
    return std::numeric_limits<double>::infinity();
  return m2;
}

LogicalResult interpretLayerNorm(LayerNormOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  size_t next = 1;
  const Tensor *w = op.getWeight() ? &operands[next++] : nullptr;
  const Tensor *b = op.getBias() ? &operands[next++] : nullptr;
  SmallVector<int64_t> ns = getI64Array(op.getNormalizedShape());
  ArrayRef<int64_t> trailing = x.shape().take_back(ns.size());
  if (trailing != ArrayRef<int64_t>(ns))
    return op.emitError() << "normalized_shape " << shapeStr(ns)
                          << " does not match the trailing dims of input "
                             "shape "
                          << shapeStr(x.shape()) << " at run time";
  for (auto [what, t] : {std::pair<const char *, const Tensor *>{"weight", w},
                         {"bias", b}})
    if (t && t->shape() != ArrayRef<int64_t>(ns))
      return op.emitError() << what << " shape " << shapeStr(t->shape())
                            << " does not equal normalized_shape "
                            << shapeStr(ns) << " at run time";
  double eps = op.getEps().convertToDouble();
  int64_t inner = product(ns), outer = inner ? x.numel() / inner : 0;
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), x.shape())))
    return failure();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = o * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += x.getF(base + i);
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i) {
      double d = x.getF(base + i) - mean;
      var += d * d;
    }
    var = m2AsAccumulated(var, x.dtype()) / inner;
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double y = (x.getF(base + i) - mean) * rstd;
      if (w)
        y *= w->getF(i);
      if (b)
        y += b->getF(i);
      out.setF(base + i, y);
    }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretBatchNorm(BatchNormOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0], &mean = operands[1], &var = operands[2];
  size_t next = 3;
  const Tensor *w = op.getWeight() ? &operands[next++] : nullptr;
  const Tensor *b = op.getBias() ? &operands[next++] : nullptr;
  int64_t n = x.dim(0), c = x.dim(1), inner = product(x.shape().drop_front(2));
  for (auto [what, t] :
       {std::pair<const char *, const Tensor *>{"running_mean", &mean},
        {"running_var", &var},
        {"weight", w},
        {"bias", b}})
    if (t && (t->rank() != 1 || t->dim(0) != c))
      return op.emitError() << what << " shape " << shapeStr(t->shape())
                            << " does not match the " << c
                            << " channels of input at run time";
  double eps = op.getEps().convertToDouble();
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), x.shape())))
    return failure();
  for (int64_t ch = 0; ch < c; ++ch) {
    double m = mean.getF(ch);
    double scale = 1.0 / std::sqrt(var.getF(ch) + eps);
    double wv = w ? w->getF(ch) : 1.0, bv = b ? b->getF(ch) : 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t idx = (i * c + ch) * inner + j;
        out.setF(idx, (x.getF(idx) - m) * scale * wv + bv);
      }
  }
  results.push_back(std::move(out));
  return success();
}

/// Checks that each present per-channel tensor has shape [c] at run time.
LogicalResult checkChannelVectors(
    Operation *op, int64_t c,
    std::initializer_list<std::pair<const char *, const Tensor *>> vs) {
  for (auto [what, t] : vs)
    if (t && (t->rank() != 1 || t->dim(0) != c))
      return op->emitError() << what << " shape " << shapeStr(t->shape())
                             << " does not match the " << c
                             << " channels of input at run time";
  return success();
}

LogicalResult interpretBatchNormTrain(BatchNormTrainOp op,
                                      ArrayRef<Tensor> operands,
                                      SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  size_t next = 1;
  const Tensor *w = op.getWeight() ? &operands[next++] : nullptr;
  const Tensor *b = op.getBias() ? &operands[next++] : nullptr;
  int64_t n = x.dim(0), c = x.dim(1), inner = product(x.shape().drop_front(2));
  if (failed(checkChannelVectors(op, c, {{"weight", w}, {"bias", b}})))
    return failure();
  // F.batch_norm's _verify_batch_size (a dynamic batch of 1 reaches here):
  // the discardable unit attribute kt.verify_batch_size, which the Python
  // frontend sets for F.batch_norm in training mode (not for aten
  // native_batch_norm, which computes zero-variance statistics).
  if (op->hasAttr("kt.verify_batch_size") && n * inner == 1)
    return op.emitError()
           << "Expected more than 1 value per channel when training, got "
              "input size "
           << shapeStr(x.shape());
  double eps = op.getEps().convertToDouble();
  double m = (double)n * (double)inner;
  Tensor out, mean, invstd;
  if (failed(allocTensor(op, out, resultDType(op, 0), x.shape())) ||
      failed(allocTensor(op, mean, resultDType(op, 1), {c}, 1)) ||
      failed(allocTensor(op, invstd, resultDType(op, 2), {c}, 2)))
    return failure();
  for (int64_t ch = 0; ch < c; ++ch) {
    auto at = [&](int64_t i, int64_t j) { return (i * c + ch) * inner + j; };
    // Two passes in double: the mean, then the squared deviations from it.
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        sum += x.getF(at(i, j));
    double mu = sum / m, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        double d = x.getF(at(i, j)) - mu;
        sq += d * d;
      }
    sq = m2AsAccumulated(sq, x.dtype());
    double rstd = 1.0 / std::sqrt(sq / m + eps);
    mean.setF(ch, mu);
    invstd.setF(ch, rstd);
    double wv = w ? w->getF(ch) : 1.0, bv = b ? b->getF(ch) : 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        out.setF(at(i, j), (x.getF(at(i, j)) - mu) * rstd * wv + bv);
  }
  results.push_back(std::move(out));
  results.push_back(std::move(mean));
  results.push_back(std::move(invstd));
  return success();
}

LogicalResult interpretBatchNormBackward(BatchNormBackwardOp op,
                                         ArrayRef<Tensor> operands,
                                         SmallVectorImpl<Tensor> &results) {
  const Tensor &gy = operands[0], &x = operands[1], &mean = operands[2],
               &invstd = operands[3];
  size_t next = 4;
  const Tensor *w = op.getWeight() ? &operands[next++] : nullptr;
  const Tensor *bias = op.getBias() ? &operands[next++] : nullptr;
  NormActivation act = op.getActivation();
  if (gy.shape() != x.shape())
    return op.emitError() << "grad_output shape " << shapeStr(gy.shape())
                          << " does not equal input shape "
                          << shapeStr(x.shape()) << " at run time";
  int64_t n = x.dim(0), c = x.dim(1), inner = product(x.shape().drop_front(2));
  if (failed(checkChannelVectors(op, c,
                                 {{"save_mean", &mean},
                                  {"save_invstd", &invstd},
                                  {"weight", w},
                                  {"bias", bias}})))
    return failure();
  double m = (double)n * (double)inner;
  DType xt = x.dtype();
  Tensor gx, gw, gb;
  if (failed(allocTensor(op, gx, resultDType(op, 0), x.shape())) ||
      failed(allocTensor(op, gw, resultDType(op, 1), {c}, 1)) ||
      failed(allocTensor(op, gb, resultDType(op, 2), {c}, 2)))
    return failure();
  for (int64_t ch = 0; ch < c; ++ch) {
    auto at = [&](int64_t i, int64_t j) { return (i * c + ch) * inner + j; };
    double mu = mean.getF(ch), rstd = invstd.getF(ch);
    double wv = w ? w->getF(ch) : 1.0, bv = bias ? bias->getF(ch) : 0.0;
    // grad_output under the activation's mask, taken on the forward's
    // result recomputed as the forward stores it (rounded to x's type).
    auto grad = [&](int64_t idx) {
      double g = gy.getF(idx);
      if (act == NormActivation::none)
        return g;
      double y = roundToDType((x.getF(idx) - mu) * rstd * wv + bv, xt);
      bool keep = act == NormActivation::relu ? y > 0 : (y >= 0 && y <= 6);
      return keep ? g : 0.0;
    };
    double sumDy = 0, dot = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        double g = grad(at(i, j));
        sumDy += g;
        dot += g * (x.getF(at(i, j)) - mu);
      }
    gw.setF(ch, dot * rstd);
    gb.setF(ch, sumDy);
    // PyTorch's batch_norm_backward_cpu (train): mean_dy = sum_dy / M,
    // k = dot * invstd^2 / M.
    double meanDy = sumDy / m, k = dot * rstd * rstd / m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        double d = x.getF(at(i, j)) - mu;
        gx.setF(at(i, j), (grad(at(i, j)) - meanDy - d * k) * rstd * wv);
      }
  }
  results.push_back(std::move(gx));
  results.push_back(std::move(gw));
  results.push_back(std::move(gb));
  return success();
}

/// Layout of a loss input: [N, C, inner...] (or [C] with N = inner = 1).
struct LossLayout {
  int64_t n = 1, c = 1, inner = 1;
  SmallVector<int64_t> targetShape; // the shape without the class dim
  int64_t at(int64_t b, int64_t cls, int64_t i) const {
    return (b * c + cls) * inner + i;
  }
};

LossLayout lossLayout(const Tensor &in) {
  LossLayout l;
  if (in.rank() == 1) {
    l.c = in.dim(0);
    return l;
  }
  l.n = in.dim(0);
  l.c = in.dim(1);
  l.inner = product(in.shape().drop_front(2));
  l.targetShape.assign(in.shape().begin(), in.shape().end());
  l.targetShape.erase(l.targetShape.begin() + 1);
  return l;
}

/// Checks the runtime shapes of a class-index loss's target and weight.
LogicalResult checkLossShapes(Operation *op, const Tensor &in,
                              const Tensor &target, const Tensor *weight,
                              const LossLayout &l, bool probTarget) {
  if (probTarget) {
    if (target.shape() != in.shape())
      return op->emitError() << "probability target shape "
                             << shapeStr(target.shape())
                             << " does not equal input shape "
                             << shapeStr(in.shape()) << " at run time";
  } else if (target.shape() != ArrayRef<int64_t>(l.targetShape)) {
    return op->emitError() << "target shape " << shapeStr(target.shape())
                           << " does not match input shape "
                           << shapeStr(in.shape()) << " at run time";
  }
  if (weight && (weight->rank() != 1 || weight->dim(0) != l.c))
    return op->emitError() << "weight shape " << shapeStr(weight->shape())
                           << " does not match the " << l.c
                           << " classes of input at run time";
  return success();
}

/// Per-element nll losses and weights (0 for ignored elements). Fails on a
/// target out of range.
LogicalResult nllElements(Operation *op, const Tensor &logp,
                          const Tensor &target, const Tensor *weight,
                          const LossLayout &l, int64_t ignoreIndex,
                          std::vector<double> &loss,
                          std::vector<double> &wsum) {
  int64_t count = l.n * l.inner;
  loss.assign(count, 0.0);
  wsum.assign(count, 0.0);
  for (int64_t b = 0; b < l.n; ++b)
    for (int64_t i = 0; i < l.inner; ++i) {
      int64_t e = b * l.inner + i;
      int64_t t = target.getI(e);
      if (t == ignoreIndex)
        continue;
      if (t < 0 || t >= l.c)
        return op->emitError() << "target " << t << " is out of range [0, "
                               << l.c << ") (ignore_index is "
                               << ignoreIndex << ")";
      double w = weight ? weight->getF(t) : 1.0;
      loss[e] = -w * logp.getF(l.at(b, t, i));
      wsum[e] = w;
    }
  return success();
}

double sumOf(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

/// Appends the reduced (or unreduced) loss as the result of `op`;
/// `denominator` is used for mean.
LogicalResult reduceLoss(Operation *op, DType dt, Reduction red,
                         const std::vector<double> &loss,
                         ArrayRef<int64_t> shape, double denominator,
                         SmallVectorImpl<Tensor> &results) {
  if (red == Reduction::none) {
    Tensor out;
    if (failed(allocTensor(op, out, dt, shape)))
      return failure();
    for (size_t i = 0; i < loss.size(); ++i)
      out.setF(i, loss[i]);
    results.push_back(std::move(out));
    return success();
  }
  double s = sumOf(loss);
  results.push_back(
      Tensor::scalar(dt, red == Reduction::sum ? s : s / denominator));
  return success();
}

LogicalResult interpretNllLoss(NllLossOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0], &target = operands[1];
  const Tensor *weight = op.getWeight() ? &operands[2] : nullptr;
  LossLayout l = lossLayout(in);
  if (failed(checkLossShapes(op, in, target, weight, l, false)))
    return failure();
  std::vector<double> loss, wsum;
  if (failed(nllElements(op, in, target, weight, l,
                         (int64_t)op.getIgnoreIndex(), loss,
                         wsum)))
    return failure();
  return reduceLoss(op, resultDType(op), op.getReduction(), loss,
                    target.shape(), sumOf(wsum), results);
}

LogicalResult interpretCrossEntropy(CrossEntropyOp op,
                                    ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0], &target = operands[1];
  const Tensor *weight = op.getWeight() ? &operands[2] : nullptr;
  bool prob = target.isFloat();
  LossLayout l = lossLayout(in);
  if (failed(checkLossShapes(op, in, target, weight, l, prob)))
    return failure();
  double ls = op.getLabelSmoothing().convertToDouble();
  Reduction red = op.getReduction();
  DType dt = resultDType(op);
  // log_softmax over the class dim, in double.
  FailureOr<Tensor> logSoftmax = softmaxTensor(
      op, in, in.rank() == 1 ? 0 : 1, true, DType::F64, std::nullopt);
  if (failed(logSoftmax))
    return failure();
  const Tensor &logp = *logSoftmax;
  int64_t count = l.n * l.inner;
  auto wOf = [&](int64_t c) { return weight ? weight->getF(c) : 1.0; };

  if (prob) {
    std::vector<double> loss(count, 0.0);
    for (int64_t b = 0; b < l.n; ++b)
      for (int64_t i = 0; i < l.inner; ++i) {
        double s = 0;
        for (int64_t c = 0; c < l.c; ++c) {
          double t = target.getF(l.at(b, c, i));
          if (ls > 0.0)
            t = t * (1 - ls) + ls / l.c;
          s += logp.getF(l.at(b, c, i)) * t * wOf(c);
        }
        loss[b * l.inner + i] = -s;
      }
    // mean divides by the number of elements without the class dim; an empty
    // input gives NaN.
    double denom = in.numel() == 0 ? kNaN : (double)count;
    if (red == Reduction::mean && in.numel() == 0) {
      results.push_back(Tensor::scalar(dt, kNaN));
      return success();
    }
    return reduceLoss(op, dt, red, loss, l.targetShape, denom, results);
  }

  std::vector<double> nll, wsum;
  int64_t ignore = (int64_t)op.getIgnoreIndex();
  if (failed(nllElements(op, logp, target, weight, l, ignore, nll, wsum)))
    return failure();
  if (ls <= 0.0) {
    return reduceLoss(op, dt, red, nll, target.shape(), sumOf(wsum),
                      results);
  }
  // PyTorch's label smoothing for class indices: (1 - ls) * nll +
  // ls / C * smooth, smooth = -sum_c w[c] * logp[c] (0 where ignored),
  // reduced with the same denominator as nll (sum of w[t]) when weighted, or
  // the count of non-ignored elements otherwise.
  std::vector<double> smooth(count, 0.0);
  int64_t kept = 0;
  for (int64_t b = 0; b < l.n; ++b)
    for (int64_t i = 0; i < l.inner; ++i) {
      int64_t e = b * l.inner + i;
      if (target.getI(e) == ignore)
        continue;
      ++kept;
      double s = 0;
      for (int64_t c = 0; c < l.c; ++c)
        s += logp.getF(l.at(b, c, i)) * wOf(c);
      smooth[e] = -s;
    }
  double a = 1 - ls, k = ls / l.c;
  if (red == Reduction::none) {
    Tensor out;
    if (failed(allocTensor(op, out, dt, target.shape())))
      return failure();
    for (int64_t e = 0; e < count; ++e)
      out.setF(e, a * nll[e] + k * smooth[e]);
    results.push_back(std::move(out));
    return success();
  }
  double nllR = sumOf(nll), smoothR = sumOf(smooth);
  if (red == Reduction::mean) {
    nllR /= sumOf(wsum);
    smoothR /= weight ? sumOf(wsum) : (double)kept;
  }
  results.push_back(Tensor::scalar(dt, a * nllR + k * smoothR));
  return success();
}

/// Batch dims of a shape padded to rank >= 2 (all but the last two).
SmallVector<int64_t> batchOf(ArrayRef<int64_t> s) {
  SmallVector<int64_t> r(s);
  while (r.size() < 2)
    r.insert(r.begin(), 1);
  r.pop_back();
  r.pop_back();
  return r;
}

LogicalResult interpretSDPA(ScaledDotProductAttentionOp op,
                            ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  const Tensor &q = operands[0], &k = operands[1], &v = operands[2];
  const Tensor *mask = op.getAttnMask() ? &operands[3] : nullptr;
  int64_t L = q.dim(q.rank() - 2), E = q.dim(q.rank() - 1);
  int64_t S = k.dim(k.rank() - 2), Ek = k.dim(k.rank() - 1);
  int64_t Sv = v.dim(v.rank() - 2), Ev = v.dim(v.rank() - 1);
  if (E != Ek)
    return op.emitError() << "query and key embedding dims differ at run "
                             "time: "
                          << E << " vs " << Ek;
  if (S != Sv)
    return op.emitError() << "key and value sequence lengths differ at run "
                             "time: "
                          << S << " vs " << Sv;
  SmallVector<int64_t> ms;
  if (mask) {
    ms.assign(mask->shape().begin(), mask->shape().end());
    while (ms.size() < 2)
      ms.insert(ms.begin(), 1);
    int64_t mL = ms[ms.size() - 2], mS = ms[ms.size() - 1];
    if ((mL != 1 && mL != L) || (mS != 1 && mS != S))
      return op.emitError() << "attn_mask shape " << shapeStr(mask->shape())
                            << " does not broadcast to [..., " << L << ", "
                            << S << "] at run time";
  }
  // Runtime broadcast of the batch dims.
  SmallVector<SmallVector<int64_t>> batches{batchOf(q.shape()),
                                            batchOf(k.shape()),
                                            batchOf(v.shape())};
  if (mask)
    batches.push_back(batchOf(ms));
  size_t brank = 0;
  for (auto &b : batches)
    brank = std::max(brank, b.size());
  SmallVector<int64_t> batch(brank, 1);
  for (auto &b : batches) {
    size_t off = brank - b.size();
    for (auto [j, d] : llvm::enumerate(b)) {
      int64_t &r = batch[off + j];
      if (d == 1)
        continue;
      if (r != 1 && r != d)
        return op.emitError()
               << "batch dims of the operands are not broadcast-compatible "
                  "at run time: "
               << r << " vs " << d;
      r = d;
    }
  }
  int64_t mL = mask ? ms[ms.size() - 2] : 1, mS = mask ? ms[ms.size() - 1] : 1;
  SmallVector<int64_t> sizes{L * E, S * E, S * Ev, mL * mS};
  SmallVector<SmallVector<int64_t>> strides;
  for (auto [i, b] : llvm::enumerate(batches)) {
    strides.push_back(broadcastStrides(b, batch));
    for (int64_t &st : strides.back())
      st *= sizes[i];
  }
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt((double)E);
  bool causal = op.getIsCausal();
  bool boolMask = mask && !mask->isFloat();
  SmallVector<int64_t> outShape(batch);
  outShape.append({L, Ev});
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), outShape)))
    return failure();
  std::vector<double> p(S);
  forEachBroadcast(batch, strides, [&](int64_t bi, ArrayRef<int64_t> o) {
    for (int64_t l = 0; l < L; ++l) {
      for (int64_t s = 0; s < S; ++s) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e)
          dot += q.getF(o[0] + l * E + e) * k.getF(o[1] + s * E + e);
        double score = dot * scale;
        if (causal && s > l)
          score = -kInf;
        if (mask) {
          int64_t mi = o[3] + (mL == 1 ? 0 : l) * mS + (mS == 1 ? 0 : s);
          if (boolMask) {
            if (!mask->getB(mi))
              score = -kInf;
          } else {
            score += mask->getF(mi);
          }
        }
        p[s] = score;
      }
      softmaxRow(
          S, false, [&](int64_t j) { return p[j]; },
          [&](int64_t j, double x) { p[j] = x; });
      for (int64_t ev = 0; ev < Ev; ++ev) {
        double acc = 0;
        for (int64_t s = 0; s < S; ++s)
          acc += p[s] * v.getF(o[2] + s * Ev + ev);
        out.setF((bi * L + l) * Ev + ev, acc);
      }
    }
  });
  results.push_back(std::move(out));
  return success();
}

} // namespace

void registerNormKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<SoftmaxOp, interpretSoftmax>(ctx);
    attachKernel<LogSoftmaxOp, interpretLogSoftmax>(ctx);
    attachKernel<LayerNormOp, interpretLayerNorm>(ctx);
    attachKernel<BatchNormOp, interpretBatchNorm>(ctx);
    attachKernel<BatchNormTrainOp, interpretBatchNormTrain>(ctx);
    attachKernel<BatchNormBackwardOp, interpretBatchNormBackward>(ctx);
    attachKernel<NllLossOp, interpretNllLoss>(ctx);
    attachKernel<CrossEntropyOp, interpretCrossEntropy>(ctx);
    attachKernel<ScaledDotProductAttentionOp, interpretSDPA>(ctx);
  });
}

} // namespace kiln::interp
