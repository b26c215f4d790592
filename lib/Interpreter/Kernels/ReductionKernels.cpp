//===- ReductionKernels.cpp - Interpreter kernels of Reduction ops --------===//
//
// Part of Kiln. Floats accumulate in double and round to the result dtype;
// integers accumulate in int64 with wrap-around.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

/// The reduced dims (normalized, sorted) of `dimAttr` (absent/empty: all).
SmallVector<int64_t> reducedDims(ArrayAttr dimAttr, int64_t rank) {
  SmallVector<int64_t> dims;
  if (dimAttr && !dimAttr.empty()) {
    for (int64_t d : getI64Array(dimAttr)) {
      int64_t bound = std::max<int64_t>(rank, 1);
      dims.push_back(d < 0 ? d + bound : d);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
  }
  if (rank == 0)
    dims.clear();
  llvm::sort(dims);
  return dims;
}

/// How the input splits into groups: `outShape` is the result shape
/// (with keepdim), `groupOffsets` the element offsets of a group relative to
/// its base (row-major over the reduced dims), `baseOffsets` one base per
/// result element.
struct Grouping {
  SmallVector<int64_t> outShape;
  std::vector<int64_t> groupOffsets, baseOffsets;
  /// Elements of a group; 0 when there is no output element (no group is
  /// visited, and none is laid out).
  int64_t groupSize() const { return groupOffsets.size(); }
};

Grouping makeGrouping(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims,
                      bool keepdim) {
  Grouping g;
  SmallVector<int64_t> strides = contiguousStrides(shape);
  SmallVector<int64_t> keptShape, keptStrides, redShape, redStrides;
  for (int64_t i = 0, r = shape.size(); i < r; ++i) {
    if (llvm::is_contained(dims, i)) {
      redShape.push_back(shape[i]);
      redStrides.push_back(strides[i]);
      if (keepdim)
        g.outShape.push_back(1);
    } else {
      keptShape.push_back(shape[i]);
      keptStrides.push_back(strides[i]);
      g.outShape.push_back(shape[i]);
    }
  }
  auto offsets = [](ArrayRef<int64_t> sh, ArrayRef<int64_t> st,
                    std::vector<int64_t> &out) {
    int64_t n = numElements(sh);
    out.reserve(n);
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < n; ++i) {
      delinearize(i, sh, idx);
      int64_t o = 0;
      for (size_t k = 0; k < sh.size(); ++k)
        o += idx[k] * st[k];
      out.push_back(o);
    }
  };
  // With no output elements no group is visited: a huge reduced dim of an
  // empty tensor ([N, 0] reduced over N) must not allocate N offsets (the
  // interpreter aborted: "LLVM ERROR: out of memory").
  if (numElements(keptShape) > 0)
    offsets(redShape, redStrides, g.groupOffsets);
  offsets(keptShape, keptStrides, g.baseOffsets);
  return g;
}

/// Checks the result type against the runtime result shape.
LogicalResult checkResultShape(Operation *op, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(op->getResult(0).getType());
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    if (!ShapedType::isDynamic(d) && d != shape[i])
      return op->emitError("result dim ")
             << i << " is " << shape[i] << " at run time but the type has "
             << d;
  return success();
}

/// Runs `fn(out, outIndex, values)` per group, values as doubles.
template <typename Fn>
LogicalResult reduceF(Operation *op, const Tensor &x, ArrayAttr dimAttr,
                      bool keepdim, SmallVectorImpl<Tensor> &results, Fn fn) {
  Grouping g = makeGrouping(x.shape(), reducedDims(dimAttr, x.rank()), keepdim);
  if (failed(checkResultShape(op, g.outShape)))
    return failure();
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), g.outShape)))
    return failure();
  std::vector<double> vals(g.groupSize());
  for (size_t o = 0; o < g.baseOffsets.size(); ++o) {
    for (int64_t k = 0; k < g.groupSize(); ++k)
      vals[k] = x.getF(g.baseOffsets[o] + g.groupOffsets[k]);
    fn(out, (int64_t)o, ArrayRef<double>(vals));
  }
  results.push_back(std::move(out));
  return success();
}

template <typename Fn>
LogicalResult reduceI(Operation *op, const Tensor &x, ArrayAttr dimAttr,
                      bool keepdim, SmallVectorImpl<Tensor> &results, Fn fn) {
  Grouping g = makeGrouping(x.shape(), reducedDims(dimAttr, x.rank()), keepdim);
  if (failed(checkResultShape(op, g.outShape)))
    return failure();
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), g.outShape)))
    return failure();
  std::vector<int64_t> vals(g.groupSize());
  for (size_t o = 0; o < g.baseOffsets.size(); ++o) {
    for (int64_t k = 0; k < g.groupSize(); ++k)
      vals[k] = x.getI(g.baseOffsets[o] + g.groupOffsets[k]);
    fn(out, (int64_t)o, ArrayRef<int64_t>(vals));
  }
  results.push_back(std::move(out));
  return success();
}

/// Fails when a reduced dim has extent 0 (amax/amin/argmax/argmin).
LogicalResult checkNonEmpty(Operation *op, const Tensor &x,
                            ArrayRef<int64_t> dims, bool allDims) {
  if (allDims) {
    if (x.numel() == 0)
      return op->emitError("cannot reduce an empty tensor (")
             << x.numel() << " elements) over all dims";
    return success();
  }
  for (int64_t d : dims)
    if (x.dim(d) == 0)
      return op->emitError("expected reduction dim ")
             << d << " to have non-zero size";
  return success();
}

LogicalResult interpretSum(SumOp op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  if (x.isFloat())
    return reduceF(op, x, op.getDimAttr(), op.getKeepdim(), results,
                   [](Tensor &out, int64_t o, ArrayRef<double> v) {
                     double s = 0;
                     for (double d : v)
                       s += d;
                     out.setF(o, s);
                   });
  return reduceI(op, x, op.getDimAttr(), op.getKeepdim(), results,
                 [](Tensor &out, int64_t o, ArrayRef<int64_t> v) {
                   uint64_t s = 0;
                   for (int64_t d : v)
                     s += (uint64_t)d;
                   out.setI(o, (int64_t)s);
                 });
}

LogicalResult interpretProd(ProdOp op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  if (x.isFloat())
    return reduceF(op, x, op.getDimAttr(), op.getKeepdim(), results,
                   [](Tensor &out, int64_t o, ArrayRef<double> v) {
                     double s = 1;
                     for (double d : v)
                       s *= d;
                     out.setF(o, s);
                   });
  return reduceI(op, x, op.getDimAttr(), op.getKeepdim(), results,
                 [](Tensor &out, int64_t o, ArrayRef<int64_t> v) {
                   uint64_t s = 1;
                   for (int64_t d : v)
                     s *= (uint64_t)d;
                   out.setI(o, (int64_t)s);
                 });
}

LogicalResult interpretMean(MeanOp op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  return reduceF(op, operands[0], op.getDimAttr(), op.getKeepdim(), results,
                 [](Tensor &out, int64_t o, ArrayRef<double> v) {
                   double s = 0;
                   for (double d : v)
                     s += d;
                   out.setF(o, s / (double)v.size());
                 });
}

template <typename OpT, bool Max>
LogicalResult interpretMinMax(OpT op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  ArrayAttr dimAttr = op.getDimAttr();
  bool all = !dimAttr || dimAttr.empty();
  if (failed(checkNonEmpty(op, x, reducedDims(dimAttr, x.rank()), all)))
    return failure();
  // Floats combine with kt.maximum / kt.minimum (NaN propagates, -0.0 <
  // +0.0), so the result does not depend on the order of the elements.
  if (x.isFloat())
    return reduceF(op, x, dimAttr, op.getKeepdim(), results,
                   [](Tensor &out, int64_t o, ArrayRef<double> v) {
                     double m = v[0];
                     for (double d : v)
                       m = Max ? ieeeMaximum(m, d) : ieeeMinimum(m, d);
                     out.setF(o, m);
                   });
  return reduceI(op, x, dimAttr, op.getKeepdim(), results,
                 [](Tensor &out, int64_t o, ArrayRef<int64_t> v) {
                   int64_t m = v[0];
                   for (int64_t d : v)
                     if (Max ? d > m : d < m)
                       m = d;
                   out.setI(o, m);
                 });
}

LogicalResult interpretVar(VarOp op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  double correction = op.getCorrection().convertToDouble();
  return reduceF(op, operands[0], op.getDimAttr(), op.getKeepdim(), results,
                 [correction](Tensor &out, int64_t o, ArrayRef<double> v) {
                   double n = (double)v.size();
                   double s = 0;
                   for (double d : v)
                     s += d;
                   double mean = s / n;
                   double m2 = 0;
                   for (double d : v)
                     m2 += (d - mean) * (d - mean);
                   out.setF(o, m2 / std::max(0.0, n - correction));
                 });
}

LogicalResult interpretLogsumexp(LogsumexpOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  return reduceF(op, operands[0], op.getDimAttr(), op.getKeepdim(), results,
                 [](Tensor &out, int64_t o, ArrayRef<double> v) {
                   double m = -std::numeric_limits<double>::infinity();
                   for (double d : v) {
                     if (std::isnan(d)) {
                       m = d;
                       break;
                     }
                     m = std::max(m, d);
                   }
                   if (std::isinf(m))
                     m = 0;
                   double s = 0;
                   for (double d : v)
                     s += std::exp(d - m);
                   out.setF(o, std::log(s) + m);
                 });
}

template <typename OpT, bool Any>
LogicalResult interpretAnyAll(OpT op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  return reduceF(op, operands[0], op.getDimAttr(), op.getKeepdim(), results,
                 [](Tensor &out, int64_t o, ArrayRef<double> v) {
                   bool r = !Any;
                   for (double d : v) {
                     bool b = d != 0.0; // NaN != 0
                     if (Any ? b : !b) {
                       r = Any;
                       break;
                     }
                   }
                   out.setI(o, r ? 1 : 0);
                 });
}

template <typename OpT, bool Max>
LogicalResult interpretArg(OpT op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  std::optional<int64_t> dim;
  if (IntegerAttr d = op.getDimAttr()) {
    int64_t v = d.getInt();
    dim = v < 0 ? v + std::max<int64_t>(x.rank(), 1) : v;
  }
  SmallVector<int64_t> dims;
  if (dim && x.rank() > 0)
    dims.push_back(*dim);
  if (failed(checkNonEmpty(op, x, dims, !dim)))
    return failure();
  // Without dim: the flattened tensor, with an all-ones/rank-0 result.
  Tensor in = dim ? x : x.reshaped({x.numel()});
  SmallVector<int64_t> redDims = dim ? dims : SmallVector<int64_t>{0};
  Grouping g = makeGrouping(in.shape(), redDims, op.getKeepdim() && dim);
  SmallVector<int64_t> outShape = g.outShape;
  if (!dim)
    outShape.assign(op.getKeepdim() ? x.rank() : 0, 1);
  if (failed(checkResultShape(op, outShape)))
    return failure();
  Tensor out;
  if (failed(allocTensor(op, out, DType::I64, outShape)))
    return failure();
  bool isF = in.isFloat();
  for (size_t o = 0; o < g.baseOffsets.size(); ++o) {
    int64_t best = 0;
    if (isF) {
      double m = in.getF(g.baseOffsets[o] + g.groupOffsets[0]);
      for (int64_t k = 0; k < g.groupSize() && !std::isnan(m); ++k) {
        double v = in.getF(g.baseOffsets[o] + g.groupOffsets[k]);
        if (std::isnan(v) || (Max ? v > m : v < m)) {
          m = v;
          best = k;
        }
      }
    } else {
      int64_t m = in.getI(g.baseOffsets[o] + g.groupOffsets[0]);
      for (int64_t k = 1; k < g.groupSize(); ++k) {
        int64_t v = in.getI(g.baseOffsets[o] + g.groupOffsets[k]);
        if (Max ? v > m : v < m) {
          m = v;
          best = k;
        }
      }
    }
    out.setI(o, best);
  }
  results.push_back(std::move(out));
  return success();
}


/// PyTorch's _log_add_exp_helper(x, acc) (x: the new element).
double logAddExp(double x, double y) {
  double mn = std::isnan(y) ? y : std::min(x, y);
  double mx = std::isnan(y) ? y : std::max(x, y);
  if (mn != mx || std::isfinite(mn))
    return std::log1p(std::exp(mn - mx)) + mx;
  return x;
}

/// A scan along `dim`: acc = combine(acc, x) from `init`, every partial
/// result stored. Floats accumulate in double, rounded to f32 after each
/// step for f16/bf16 (PyTorch's acc_type on CPU); integers in int64 with
/// wrap-around (`ci`).
template <typename OpT, typename CF, typename CI>
LogicalResult cumulativeKernel(OpT op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results, double initF,
                               int64_t initI, CF cf, CI ci) {
  const Tensor &a = operands[0];
  ArrayRef<int64_t> shape = a.shape();
  int64_t rank = shape.size();
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  int64_t d = rank ? wrapDim(op.getDim(), rank) : 0;
  int64_t n = rank ? shape[d] : 1, inner = 1, outer = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < d)
      outer *= shape[i];
    else if (i > d)
      inner *= shape[i];
  }
  bool half = a.dtype() == DType::F16 || a.dtype() == DType::BF16;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      double accF = initF;
      int64_t accI = initI;
      for (int64_t k = 0; k < n; ++k) {
        int64_t idx = (o * n + k) * inner + in;
        if (a.isFloat()) {
          accF = cf(accF, a.getF(idx));
          if (half)
            accF = roundToDType(accF, DType::F32);
          out.setF(idx, accF);
        } else {
          accI = ci(accI, a.getI(idx));
          out.setI(idx, accI);
        }
      }
    }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretCumsum(CumsumOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  return cumulativeKernel(
      op, operands, results, 0.0, 0, [](double acc, double x) { return acc + x; },
      [](int64_t acc, int64_t x) {
        return (int64_t)((uint64_t)acc + (uint64_t)x);
      });
}

LogicalResult interpretCumprod(CumprodOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  return cumulativeKernel(
      op, operands, results, 1.0, 1, [](double acc, double x) { return acc * x; },
      [](int64_t acc, int64_t x) {
        return (int64_t)((uint64_t)acc * (uint64_t)x);
      });
}

LogicalResult interpretLogcumsumexp(LogcumsumexpOp op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results) {
  return cumulativeKernel(
      op, operands, results, -std::numeric_limits<double>::infinity(), 0,
      [](double acc, double x) { return logAddExp(x, acc); },
      [](int64_t acc, int64_t) { return acc; });
}

/// nonzero: the row-major indices of the elements that are not zero
/// (-0.0 is zero, NaN is not), one row of rank(self) per element.
LogicalResult interpretNonzero(NonzeroOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  ArrayRef<int64_t> shape = a.shape();
  int64_t rank = shape.size();
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  bool isF = a.isFloat();
  auto nonzero = [&](int64_t i) {
    return isF ? a.getF(i) != 0.0 : a.getI(i) != 0; // NaN != 0 is true
  };
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i)
    count += nonzero(i);
  Tensor out;
  if (failed(allocTensor(op, out, DType::I64, {count, rank})))
    return failure();
  int64_t row = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!nonzero(i))
      continue;
    int64_t rem = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      out.setI(row * rank + d, rem % shape[d]);
      rem /= shape[d];
    }
    ++row;
  }
  results.push_back(std::move(out));
  return success();
}

/// bincount: per value k in [0, max(max(self) + 1, minlength)), the number
/// of elements equal to k, or the sum of their weights in order (rounded to
/// the weights' type at each step, as PyTorch's CPU kernel).
LogicalResult interpretBincount(BincountOp op, ArrayRef<Tensor> operands,
                                SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  const Tensor *w = operands.size() > 1 ? &operands[1] : nullptr;
  int64_t n = a.numel();
  if (w && w->numel() != n)
    return op.emitError() << "weights have length " << w->numel()
                          << " but self has length " << n;
  int64_t len = op.getMinlength();
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = a.getI(i);
    if (v < 0)
      return op.emitError() << "bincount only supports non-negative inputs: "
                            << "self[" << i << "] is " << v;
    len = std::max(len, v + 1);
  }
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), {len})))
    return failure();
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = a.getI(i);
    if (w)
      out.setF(v, out.getF(v) + w->getF(i));
    else
      out.setI(v, out.getI(v) + 1);
  }
  results.push_back(std::move(out));
  return success();
}

/// argsort: per slice along `dim`, a stable sort of the positions with
/// NaN larger than every number (ascending: last; descending: first).
LogicalResult interpretArgsort(ArgsortOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0];
  ArrayRef<int64_t> shape = a.shape();
  int64_t rank = shape.size();
  Tensor out;
  if (failed(allocTensor(op, out, DType::I64, shape)))
    return failure();
  int64_t d = rank ? wrapDim(op.getDim(), rank) : 0;
  int64_t n = rank ? shape[d] : 1, inner = 1, outer = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < d)
      outer *= shape[i];
    else if (i > d)
      inner *= shape[i];
  }
  bool desc = op.getDescending();
  bool isF = a.isFloat();
  SmallVector<int64_t> perm(n);
  SmallVector<double> vf(isF ? n : 0);
  SmallVector<int64_t> vi(isF ? 0 : n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      for (int64_t k = 0; k < n; ++k) {
        perm[k] = k;
        int64_t idx = (o * n + k) * inner + in;
        if (isF)
          vf[k] = a.getF(idx);
        else
          vi[k] = a.getI(idx);
      }
      // "l before r": NaN is the largest value.
      auto before = [&](int64_t l, int64_t r) {
        if (isF) {
          double x = vf[l], y = vf[r];
          if (desc)
            return x > y || (std::isnan(x) && !std::isnan(y));
          return x < y || (!std::isnan(x) && std::isnan(y));
        }
        return desc ? vi[l] > vi[r] : vi[l] < vi[r];
      };
      // Stable: equal elements ordered by position (a strict weak order,
      // so std::sort gives the stable permutation).
      std::sort(perm.begin(), perm.end(), [&](int64_t l, int64_t r) {
        return before(l, r) || (!before(r, l) && l < r);
      });
      for (int64_t k = 0; k < n; ++k)
        out.setI((o * n + k) * inner + in, perm[k]);
    }
  }
  results.push_back(std::move(out));
  return success();
}

/// searchsorted: PyTorch's cus_lower_bound / cus_upper_bound per value, in
/// double (exact for every kt dtype but i64 beyond 2^53: integers compare as
/// int64).
LogicalResult interpretSearchsorted(SearchsortedOp op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results) {
  const Tensor &seq = operands[0], &val = operands[1];
  ArrayRef<int64_t> ss = seq.shape(), vs = val.shape();
  int64_t sr = ss.size();
  if (sr > 1)
    for (int64_t k = 0; k + 1 < sr; ++k)
      if (ss[k] != vs[k])
        return op.emitError() << "leading dim " << k << " of sorted_sequence is "
                              << ss[k] << " but of values " << vs[k]
                              << " at run time (they must be equal)";
  Tensor out;
  if (failed(allocTensor(op, out, DType::I64, vs)))
    return failure();
  int64_t m = ss.back();
  int64_t inner = sr > 1 ? vs.back() : 0; // values per sequence (N-D)
  bool right = op.getRight(), isF = seq.isFloat();
  for (int64_t e = 0, n = val.numel(); e < n; ++e) {
    int64_t base = sr > 1 ? (e / inner) * m : 0;
    int64_t start = 0, end = m;
    while (start < end) {
      int64_t mid = start + ((end - start) >> 1);
      bool goRight;
      if (isF) {
        double a = seq.getF(base + mid), v = val.getF(e);
        goRight = right ? !(a > v) : !(a >= v);
      } else {
        int64_t a = seq.getI(base + mid), v = val.getI(e);
        goRight = right ? !(a > v) : !(a >= v);
      }
      if (goRight)
        start = mid + 1;
      else
        end = mid;
    }
    out.setI(e, start);
  }
  results.push_back(std::move(out));
  return success();
}

} // namespace

void registerReductionKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<CumsumOp, interpretCumsum>(ctx);
    attachKernel<CumprodOp, interpretCumprod>(ctx);
    attachKernel<LogcumsumexpOp, interpretLogcumsumexp>(ctx);
    attachKernel<SumOp, interpretSum>(ctx);
    attachKernel<MeanOp, interpretMean>(ctx);
    attachKernel<AmaxOp, interpretMinMax<AmaxOp, true>>(ctx);
    attachKernel<AminOp, interpretMinMax<AminOp, false>>(ctx);
    attachKernel<ProdOp, interpretProd>(ctx);
    attachKernel<VarOp, interpretVar>(ctx);
    attachKernel<LogsumexpOp, interpretLogsumexp>(ctx);
    attachKernel<AnyOp, interpretAnyAll<AnyOp, true>>(ctx);
    attachKernel<AllOp, interpretAnyAll<AllOp, false>>(ctx);
    attachKernel<ArgmaxOp, interpretArg<ArgmaxOp, true>>(ctx);
    attachKernel<ArgminOp, interpretArg<ArgminOp, false>>(ctx);
    attachKernel<ArgsortOp, interpretArgsort>(ctx);
    attachKernel<NonzeroOp, interpretNonzero>(ctx);
    attachKernel<BincountOp, interpretBincount>(ctx);
    attachKernel<SearchsortedOp, interpretSearchsorted>(ctx);
  });
}

} // namespace kiln::interp
