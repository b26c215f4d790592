//===- ShapeKernels.cpp - Interpreter kernels of Shape ops ----------------===//
//
// Part of Kiln. Shape ops move elements without arithmetic, so elements are
// copied bytewise (exact for every dtype). Most ops are a strided view of the
// input (permute, flip, slice, select, expand) and share `stridedCopy`.
// Result shapes are computed from the runtime input shapes and the attributes,
// never from the (possibly `?`) result type.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <string>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

void copyElem(Tensor &out, int64_t o, const Tensor &in, int64_t i) {
  size_t es = dtypeSize(out.dtype());
  std::memcpy(static_cast<uint8_t *>(out.mutableData()) + o * es,
              static_cast<const uint8_t *>(in.data()) + i * es, es);
}

/// Appends to `results` the result of `op`: out[idx] = in[view.offset +
/// sum_k idx[k] * view.strides[k]] for each idx of `view.shape` (`in`
/// contiguous).
LogicalResult stridedCopy(Operation *op, const Tensor &in, DType dt,
                          const StridedView &view,
                          SmallVectorImpl<Tensor> &results) {
  Tensor out;
  if (failed(allocTensor(op, out, dt, view.shape)))
    return failure();
  forEachStrided(view, [&](int64_t o, int64_t i) { copyElem(out, o, in, i); });
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretReshape(ReshapeOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  FailureOr<SmallVector<int64_t>> target = substituteSizes(
      op, getI64Array(op.getShapeAttr()), operands.drop_front());
  if (failed(target))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      reshapeSizes(op, in.shape(), *target, "reshape tensor", "into");
  if (failed(shape))
    return failure();
  results.push_back(in.reshaped(*shape));
  return success();
}

/// Appends `in` permuted so that result dim i is input dim perm[i].
LogicalResult permuteTensor(Operation *op, const Tensor &in, DType dt,
                            ArrayRef<int64_t> perm,
                            SmallVectorImpl<Tensor> &results) {
  return stridedCopy(op, in, dt,
                     StridedView::contiguous(in.shape()).permuted(perm),
                     results);
}

LogicalResult interpretTranspose(TransposeOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t rank = in.rank();
  if (rank == 0) {
    results.push_back(in);
    return success();
  }
  SmallVector<int64_t> perm =
      transposePerm(rank, (int64_t)op.getDim0(), (int64_t)op.getDim1());
  return permuteTensor(op, in, resultDType(op), perm, results);
}

LogicalResult interpretPermute(PermuteOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  SmallVector<int64_t> perm = wrapDims(getI64Array(op.getDimsAttr()), in.rank());
  return permuteTensor(op, in, resultDType(op), perm, results);
}

LogicalResult interpretExpand(ExpandOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  FailureOr<StridedView> view = StridedView::contiguous(in.shape()).expanded(
      op, getI64Array(op.getSizeAttr()));
  if (failed(view))
    return failure();
  return stridedCopy(op, in, resultDType(op), *view, results);
}

LogicalResult interpretSqueeze(SqueezeOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  auto inT = cast<RankedTensorType>(op.getSelf().getType());
  FailureOr<StridedView> view = StridedView::contiguous(in.shape()).squeezed(
      op, op.getDimAttr(), inT.getShape(), "kt.reshape");
  if (failed(view))
    return failure();
  results.push_back(in.reshaped(view->shape));
  return success();
}

LogicalResult interpretUnsqueeze(UnsqueezeOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t d = (int64_t)op.getDim();
  if (d < 0)
    d += in.rank() + 1;
  SmallVector<int64_t> shape(in.shape());
  shape.insert(shape.begin() + d, 1);
  results.push_back(in.reshaped(shape));
  return success();
}

/// sliceBounds of kt.slice / kt.slice_scatter on a dim of `size`: a dynamic
/// start / end is the run-time value of a `bounds` operand in `dyn` (the
/// start first), with the same Python rules as an attribute.
template <typename OpT>
SliceBounds dynamicSliceBounds(OpT op, int64_t size, ArrayRef<Tensor> dyn) {
  std::optional<int64_t> start, end;
  if (op.getDynamicStart())
    start = dyn.front().getI(0);
  else if (auto s = op.getStart())
    start = (int64_t)*s;
  if (op.getDynamicEnd())
    end = dyn.back().getI(0);
  else if (auto e = op.getEnd())
    end = (int64_t)*e;
  return sliceBounds(size, start, end, (int64_t)op.getStep());
}

LogicalResult interpretSlice(SliceOp op, ArrayRef<Tensor> operands,
                             SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t d = kt::wrapDim((int64_t)op.getDim(), in.rank());
  SliceBounds bounds = dynamicSliceBounds(op, in.dim(d), operands.drop_front());
  return stridedCopy(op, in, resultDType(op),
                                StridedView::contiguous(in.shape())
                                    .sliced(d, bounds, (int64_t)op.getStep()), results);
}

LogicalResult interpretSelect(SelectOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t d = kt::wrapDim((int64_t)op.getDim(), in.rank());
  int64_t size = in.dim(d), index = (int64_t)op.getIndex();
  if (index < -size || index >= size)
    return op.emitError() << "index " << index << " is out of range for dim "
                          << d << " of size " << size;
  if (index < 0)
    index += size;
  return stridedCopy(op, in, resultDType(op),
                  StridedView::contiguous(in.shape()).selected(d, index), results);
}

LogicalResult interpretConcat(ConcatOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  auto skipped = [](const Tensor &t) {
    return t.rank() == 1 && t.dim(0) == 0;
  };
  SmallVector<const Tensor *> parts;
  for (const Tensor &t : operands)
    if (!skipped(t))
      parts.push_back(&t);
  DType dt = resultDType(op);
  if (parts.empty()) {
    // All operands are 1-D and empty.
    Tensor out;
    if (failed(allocTensor(op, out, dt, ArrayRef<int64_t>{0})))
      return failure();
    results.push_back(std::move(out));
    return success();
  }
  const Tensor &ref = *parts.front();
  int64_t rank = ref.rank();
  int64_t d = kt::wrapDim((int64_t)op.getDim(), rank);
  SmallVector<int64_t> shape(ref.shape());
  shape[d] = 0;
  for (const Tensor *t : parts) {
    if (t->rank() != rank)
      return op.emitError() << "operands have ranks " << rank << " and "
                            << t->rank() << " at run time";
    for (int64_t k = 0; k < rank; ++k)
      if (k != d && t->dim(k) != shape[k])
        return op.emitError()
               << "operand shapes " << shapeStr(ref.shape()) << " and "
               << shapeStr(t->shape()) << " differ at dim " << k
               << " at run time (only dim " << d << " may differ)";
    shape[d] += t->dim(d);
  }
  Tensor out;
  if (failed(allocTensor(op, out, dt, shape)))
    return failure();
  // Copy blocks: outer = prod(shape[:d]), each operand contributes
  // t.dim(d) * inner contiguous elements per outer index.
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k)
    outer *= shape[k];
  for (int64_t k = d + 1; k < rank; ++k)
    inner *= shape[k];
  size_t es = dtypeSize(dt);
  uint8_t *dst = static_cast<uint8_t *>(out.mutableData());
  int64_t rowOut = shape[d] * inner, colOff = 0;
  for (const Tensor *t : parts) {
    int64_t block = t->dim(d) * inner;
    const uint8_t *src = static_cast<const uint8_t *>(t->data());
    for (int64_t o = 0; o < outer && block; ++o)
      std::memcpy(dst + (o * rowOut + colOff) * es, src + o * block * es,
                  block * es);
    colOff += block;
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretStack(StackOp op, ArrayRef<Tensor> operands,
                             SmallVectorImpl<Tensor> &results) {
  const Tensor &ref = operands[0];
  int64_t rank = ref.rank();
  for (const Tensor &t : operands)
    if (t.shape() != ref.shape())
      return op.emitError() << "stacked tensors have shapes "
                            << shapeStr(ref.shape()) << " and "
                            << shapeStr(t.shape())
                            << " at run time (they must be equal)";
  int64_t d = (int64_t)op.getDim();
  if (d < 0)
    d += rank + 1;
  SmallVector<int64_t> shape(ref.shape());
  int64_t n = operands.size();
  shape.insert(shape.begin() + d, n);
  DType dt = resultDType(op);
  Tensor out;
  if (failed(allocTensor(op, out, dt, shape)))
    return failure();
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k)
    outer *= ref.dim(k);
  for (int64_t k = d; k < rank; ++k)
    inner *= ref.dim(k);
  size_t es = dtypeSize(dt);
  uint8_t *dst = static_cast<uint8_t *>(out.mutableData());
  for (int64_t j = 0; j < n && inner; ++j) {
    const uint8_t *src = static_cast<const uint8_t *>(operands[j].data());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + ((o * n + j) * inner) * es, src + o * inner * es,
                  inner * es);
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretGather(GatherOp op, ArrayRef<Tensor> operands,
                              SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0], &index = operands[1];
  int64_t rank = in.rank();
  int64_t d = kt::wrapDim((int64_t)op.getDim(), rank);
  DType dt = resultDType(op);
  Tensor out;
  if (failed(allocTensor(op, out, dt, index.shape())))
    return failure();
  if (index.numel() == 0) {
    results.push_back(std::move(out));
    return success();
  }
  // Treat rank 0 as rank 1 of size 1 (PyTorch's ensure_nonempty_dim).
  SmallVector<int64_t> inShape(in.shape()), idxShape(index.shape());
  if (inShape.empty())
    inShape.push_back(1);
  if (idxShape.empty())
    idxShape.push_back(1);
  int64_t r = inShape.size();
  for (int64_t k = 0; k < r; ++k)
    if (k != d && idxShape[k] > inShape[k])
      return op.emitError() << "index size " << idxShape[k] << " at dim " << k
                            << " exceeds self size " << inShape[k]
                            << " at run time (index " << shapeStr(index.shape())
                            << ", self " << shapeStr(in.shape()) << ")";
  SmallVector<int64_t> inStrides = contiguousStrides(inShape);
  SmallVector<int64_t> idx;
  int64_t size = inShape[d];
  for (int64_t o = 0, e = index.numel(); o < e; ++o) {
    delinearize(o, idxShape, idx);
    int64_t v = index.getI(o);
    if (v < 0 || v >= size)
      return op.emitError() << "index " << v << " is out of bounds for dim "
                            << d << " with size " << size;
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k)
      off += (k == d ? v : idx[k]) * inStrides[k];
    copyElem(out, o, in, off);
  }
  results.push_back(std::move(out));
  return success();
}

/// The start value of a position `kt.scatter` reduces into when
/// `include_self` is false (PyTorch's init_val of scatter_reduce).
double scatterIdentityF(ScatterReduce r) {
  switch (r) {
  case ScatterReduce::prod:
    return 1.0;
  case ScatterReduce::amax:
    return -std::numeric_limits<double>::infinity();
  case ScatterReduce::amin:
    return std::numeric_limits<double>::infinity();
  default:
    return 0.0;
  }
}
int64_t scatterIdentityI(ScatterReduce r, DType dt) {
  int64_t lo = intDTypeMin(dt), hi = intDTypeMax(dt);
  switch (r) {
  case ScatterReduce::prod:
    return 1;
  case ScatterReduce::amax:
    return lo;
  case ScatterReduce::amin:
    return hi;
  default:
    return 0;
  }
}

/// kt.scatter: PyTorch's CPU scatter/scatter_reduce, positions of `index`
/// visited in row-major order, each combination rounded to the element type.
LogicalResult interpretScatter(ScatterOp op, ArrayRef<Tensor> operands,
                               SmallVectorImpl<Tensor> &results) {
  const Tensor &self = operands[0], &index = operands[1], &src = operands[2];
  DType dt = self.dtype();
  Tensor out;
  if (failed(allocTensor(op, out, dt, self.shape())))
    return failure();
  if (self.byteSize())
    std::memcpy(out.mutableData(), self.data(), self.byteSize());
  if (index.numel() == 0) {
    results.push_back(std::move(out));
    return success();
  }
  // Treat rank 0 as rank 1 of size 1 (PyTorch's ensure_nonempty_dim).
  auto atLeast1 = [](ArrayRef<int64_t> sh) {
    SmallVector<int64_t> v(sh);
    if (v.empty())
      v.push_back(1);
    return v;
  };
  SmallVector<int64_t> inShape = atLeast1(self.shape()),
                       idxShape = atLeast1(index.shape()),
                       srcShape = atLeast1(src.shape());
  int64_t r = inShape.size();
  int64_t d = kt::wrapDim((int64_t)op.getDim(), r);
  for (int64_t k = 0; k < r; ++k) {
    if (idxShape[k] > srcShape[k])
      return op.emitError() << "index size " << idxShape[k] << " at dim " << k
                            << " exceeds src size " << srcShape[k]
                            << " at run time (index " << shapeStr(index.shape())
                            << ", src " << shapeStr(src.shape()) << ")";
    if (k != d && idxShape[k] > inShape[k])
      return op.emitError() << "index size " << idxShape[k] << " at dim " << k
                            << " exceeds self size " << inShape[k]
                            << " at run time (index " << shapeStr(index.shape())
                            << ", self " << shapeStr(self.shape()) << ")";
  }
  SmallVector<int64_t> inStrides = contiguousStrides(inShape),
                       srcStrides = contiguousStrides(srcShape);
  int64_t size = inShape[d], n = index.numel();
  // Target offset in self and source offset in src of each index position.
  SmallVector<int64_t> target(n), from(n), idx;
  for (int64_t o = 0; o < n; ++o) {
    delinearize(o, idxShape, idx);
    int64_t v = index.getI(o);
    if (v < 0 || v >= size)
      return op.emitError() << "index " << v << " is out of bounds for dim "
                            << d << " with size " << size;
    int64_t t = 0, f = 0;
    for (int64_t k = 0; k < r; ++k) {
      t += (k == d ? v : idx[k]) * inStrides[k];
      f += idx[k] * srcStrides[k];
    }
    target[o] = t;
    from[o] = f;
  }
  ScatterReduce red = op.getReduce();
  if (red == ScatterReduce::none) {
    for (int64_t o = 0; o < n; ++o)
      copyElem(out, target[o], src, from[o]);
    results.push_back(std::move(out));
    return success();
  }
  bool isF = out.isFloat();
  if (!op.getIncludeSelf()) {
    for (int64_t o = 0; o < n; ++o) {
      if (isF)
        out.setF(target[o], scatterIdentityF(red));
      else
        out.setI(target[o], scatterIdentityI(red, dt));
    }
  }
  std::vector<int64_t> count;
  if (red == ScatterReduce::mean)
    count.assign(out.numel(), op.getIncludeSelf() ? 1 : 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t t = target[o], f = from[o];
    if (isF) {
      double a = out.getF(t), b = src.getF(f), c;
      switch (red) {
      case ScatterReduce::prod:
        c = a * b;
        break;
      case ScatterReduce::amax:
        c = std::isnan(b) ? b : (a < b ? b : a);
        break;
      case ScatterReduce::amin:
        c = std::isnan(b) ? b : (b < a ? b : a);
        break;
      default: // sum, mean
        c = a + b;
      }
      out.setF(t, c);
    } else {
      uint64_t a = (uint64_t)out.getI(t), b = (uint64_t)src.getI(f), c;
      switch (red) {
      case ScatterReduce::prod:
        c = a * b;
        break;
      case ScatterReduce::amax:
        c = (uint64_t)std::max((int64_t)a, (int64_t)b);
        break;
      case ScatterReduce::amin:
        c = (uint64_t)std::min((int64_t)a, (int64_t)b);
        break;
      default:
        c = a + b;
      }
      out.setI(t, (int64_t)c);
    }
    if (red == ScatterReduce::mean)
      ++count[t];
  }
  if (red == ScatterReduce::mean) {
    for (int64_t t = 0, e = out.numel(); t < e; ++t) {
      int64_t c = std::max<int64_t>(count[t], 1);
      if (isF) {
        out.setF(t, out.getF(t) / (double)c);
      } else {
        int64_t a = out.getI(t), q = a / c;
        if ((a % c != 0) && ((a < 0) != (c < 0)))
          --q;
        out.setI(t, q);
      }
    }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretIndexSelect(IndexSelectOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0], &index = operands[1];
  int64_t rank = in.rank();
  int64_t d = kt::wrapDim((int64_t)op.getDim(), rank);
  int64_t n = index.numel();
  SmallVector<int64_t> inShape(in.shape());
  if (inShape.empty())
    inShape.push_back(1);
  int64_t size = inShape[d];
  for (int64_t j = 0; j < n; ++j) {
    int64_t v = index.getI(j);
    if (v < 0 || v >= size)
      return op.emitError() << "index " << v << " is out of range for dim "
                            << d << " with size " << size;
  }
  DType dt = resultDType(op);
  if (rank == 0) {
    if (n != 1)
      return op.emitError() << "index has " << n
                            << " elements but self has rank 0 (expected 1)";
    Tensor out;
    if (failed(allocTensor(op, out, dt, ArrayRef<int64_t>())))
      return failure();
    copyElem(out, 0, in, 0);
    results.push_back(std::move(out));
    return success();
  }
  SmallVector<int64_t> shape(in.shape());
  shape[d] = n;
  Tensor out;
  if (failed(allocTensor(op, out, dt, shape)))
    return failure();
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k)
    outer *= shape[k];
  for (int64_t k = d + 1; k < rank; ++k)
    inner *= shape[k];
  size_t es = dtypeSize(dt);
  uint8_t *dst = static_cast<uint8_t *>(out.mutableData());
  const uint8_t *src = static_cast<const uint8_t *>(in.data());
  for (int64_t o = 0; o < outer && inner; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(dst + ((o * n + j) * inner) * es,
                  src + ((o * size + index.getI(j)) * inner) * es, inner * es);
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretPad(PadOp op, ArrayRef<Tensor> operands,
                           SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t rank = in.rank();
  SmallVector<int64_t> pad = getI64Array(op.getPadAttr());
  SmallVector<int64_t> lo(rank, 0), shape(in.shape());
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    int64_t k = rank - 1 - p;
    // Crops first, as the verifier checks for static dims (kt.pad).
    int64_t l = pad[2 * p], h = pad[2 * p + 1];
    int64_t crop = -std::min<int64_t>(l, 0) - std::min<int64_t>(h, 0);
    if (crop > shape[k])
      return op.emitError() << "dim " << k << " of size " << shape[k]
                            << " padded by (" << l << ", " << h << ") crops "
                            << crop << " elements, more than it holds at run "
                            << "time";
    lo[k] = l;
    shape[k] = shape[k] + l + h;
  }
  DType dt = resultDType(op);
  Tensor out;
  if (failed(allocTensor(op, out, dt, shape)))
    return failure();
  double value = op.getValue().convertToDouble();
  SmallVector<int64_t> inStrides = contiguousStrides(in.shape());
  SmallVector<int64_t> idx;
  for (int64_t o = 0, e = out.numel(); o < e; ++o) {
    delinearize(o, shape, idx);
    int64_t off = 0;
    bool inside = true;
    for (int64_t k = 0; k < rank && inside; ++k) {
      int64_t i = idx[k] - lo[k];
      inside = i >= 0 && i < in.dim(k);
      off += i * inStrides[k];
    }
    if (inside)
      copyElem(out, o, in, off);
    else
      out.setF(o, value);
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretFlip(FlipOp op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t rank = in.rank();
  StridedView view = StridedView::contiguous(in.shape());
  if (in.numel() > 0 && rank > 0) {
    for (int64_t d : getI64Array(op.getDimsAttr())) {
      d = kt::wrapDim(d, rank);
      view.offset += (in.dim(d) - 1) * view.strides[d];
      view.strides[d] = -view.strides[d];
    }
  }
  return stridedCopy(op, in, resultDType(op), view, results);
}

/// Appends the result of `op`: a copy of `self` (contiguous) with the
/// elements of `part` (a view of it) replaced by `src` (of shape
/// `part.shape`).
LogicalResult scatterCopy(Operation *op, const Tensor &self, const Tensor &src,
                          const StridedView &part,
                          SmallVectorImpl<Tensor> &results) {
  Tensor out;
  if (failed(allocTensor(op, out, self.dtype(), self.shape())))
    return failure();
  if (self.byteSize())
    std::memcpy(out.mutableData(), self.data(), self.byteSize());
  forEachStrided(part, [&](int64_t i, int64_t o) { copyElem(out, o, src, i); });
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretSliceScatter(SliceScatterOp op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results) {
  const Tensor &self = operands[0], &src = operands[1];
  int64_t d = kt::wrapDim((int64_t)op.getDim(), self.rank());
  StridedView part = StridedView::contiguous(self.shape()).sliced(
      d, dynamicSliceBounds(op, self.dim(d), operands.drop_front(2)),
      (int64_t)op.getStep());
  if (src.shape() != ArrayRef<int64_t>(part.shape))
    return op.emitError() << "src has shape " << shapeStr(src.shape())
                          << " but the slice of self has shape "
                          << shapeStr(part.shape) << " at run time";
  return scatterCopy(op, self, src, part, results);
}

LogicalResult interpretSelectScatter(SelectScatterOp op,
                                     ArrayRef<Tensor> operands,
                                     SmallVectorImpl<Tensor> &results) {
  const Tensor &self = operands[0], &src = operands[1];
  int64_t d = kt::wrapDim((int64_t)op.getDim(), self.rank());
  int64_t size = self.dim(d), index = (int64_t)op.getIndex();
  if (index < -size || index >= size)
    return op.emitError() << "index " << index << " is out of range for dim "
                          << d << " of size " << size << " at run time";
  if (index < 0)
    index += size;
  StridedView part = StridedView::contiguous(self.shape()).selected(d, index);
  if (src.shape() != ArrayRef<int64_t>(part.shape))
    return op.emitError() << "src has shape " << shapeStr(src.shape())
                          << " but the selection of self has shape "
                          << shapeStr(part.shape) << " at run time";
  return scatterCopy(op, self, src, part, results);
}

/// kt.check: `self` when every element of `cond` holds, else the op's
/// message at its location.
LogicalResult interpretCheck(CheckOp op, ArrayRef<Tensor> operands,
                             SmallVectorImpl<Tensor> &results) {
  const Tensor &cond = operands[1];
  for (int64_t i = 0, n = cond.numel(); i < n; ++i)
    if (!cond.getB(i))
      return op.emitError() << op.getMessage();
  results.push_back(operands[0]);
  return success();
}

} // namespace

void registerShapeKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<ReshapeOp, interpretReshape>(ctx);
    attachKernel<TransposeOp, interpretTranspose>(ctx);
    attachKernel<PermuteOp, interpretPermute>(ctx);
    attachKernel<ExpandOp, interpretExpand>(ctx);
    attachKernel<SqueezeOp, interpretSqueeze>(ctx);
    attachKernel<UnsqueezeOp, interpretUnsqueeze>(ctx);
    attachKernel<SliceOp, interpretSlice>(ctx);
    attachKernel<SelectOp, interpretSelect>(ctx);
    attachKernel<ConcatOp, interpretConcat>(ctx);
    attachKernel<StackOp, interpretStack>(ctx);
    attachKernel<GatherOp, interpretGather>(ctx);
    attachKernel<ScatterOp, interpretScatter>(ctx);
    attachKernel<IndexSelectOp, interpretIndexSelect>(ctx);
    attachKernel<PadOp, interpretPad>(ctx);
    attachKernel<FlipOp, interpretFlip>(ctx);
    attachKernel<SliceScatterOp, interpretSliceScatter>(ctx);
    attachKernel<SelectScatterOp, interpretSelectScatter>(ctx);
    attachKernel<CheckOp, interpretCheck>(ctx);
  });
}

} // namespace kiln::interp
