//===- RefKernels.cpp - Interpreter kernels of ref ops ---------------------===//
//
// Part of Kiln. A ref is a view over shared storage (Tensor::isRef): the
// storage buffer, an element offset and per-dim strides. Views compute a new
// layout over the same storage (as PyTorch's as_strided views do); loads copy
// out; stores and in-place ops write through the layout, so every alias sees
// the write. A write to a view in which several positions share one element
// (an expanded view: stride 0 on a dim of size > 1) is a runtime error, as
// PyTorch's in-place ops on expanded tensors are.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include <cmath>
#include <cstring>
#include <string>

using namespace mlir;
using namespace kiln::kt;

namespace kiln::interp {
namespace {

/// Calls `fn(linear, storageIndex, srcOffset)` for every element of the view
/// `ref` in row-major order; `srcOffset` is the offset into a contiguous
/// tensor of shape `srcShape` broadcast to the view's shape.
template <typename Fn>
void forEachRefElement(const Tensor &ref, ArrayRef<int64_t> srcShape, Fn &&fn) {
  SmallVector<SmallVector<int64_t>> strides;
  strides.emplace_back(ref.refStrides());
  strides.push_back(broadcastStrides(srcShape, ref.shape()));
  int64_t base = ref.refOffset();
  forEachBroadcast(ref.shape(), strides,
                   [&](int64_t linear, ArrayRef<int64_t> offs) {
                     fn(linear, base + offs[0], offs[1]);
                   });
}

/// Fails when several positions of the view `ref` share one storage element
/// (PyTorch: "unsupported operation: more than one element of the written-to
/// tensor refers to a single memory location").
LogicalResult checkWritable(Operation *op, const Tensor &ref) {
  // An empty view has no two positions (a [2, 0] ref's dim 0 has stride 0).
  if (ref.numel() == 0)
    return success();
  for (int64_t d = 0; d < ref.rank(); ++d)
    if (ref.dim(d) > 1 && ref.refStrides()[d] == 0)
      return op->emitError()
             << "unsupported operation: more than one element of the "
                "written-to ref refers to a single memory location (dim "
             << d << " of an expanded view); write to a kt.alloc_ref copy "
             << "instead";
  return success();
}

/// Fails unless `src` broadcasts to the runtime shape of the view `ref`
/// without changing it.
LogicalResult checkBroadcastsTo(Operation *op, ArrayRef<int64_t> src,
                                const Tensor &ref, StringRef what) {
  int64_t sr = src.size(), dr = ref.rank();
  bool ok = sr <= dr;
  for (int64_t i = 0; ok && i < sr; ++i) {
    int64_t s = src[sr - 1 - i], d = ref.dim(dr - 1 - i);
    ok = s == 1 || s == d;
  }
  if (!ok)
    return op->emitError() << what << " of shape " << shapeStr(src)
                           << " does not broadcast to the destination shape "
                           << shapeStr(ref.shape()) << " at run time";
  return success();
}

/// Copies the element at linear index `i` of contiguous `src` to storage
/// index `s` of `ref` (same dtype).
void copyTo(Tensor &ref, int64_t s, const Tensor &src, int64_t i) {
  size_t es = dtypeSize(ref.dtype());
  std::memcpy(static_cast<uint8_t *>(ref.mutableData()) + s * es,
              static_cast<const uint8_t *>(src.data()) + i * es, es);
}

/// Writes contiguous `src` (broadcast to the view's shape) into `ref`.
LogicalResult writeBroadcast(Operation *op, Tensor ref, const Tensor &src,
                             StringRef what) {
  if (failed(checkBroadcastsTo(op, src.shape(), ref, what)) ||
      failed(checkWritable(op, ref)))
    return failure();
  forEachRefElement(ref, src.shape(), [&](int64_t, int64_t s, int64_t o) {
    copyTo(ref, s, src, o);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// load / store / alloc_ref
//===----------------------------------------------------------------------===//

LogicalResult interpretLoad(LoadOp op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
  Tensor out;
  if (failed(takeTensor(op, operands[0].loadRef(), out)))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult interpretStore(StoreOp op, ArrayRef<Tensor> operands,
                             SmallVectorImpl<Tensor> &results) {
  const Tensor &value = operands[0];
  if (value.shape() != operands[1].shape())
    return op.emitError() << "value of shape " << shapeStr(value.shape())
                          << " stored into a ref of shape "
                          << shapeStr(operands[1].shape()) << " at run time";
  return writeBroadcast(op, operands[1], value, "value");
}

LogicalResult interpretAllocRef(AllocRefOp op, ArrayRef<Tensor> operands,
                                SmallVectorImpl<Tensor> &results) {
  const Tensor &v = operands[0];
  Tensor copy;
  if (failed(allocTensor(op, copy, v.dtype(), v.shape())))
    return failure();
  if (v.byteSize())
    std::memcpy(copy.mutableData(), v.data(), v.byteSize());
  results.push_back(Tensor::makeRef(copy));
  return success();
}

//===----------------------------------------------------------------------===//
// Views: a new layout over the same storage
//===----------------------------------------------------------------------===//

/// PyTorch's computeStride: strides that view (shape, strides) as `newShape`
/// without copying, or nothing when the layout does not allow it.
std::optional<SmallVector<int64_t>> viewStrides(ArrayRef<int64_t> shape,
                                                ArrayRef<int64_t> strides,
                                                ArrayRef<int64_t> newShape) {
  SmallVector<int64_t> out(newShape.size(), 0);
  if (shape.empty() || numElements(shape) == 0) {
    if (shape == newShape)
      return SmallVector<int64_t>(strides);
    return contiguousStrides(newShape);
  }
  int64_t viewD = (int64_t)newShape.size() - 1;
  int64_t chunkBase = strides.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    tensorNumel *= shape[d];
    if (d == 0 ||
        (shape[d - 1] != 1 && strides[d - 1] != tensorNumel * chunkBase)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        out[viewD] = viewNumel * chunkBase;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBase = strides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return out;
}

LogicalResult interpretViewReshape(ViewReshapeOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  FailureOr<SmallVector<int64_t>> target = substituteSizes(
      op, getI64Array(op.getShapeAttr()), operands.drop_front());
  if (failed(target))
    return failure();
  FailureOr<SmallVector<int64_t>> shapeOr =
      reshapeSizes(op, in.shape(), *target, "view a ref", "as");
  if (failed(shapeOr))
    return failure();
  SmallVector<int64_t> shape = *shapeOr;
  std::optional<SmallVector<int64_t>> strides =
      viewStrides(in.shape(), in.refStrides(), shape);
  if (!strides)
    return op.emitError()
           << "view size " << shapeStr(shape)
           << " is not compatible with the ref's size " << shapeStr(in.shape())
           << " and stride " << shapeStr(in.refStrides())
           << " (at least one dimension spans across two contiguous "
              "subspaces); load it and use kt.reshape instead";
  results.push_back(in.refView(shape, in.refOffset(), *strides));
  return success();
}

/// The ref over `in`'s storage with layout `view`.
Tensor refView(const Tensor &in, const StridedView &view) {
  return in.refView(view.shape, view.offset, view.strides);
}

Tensor permuted(const Tensor &in, ArrayRef<int64_t> perm) {
  return refView(in, StridedView::ofRef(in).permuted(perm));
}

LogicalResult interpretViewTranspose(ViewTransposeOp op,
                                     ArrayRef<Tensor> operands,
                                     SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t rank = in.rank();
  if (rank == 0) {
    results.push_back(in);
    return success();
  }
  results.push_back(permuted(
      in, transposePerm(rank, (int64_t)op.getDim0(), (int64_t)op.getDim1())));
  return success();
}

LogicalResult interpretViewPermute(ViewPermuteOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  results.push_back(
      permuted(in, wrapDims(getI64Array(op.getDimsAttr()), in.rank())));
  return success();
}

LogicalResult interpretViewSlice(ViewSliceOp op, ArrayRef<Tensor> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t d = kt::wrapDim((int64_t)op.getDim(), in.rank());
  SliceBounds bounds = sliceBoundsOf(op, in.dim(d));
  results.push_back(refView(
      in, StridedView::ofRef(in).sliced(d, bounds, (int64_t)op.getStep())));
  return success();
}

LogicalResult interpretViewSelect(ViewSelectOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t d = kt::wrapDim((int64_t)op.getDim(), in.rank());
  int64_t size = in.dim(d), index = (int64_t)op.getIndex();
  if (index < -size || index >= size)
    return op.emitError() << "index " << index << " is out of range for dim "
                          << d << " of size " << size << " at run time";
  if (index < 0)
    index += size;
  results.push_back(refView(in, StridedView::ofRef(in).selected(d, index)));
  return success();
}

LogicalResult interpretViewExpand(ViewExpandOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  FailureOr<StridedView> view =
      StridedView::ofRef(in).expanded(op, getI64Array(op.getSizeAttr()));
  if (failed(view))
    return failure();
  results.push_back(refView(in, *view));
  return success();
}

LogicalResult interpretViewSqueeze(ViewSqueezeOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  auto inT = cast<RefType>(op.getSelf().getType());
  FailureOr<StridedView> view = StridedView::ofRef(in).squeezed(
      op, op.getDimAttr(), inT.getShape(), "kt.view_reshape");
  if (failed(view))
    return failure();
  results.push_back(refView(in, *view));
  return success();
}

LogicalResult interpretViewUnsqueeze(ViewUnsqueezeOp op,
                                     ArrayRef<Tensor> operands,
                                     SmallVectorImpl<Tensor> &results) {
  const Tensor &in = operands[0];
  int64_t d = (int64_t)op.getDim();
  if (d < 0)
    d += in.rank() + 1;
  SmallVector<int64_t> shape(in.shape()), strides(in.refStrides());
  // PyTorch: the new dim's stride is size*stride of the dim after it (1 at
  // the end); any value works for a size-1 dim.
  int64_t st = d < in.rank() ? shape[d] * strides[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  results.push_back(in.refView(shape, in.refOffset(), strides));
  return success();
}

//===----------------------------------------------------------------------===//
// In-place ops
//===----------------------------------------------------------------------===//

/// Wrapping int64 arithmetic (PyTorch integers wrap on overflow).
int64_t wrapAdd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
int64_t wrapSub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
int64_t wrapMul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/// self = f(self, other) elementwise, `other` broadcast to self's shape.
/// `ff` computes floats in double; `fi` integers in int64 (returns nullopt
/// for an integer division by zero).
template <typename FF, typename FI>
LogicalResult binaryInPlace(Operation *op, Tensor self, const Tensor &other,
                            FF ff, FI fi) {
  if (failed(checkBroadcastsTo(op, other.shape(), self, "other")) ||
      failed(checkWritable(op, self)))
    return failure();
  bool isFloat = self.isFloat();
  bool divByZero = false;
  forEachRefElement(self, other.shape(), [&](int64_t, int64_t s, int64_t o) {
    if (isFloat) {
      self.setF(s, ff(self.getF(s), other.getF(o)));
      return;
    }
    std::optional<int64_t> r = fi(self.getI(s), other.getI(o));
    if (!r) {
      divByZero = true;
      return;
    }
    self.setI(s, *r);
  });
  if (divByZero)
    return op->emitError("integer division by zero");
  return success();
}

LogicalResult interpretAddInPlace(AddInPlaceOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &) {
  return binaryInPlace(
      op, operands[0], operands[1], [](double a, double b) { return a + b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> { return wrapAdd(a, b); });
}

LogicalResult interpretSubInPlace(SubInPlaceOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &) {
  return binaryInPlace(
      op, operands[0], operands[1], [](double a, double b) { return a - b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> { return wrapSub(a, b); });
}

LogicalResult interpretMulInPlace(MulInPlaceOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &) {
  return binaryInPlace(
      op, operands[0], operands[1], [](double a, double b) { return a * b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> { return wrapMul(a, b); });
}

/// PyTorch's div_floor_floating (computed in double).
double floorDivF(double a, double b) {
  if (b == 0)
    return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0)))
    div -= 1.0;
  if (div == 0)
    return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  if (div - fl > 0.5)
    fl += 1.0;
  return fl;
}

LogicalResult interpretDivInPlace(DivInPlaceOp op, ArrayRef<Tensor> operands,
                                  SmallVectorImpl<Tensor> &) {
  std::optional<RoundingMode> mode = op.getRoundingMode();
  return binaryInPlace(
      op, operands[0], operands[1],
      [&](double a, double b) {
        if (!mode)
          return a / b;
        if (*mode == RoundingMode::trunc)
          return std::trunc(a / b);
        return floorDivF(a, b);
      },
      [&](int64_t a, int64_t b) -> std::optional<int64_t> {
        if (b == 0)
          return std::nullopt;
        if (b == -1) // INT64_MIN / -1 wraps, as in PyTorch.
          return wrapSub(0, a);
        int64_t q = a / b;
        if (*mode == RoundingMode::floor && (a % b != 0) && ((a < 0) != (b < 0)))
          --q;
        return q;
      });
}

LogicalResult interpretCopyInPlace(CopyInPlaceOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &) {
  return writeBroadcast(op, operands[0], operands[1], "src");
}

LogicalResult interpretZeroInPlace(ZeroInPlaceOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &) {
  return writeBroadcast(op, operands[0], Tensor::scalar(operands[0].dtype(), 0),
                        "zero");
}

LogicalResult interpretFillInPlace(FillInPlaceOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &) {
  return writeBroadcast(op, operands[0], operands[1], "value");
}

LogicalResult interpretReluInPlace(ReluInPlaceOp op, ArrayRef<Tensor> operands,
                                   SmallVectorImpl<Tensor> &) {
  Tensor self = operands[0];
  if (failed(checkWritable(op, self)))
    return failure();
  bool isFloat = self.isFloat();
  forEachRefElement(self, {}, [&](int64_t, int64_t s, int64_t) {
    if (isFloat) {
      double x = self.getF(s);
      if (x < 0)
        self.setF(s, 0.0);
    } else if (self.getI(s) < 0) {
      self.setI(s, 0);
    }
  });
  return success();
}

LogicalResult interpretIndexPutInPlace(IndexPutInPlaceOp op,
                                       ArrayRef<Tensor> operands,
                                       SmallVectorImpl<Tensor> &) {
  Tensor self = operands[0];
  ArrayRef<Tensor> indices = operands.slice(1, operands.size() - 2);
  const Tensor &values = operands.back();
  if (failed(checkWritable(op, self)))
    return failure();
  FailureOr<SmallVector<int64_t>> b = broadcastRuntimeShapes(op, indices);
  if (failed(b))
    return failure();
  int64_t k = indices.size(), rank = self.rank();
  // The written block: B ++ self.shape[k:].
  SmallVector<int64_t> block(*b);
  llvm::append_range(block, self.shape().drop_front(k));
  int64_t vr = values.rank(), br = block.size();
  bool ok = vr <= br;
  for (int64_t i = 0; ok && i < vr; ++i) {
    int64_t s = values.dim(vr - 1 - i), d = block[br - 1 - i];
    ok = s == 1 || s == d;
  }
  if (!ok)
    return op.emitError() << "values of shape " << shapeStr(values.shape())
                          << " do not broadcast to the indexed shape "
                          << shapeStr(block) << " at run time";
  SmallVector<SmallVector<int64_t>> idxStrides;
  for (const Tensor &t : indices)
    idxStrides.push_back(broadcastStrides(t.shape(), *b));
  SmallVector<int64_t> valStrides = broadcastStrides(values.shape(), block);
  int64_t nb = numElements(*b);
  int64_t inner = numElements(self.shape().drop_front(k));
  ArrayRef<int64_t> st = self.refStrides();
  SmallVector<int64_t> bIdx, innerIdx;
  bool accumulate = op.getAccumulate(), isFloat = self.isFloat();
  for (int64_t p = 0; p < nb; ++p) {
    delinearize(p, *b, bIdx);
    int64_t base = self.refOffset();
    for (int64_t j = 0; j < k; ++j) {
      int64_t off = 0;
      for (size_t q = 0; q < bIdx.size(); ++q)
        off += bIdx[q] * idxStrides[j][q];
      int64_t v = indices[j].getI(off), size = self.dim(j);
      if (v < -size || v >= size)
        return op.emitError() << "index " << v << " is out of bounds for dim "
                              << j << " with size " << size;
      if (v < 0)
        v += size;
      base += v * st[j];
    }
    for (int64_t q = 0; q < inner; ++q) {
      delinearize(q, self.shape().drop_front(k), innerIdx);
      int64_t s = base, vo = 0;
      for (size_t r = 0; r < innerIdx.size(); ++r)
        s += innerIdx[r] * st[k + r];
      for (size_t r = 0; r < bIdx.size(); ++r)
        vo += bIdx[r] * valStrides[r];
      for (size_t r = 0; r < innerIdx.size(); ++r)
        vo += innerIdx[r] * valStrides[bIdx.size() + r];
      if (!accumulate)
        copyTo(self, s, values, vo);
      else if (isFloat)
        self.setF(s, self.getF(s) + values.getF(vo));
      else
        self.setI(s, wrapAdd(self.getI(s), values.getI(vo)));
    }
  }
  (void)rank;
  return success();
}

} // namespace

void registerRefKernels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KTDialect *) {
    attachKernel<LoadOp, interpretLoad>(ctx);
    attachKernel<StoreOp, interpretStore>(ctx);
    attachKernel<AllocRefOp, interpretAllocRef>(ctx);
    attachKernel<ViewReshapeOp, interpretViewReshape>(ctx);
    attachKernel<ViewTransposeOp, interpretViewTranspose>(ctx);
    attachKernel<ViewPermuteOp, interpretViewPermute>(ctx);
    attachKernel<ViewSliceOp, interpretViewSlice>(ctx);
    attachKernel<ViewSelectOp, interpretViewSelect>(ctx);
    attachKernel<ViewExpandOp, interpretViewExpand>(ctx);
    attachKernel<ViewSqueezeOp, interpretViewSqueeze>(ctx);
    attachKernel<ViewUnsqueezeOp, interpretViewUnsqueeze>(ctx);
    attachKernel<AddInPlaceOp, interpretAddInPlace>(ctx);
    attachKernel<SubInPlaceOp, interpretSubInPlace>(ctx);
    attachKernel<MulInPlaceOp, interpretMulInPlace>(ctx);
    attachKernel<DivInPlaceOp, interpretDivInPlace>(ctx);
    attachKernel<CopyInPlaceOp, interpretCopyInPlace>(ctx);
    attachKernel<ZeroInPlaceOp, interpretZeroInPlace>(ctx);
    attachKernel<FillInPlaceOp, interpretFillInPlace>(ctx);
    attachKernel<ReluInPlaceOp, interpretReluInPlace>(ctx);
    attachKernel<IndexPutInPlaceOp, interpretIndexPutInPlace>(ctx);
  });
}

} // namespace kiln::interp
