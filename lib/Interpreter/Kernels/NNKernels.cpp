//===- NNKernels.cpp - Interpreter kernels of NN ops ----------------===//
//
// Part of Kiln. matmul, linear, conv2d, conv_transpose2d, max_pool2d, avg_pool2d, embedding.
// Operands are copied once into contiguous double (or int64) buffers; the
// loops accumulate in double and each result element is stored once
// (rounded to the result dtype by Tensor::setF).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

/// NumPy broadcasting of two runtime shapes (batch dims of matmul).
FailureOr<SmallVector<int64_t>> broadcastPair(Operation *op,
                                              ArrayRef<int64_t> a,
                                              ArrayRef<int64_t> b) {
  size_t r = std::max(a.size(), b.size());
  SmallVector<int64_t> out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) {
      op->emitError() << "batch dims are not broadcast-compatible at run time: "
                      << x << " vs " << y << " in batch dim " << i;
      return failure();
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

int64_t wrapMul(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x * (uint64_t)y);
}
int64_t wrapAdd(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x + (uint64_t)y);
}

LogicalResult interpretMatmul(MatmulOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &a = operands[0], &b = operands[1];
  int64_t ra = a.rank(), rb = b.rank();
  int64_t K = a.dim(ra - 1), Kb = rb == 1 ? b.dim(0) : b.dim(rb - 2);
  if (K != Kb)
    return op.emitError() << "contracting dims differ at run time: " << K
                          << " vs " << Kb;
  int64_t M = ra >= 2 ? a.dim(ra - 2) : 1, N = rb >= 2 ? b.dim(rb - 1) : 1;
  ArrayRef<int64_t> aBatch = ra > 2 ? a.shape().drop_back(2) : ArrayRef<int64_t>();
  ArrayRef<int64_t> bBatch = rb > 2 ? b.shape().drop_back(2) : ArrayRef<int64_t>();
  FailureOr<SmallVector<int64_t>> batch = broadcastPair(op, aBatch, bBatch);
  if (failed(batch))
    return failure();
  SmallVector<int64_t> outShape(*batch);
  if (ra >= 2)
    outShape.push_back(M);
  if (rb >= 2)
    outShape.push_back(N);
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), outShape)))
    return failure();
  if (out.numel() == 0 || K == 0) { // zeros (an empty sum)
    results.push_back(std::move(out));
    return success();
  }
  SmallVector<SmallVector<int64_t>> strides{broadcastStrides(aBatch, *batch),
                                            broadcastStrides(bBatch, *batch)};
  for (int64_t &s : strides[0])
    s *= M * K;
  for (int64_t &s : strides[1])
    s *= K * N;
  if (a.isFloat()) {
    std::vector<double> A = a.toDoubles(), B = b.toDoubles(), acc(N);
    forEachBroadcast(*batch, strides, [&](int64_t bi, ArrayRef<int64_t> o) {
      const double *pa = A.data() + o[0], *pb = B.data() + o[1];
      for (int64_t i = 0; i < M; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const double *arow = pa + i * K;
        for (int64_t k = 0; k < K; ++k) {
          double av = arow[k];
          const double *brow = pb + k * N;
          double *ac = acc.data();
          for (int64_t j = 0; j < N; ++j)
            ac[j] += av * brow[j];
        }
        int64_t base = (bi * M + i) * N;
        for (int64_t j = 0; j < N; ++j)
          out.setF(base + j, acc[j]);
      }
    });
  } else {
    std::vector<int64_t> A = a.toInts(), B = b.toInts(), acc(N);
    forEachBroadcast(*batch, strides, [&](int64_t bi, ArrayRef<int64_t> o) {
      const int64_t *pa = A.data() + o[0], *pb = B.data() + o[1];
      for (int64_t i = 0; i < M; ++i) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t k = 0; k < K; ++k) {
          int64_t av = pa[i * K + k];
          const int64_t *brow = pb + k * N;
          for (int64_t j = 0; j < N; ++j)
            acc[j] = wrapAdd(acc[j], wrapMul(av, brow[j]));
        }
        int64_t base = (bi * M + i) * N;
        for (int64_t j = 0; j < N; ++j)
          out.setI(base + j, acc[j]);
      }
    });
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretLinear(LinearOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0], &w = operands[1];
  int64_t in = x.dim(x.rank() - 1), outF = w.dim(0);
  if (w.dim(1) != in)
    return op.emitError() << "`input` has " << in
                          << " features but `weight` expects " << w.dim(1)
                          << " (at run time)";
  const Tensor *bias = operands.size() > 2 ? &operands[2] : nullptr;
  if (bias && bias->dim(0) != outF)
    return op.emitError() << "`bias` has " << bias->dim(0)
                          << " elements but `weight` has " << outF
                          << " out_features (at run time)";
  SmallVector<int64_t> shape(x.shape().drop_back());
  int64_t rows = numElements(shape);
  shape.push_back(outF);
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  if (out.numel() == 0) {
    results.push_back(std::move(out));
    return success();
  }
  std::vector<double> X = x.toDoubles(), W = w.toDoubles();
  std::vector<double> WT(in * outF); // [in, out]
  for (int64_t j = 0; j < outF; ++j)
    for (int64_t k = 0; k < in; ++k)
      WT[k * outF + j] = W[j * in + k];
  std::vector<double> B(outF, 0.0), acc(outF);
  if (bias)
    B = bias->toDoubles();
  for (int64_t i = 0; i < rows; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < in; ++k) {
      double xv = X[i * in + k];
      const double *wr = WT.data() + k * outF;
      for (int64_t j = 0; j < outF; ++j)
        acc[j] += xv * wr[j];
    }
    for (int64_t j = 0; j < outF; ++j)
      out.setF(i * outF + j, acc[j] + B[j]);
  }
  results.push_back(std::move(out));
  return success();
}

/// PyTorch's pooling_output_shape.
int64_t outSize(int64_t in, int64_t k, int64_t pad, int64_t stride,
                int64_t dil, bool ceil) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  int64_t q = num / stride;
  if (num % stride != 0 && num < 0)
    --q;
  int64_t out = q + 1;
  if (ceil && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

LogicalResult interpretConv2d(Conv2dOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0], &w = operands[1];
  const Tensor *bias = operands.size() > 2 ? &operands[2] : nullptr;
  bool batched = x.rank() == 4;
  int64_t Nb = batched ? x.dim(0) : 1, C = x.dim(x.rank() - 3),
          H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
  int64_t O = w.dim(0), Cg = w.dim(1), kH = w.dim(2), kW = w.dim(3);
  int64_t G = op.getGroups();
  SmallVector<int64_t, 2> st = op.getStrideHW(), pd = op.getPaddingHW(),
                          dl = op.getDilationHW();
  if (C % G != 0 || C / G != Cg)
    return op.emitError() << "input has " << C << " channels but `weight` "
                          << "expects " << Cg << " x " << G
                          << " groups (at run time)";
  if (O % G != 0)
    return op.emitError() << "output channels " << O
                          << " are not divisible by groups " << G;
  if (bias && bias->dim(0) != O)
    return op.emitError() << "`bias` has " << bias->dim(0)
                          << " elements but there are " << O
                          << " output channels (at run time)";
  int64_t OH = outSize(H, kH, pd[0], st[0], dl[0], false);
  int64_t OW = outSize(W, kW, pd[1], st[1], dl[1], false);
  if (OH < 1 || OW < 1)
    return op.emitError() << "padded input " << H + 2 * pd[0] << "x"
                          << W + 2 * pd[1]
                          << " is smaller than the dilated kernel (at run time)";
  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(Nb);
  shape.append({O, OH, OW});
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  if (out.numel() == 0) {
    results.push_back(std::move(out));
    return success();
  }
  std::vector<double> X = x.toDoubles(), Wt = w.toDoubles();
  std::vector<double> B(O, 0.0);
  if (bias)
    B = bias->toDoubles();
  int64_t Og = O / G;
  std::vector<double> acc(OH * OW);
  // Valid output column range [lo, hi) for each kw.
  SmallVector<int64_t> owLo(kW), owHi(kW);
  for (int64_t kw = 0; kw < kW; ++kw) {
    int64_t off = kw * dl[1] - pd[1];
    int64_t lo = off >= 0 ? 0 : (-off + st[1] - 1) / st[1];
    int64_t hi = (W - 1 - off) >= 0 ? std::min(OW, (W - 1 - off) / st[1] + 1) : 0;
    owLo[kw] = lo;
    owHi[kw] = std::max(lo, hi);
  }
  int64_t sW = st[1];
  for (int64_t n = 0; n < Nb; ++n) {
    for (int64_t oc = 0; oc < O; ++oc) {
      int64_t g = oc / Og;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t ic = 0; ic < Cg; ++ic) {
        const double *xp = X.data() + (n * C + g * Cg + ic) * H * W;
        const double *wp = Wt.data() + (oc * Cg + ic) * kH * kW;
        for (int64_t kh = 0; kh < kH; ++kh) {
          for (int64_t kw = 0; kw < kW; ++kw) {
            double wv = wp[kh * kW + kw];
            int64_t off = kw * dl[1] - pd[1];
            int64_t lo = owLo[kw], hi = owHi[kw];
            for (int64_t oh = 0; oh < OH; ++oh) {
              int64_t ih = oh * st[0] - pd[0] + kh * dl[0];
              if (ih < 0 || ih >= H)
                continue;
              const double *xr = xp + ih * W + off;
              double *ar = acc.data() + oh * OW;
              for (int64_t ow = lo; ow < hi; ++ow)
                ar[ow] += wv * xr[ow * sW];
            }
          }
        }
      }
      int64_t base = (n * O + oc) * OH * OW;
      for (int64_t i = 0; i < OH * OW; ++i)
        out.setF(base + i, acc[i] + B[oc]);
    }
  }
  results.push_back(std::move(out));
  return success();
}

/// conv_transpose2d: every input element scatters into the output through
/// the (dilated) kernel (the adjoint of interpretConv2d).
LogicalResult interpretConvTranspose2d(ConvTranspose2dOp op,
                                       ArrayRef<Tensor> operands,
                                       SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0], &w = operands[1];
  const Tensor *bias = operands.size() > 2 ? &operands[2] : nullptr;
  bool batched = x.rank() == 4;
  int64_t Nb = batched ? x.dim(0) : 1, C = x.dim(x.rank() - 3),
          H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
  int64_t Ci = w.dim(0), Og = w.dim(1), kH = w.dim(2), kW = w.dim(3);
  int64_t G = op.getGroups();
  SmallVector<int64_t, 2> st = op.getStrideHW(), pd = op.getPaddingHW(),
                          op2 = op.getOutputPaddingHW(),
                          dl = op.getDilationHW();
  if (C != Ci || C % G != 0)
    return op.emitError() << "input has " << C << " channels but `weight` "
                          << "expects " << Ci << " in " << G
                          << " groups (at run time)";
  int64_t O = Og * G, Cg = C / G;
  if (bias && bias->dim(0) != O)
    return op.emitError() << "`bias` has " << bias->dim(0)
                          << " elements but there are " << O
                          << " output channels (at run time)";
  int64_t OH = (H - 1) * st[0] - 2 * pd[0] + dl[0] * (kH - 1) + op2[0] + 1;
  int64_t OW = (W - 1) * st[1] - 2 * pd[1] + dl[1] * (kW - 1) + op2[1] + 1;
  if (OH < 1 || OW < 1)
    return op.emitError() << "output size is too small at run time: " << OH
                          << "x" << OW;
  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(Nb);
  shape.append({O, OH, OW});
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  if (out.numel() == 0) {
    results.push_back(std::move(out));
    return success();
  }
  std::vector<double> X = x.toDoubles(), Wt = w.toDoubles();
  std::vector<double> B(O, 0.0);
  if (bias)
    B = bias->toDoubles();
  std::vector<double> acc(OH * OW);
  for (int64_t n = 0; n < Nb; ++n)
    for (int64_t oc = 0; oc < O; ++oc) {
      int64_t g = oc / Og, o = oc % Og;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t ic = 0; ic < Cg; ++ic) {
        int64_t c = g * Cg + ic;
        const double *xp = X.data() + (n * C + c) * H * W;
        const double *wp = Wt.data() + (c * Og + o) * kH * kW;
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < kH; ++i) {
            int64_t oh = h * st[0] - pd[0] + i * dl[0];
            if (oh < 0 || oh >= OH)
              continue;
            for (int64_t ww = 0; ww < W; ++ww) {
              double xv = xp[h * W + ww];
              for (int64_t j = 0; j < kW; ++j) {
                int64_t ow = ww * st[1] - pd[1] + j * dl[1];
                if (ow < 0 || ow >= OW)
                  continue;
                acc[oh * OW + ow] += xv * wp[i * kW + j];
              }
            }
          }
      }
      int64_t base = (n * O + oc) * OH * OW;
      for (int64_t i = 0; i < OH * OW; ++i)
        out.setF(base + i, acc[i] + B[oc]);
    }
  results.push_back(std::move(out));
  return success();
}

/// Shared setup of the pooling kernels: runtime output shape and checks.
LogicalResult poolShape(Operation *op, const Tensor &x, ArrayRef<int64_t> k,
                        ArrayRef<int64_t> st, ArrayRef<int64_t> pd,
                        ArrayRef<int64_t> dl, bool ceil,
                        SmallVectorImpl<int64_t> &shape, int64_t &planes,
                        int64_t &OH, int64_t &OW) {
  int64_t r = x.rank();
  int64_t H = x.dim(r - 2), W = x.dim(r - 1);
  for (int64_t d = r == 4 ? 1 : 0; d < r; ++d)
    if (x.dim(d) == 0)
      return op->emitError() << "expects non-zero sizes in all non-batch dims, "
                                "got a zero-size dim "
                             << d;
  OH = outSize(H, k[0], pd[0], st[0], dl[0], ceil);
  OW = outSize(W, k[1], pd[1], st[1], dl[1], ceil);
  if (OH < 1 || OW < 1)
    return op->emitError() << "output size is too small at run time: "
                           << OH << "x" << OW;
  shape.assign(x.shape().begin(), x.shape().end());
  shape[r - 2] = OH;
  shape[r - 1] = OW;
  planes = numElements(x.shape().drop_back(2));
  return success();
}

LogicalResult interpretMaxPool2d(MaxPool2dOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                          pd = op.getPaddingHW(), dl = op.getDilationHW();
  SmallVector<int64_t> shape;
  int64_t planes, OH, OW;
  if (failed(poolShape(op, x, k, st, pd, dl, op.getCeilMode(), shape, planes,
                       OH, OW)))
    return failure();
  int64_t H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  std::vector<double> X = x.isFloat() ? x.toDoubles() : std::vector<double>();
  for (int64_t p = 0; p < planes; ++p) {
    const double *xp = X.data() + (x.isFloat() ? p * H * W : 0);
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t kh = 0; kh < k[0]; ++kh) {
          int64_t ih = oh * st[0] - pd[0] + kh * dl[0];
          if (ih < 0 || ih >= H)
            continue;
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            int64_t iw = ow * st[1] - pd[1] + kw * dl[1];
            if (iw < 0 || iw >= W)
              continue;
            // kt.maximum: NaN propagates, -0.0 < +0.0.
            m = ieeeMaximum(m, xp[ih * W + iw]);
          }
        }
        out.setF((p * OH + oh) * OW + ow, m);
      }
  }
  results.push_back(std::move(out));
  return success();
}

/// Checks a pool backward's `grad_output` against the forward's shape.
LogicalResult checkPoolGrad(Operation *op, const Tensor &g,
                            ArrayRef<int64_t> shape) {
  if (g.shape() != ArrayRef<int64_t>(shape))
    return op->emitError() << "`grad_output` has shape " << shapeStr(g.shape())
                           << " but the pooling of `self` gives "
                           << shapeStr(shape) << " (at run time)";
  return success();
}

/// max_pool2d_backward: each output gradient goes to its window's argmax
/// by PyTorch's CPU rule (in-bounds positions in row-major order; a
/// position takes over when greater than the running max or NaN; the first
/// in-bounds position when none does).
LogicalResult interpretMaxPool2dBackward(MaxPool2dBackwardOp op,
                                         ArrayRef<Tensor> operands,
                                         SmallVectorImpl<Tensor> &results) {
  const Tensor &g = operands[0], &x = operands[1];
  SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                          pd = op.getPaddingHW(), dl = op.getDilationHW();
  SmallVector<int64_t> shape;
  int64_t planes, OH, OW;
  if (failed(poolShape(op, x, k, st, pd, dl, op.getCeilMode(), shape, planes,
                       OH, OW)) ||
      failed(checkPoolGrad(op, g, shape)))
    return failure();
  int64_t H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
  std::vector<double> X = x.toDoubles(), G = g.toDoubles();
  std::vector<double> acc(X.size(), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    const double *xp = X.data() + p * H * W;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t best = -1;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t kh = 0; kh < k[0]; ++kh) {
          int64_t ih = oh * st[0] - pd[0] + kh * dl[0];
          if (ih < 0 || ih >= H)
            continue;
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            int64_t iw = ow * st[1] - pd[1] + kw * dl[1];
            if (iw < 0 || iw >= W)
              continue;
            double v = xp[ih * W + iw];
            bool takes = v > m || std::isnan(v);
            if (best < 0 || takes)
              best = ih * W + iw;
            if (takes)
              m = v;
          }
        }
        if (best >= 0)
          acc[p * H * W + best] += G[(p * OH + oh) * OW + ow];
      }
  }
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), x.shape())))
    return failure();
  for (int64_t i = 0, e = (int64_t)acc.size(); i < e; ++i)
    out.setF(i, acc[i]);
  results.push_back(std::move(out));
  return success();
}

/// avg_pool2d_backward: every in-bounds position of a window gets the
/// window's gradient over the forward's divisor.
LogicalResult interpretAvgPool2dBackward(AvgPool2dBackwardOp op,
                                         ArrayRef<Tensor> operands,
                                         SmallVectorImpl<Tensor> &results) {
  const Tensor &g = operands[0], &x = operands[1];
  SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                          pd = op.getPaddingHW();
  SmallVector<int64_t> dl{1, 1};
  SmallVector<int64_t> shape;
  int64_t planes, OH, OW;
  if (failed(poolShape(op, x, k, st, pd, dl, op.getCeilMode(), shape, planes,
                       OH, OW)) ||
      failed(checkPoolGrad(op, g, shape)))
    return failure();
  int64_t H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
  bool includePad = op.getCountIncludePad();
  std::optional<int64_t> divOverride;
  if (auto a = op.getDivisorOverrideAttr())
    divOverride = a.getInt();
  std::vector<double> G = g.toDoubles();
  std::vector<double> acc(x.numel(), 0.0);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t hs = oh * st[0] - pd[0], ws = ow * st[1] - pd[1];
        int64_t he = std::min(hs + k[0], H + pd[0]);
        int64_t we = std::min(ws + k[1], W + pd[1]);
        int64_t poolSize = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0);
        ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H);
        we = std::min(we, W);
        if (hs >= he || ws >= we)
          continue;
        double div = divOverride ? (double)*divOverride
                     : includePad ? (double)poolSize
                                  : (double)((he - hs) * (we - ws));
        double v = G[(p * OH + oh) * OW + ow] / div;
        for (int64_t ih = hs; ih < he; ++ih)
          for (int64_t iw = ws; iw < we; ++iw)
            acc[p * H * W + ih * W + iw] += v;
      }
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), x.shape())))
    return failure();
  for (int64_t i = 0, e = (int64_t)acc.size(); i < e; ++i)
    out.setF(i, acc[i]);
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretAvgPool2d(AvgPool2dOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &x = operands[0];
  SmallVector<int64_t, 2> k = op.getKernelHW(), st = op.getStrideHW(),
                          pd = op.getPaddingHW();
  SmallVector<int64_t> dl{1, 1};
  SmallVector<int64_t> shape;
  int64_t planes, OH, OW;
  if (failed(poolShape(op, x, k, st, pd, dl, op.getCeilMode(), shape, planes,
                       OH, OW)))
    return failure();
  int64_t H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
  bool includePad = op.getCountIncludePad();
  std::optional<int64_t> divOverride;
  if (auto a = op.getDivisorOverrideAttr())
    divOverride = a.getInt();
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  std::vector<double> X = x.isFloat() ? x.toDoubles() : std::vector<double>();
  for (int64_t p = 0; p < planes; ++p) {
    const double *xp = X.data() + (x.isFloat() ? p * H * W : 0);
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t hs = oh * st[0] - pd[0], ws = ow * st[1] - pd[1];
        int64_t he = std::min(hs + k[0], H + pd[0]);
        int64_t we = std::min(ws + k[1], W + pd[1]);
        int64_t poolSize = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0);
        ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H);
        we = std::min(we, W);
        int64_t o = (p * OH + oh) * OW + ow;
        if (hs >= he || ws >= we) {
          out.setF(o, 0.0);
          continue;
        }
        int64_t idiv = divOverride ? *divOverride
                       : includePad ? poolSize
                                    : (he - hs) * (we - ws);
        if (!x.isFloat()) {
          // i64, as PyTorch's CPU kernel: the sum wraps, the quotient
          // truncates toward zero.
          uint64_t isum = 0;
          for (int64_t ih = hs; ih < he; ++ih)
            for (int64_t iw = ws; iw < we; ++iw)
              isum += (uint64_t)x.getI(p * H * W + ih * W + iw);
          int64_t s = (int64_t)isum;
          out.setI(o, (s == INT64_MIN && idiv == -1) ? s : s / idiv);
          continue;
        }
        double sum = 0.0;
        for (int64_t ih = hs; ih < he; ++ih)
          for (int64_t iw = ws; iw < we; ++iw)
            sum += xp[ih * W + iw];
        double div = divOverride ? (double)*divOverride
                     : includePad ? (double)poolSize
                                  : (double)((he - hs) * (we - ws));
        out.setF(o, sum / div);
      }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretEmbedding(EmbeddingOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &w = operands[0], &idx = operands[1];
  int64_t num = w.dim(0), dim = w.dim(1);
  SmallVector<int64_t> shape(idx.shape());
  shape.push_back(dim);
  Tensor out;
  if (failed(allocTensor(op, out, resultDType(op), shape)))
    return failure();
  size_t rowBytes = dim * dtypeSize(w.dtype());
  const uint8_t *src = static_cast<const uint8_t *>(w.data());
  uint8_t *dst = static_cast<uint8_t *>(out.mutableData());
  for (int64_t i = 0, e = idx.numel(); i < e; ++i) {
    int64_t v = idx.getI(i);
    if (v < 0 || v >= num)
      return op.emitError() << "index " << v
                            << " is out of range for an embedding table of "
                            << num << " rows";
    if (rowBytes)
      std::memcpy(dst + i * rowBytes, src + v * rowBytes, rowBytes);
  }
  results.push_back(std::move(out));
  return success();
}

} // namespace

void registerNNKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<MatmulOp, interpretMatmul>(ctx);
    attachKernel<LinearOp, interpretLinear>(ctx);
    attachKernel<Conv2dOp, interpretConv2d>(ctx);
    attachKernel<ConvTranspose2dOp, interpretConvTranspose2d>(ctx);
    attachKernel<MaxPool2dBackwardOp, interpretMaxPool2dBackward>(ctx);
    attachKernel<AvgPool2dBackwardOp, interpretAvgPool2dBackward>(ctx);
    attachKernel<MaxPool2dOp, interpretMaxPool2d>(ctx);
    attachKernel<AvgPool2dOp, interpretAvgPool2d>(ctx);
    attachKernel<EmbeddingOp, interpretEmbedding>(ctx);
  });
}

} // namespace kiln::interp
