//===- KernelUtils.cpp - Helpers for interpreter kernels ------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

namespace kiln::interp {

Type resultElementType(Operation *op, unsigned i) {
  Type t = op->getResult(i).getType();
  if (auto st = dyn_cast<ShapedType>(t))
    return st.getElementType();
  return t;
}

DType resultDType(Operation *op, unsigned i) {
  std::optional<DType> dt = dtypeFromType(resultElementType(op, i));
  assert(dt && "result type has no interpreter dtype");
  return *dt;
}

FailureOr<SmallVector<int64_t>>
broadcastRuntimeShapes(Operation *op, ArrayRef<Tensor> inputs) {
  size_t rank = 0;
  for (const Tensor &t : inputs)
    rank = std::max<size_t>(rank, t.rank());
  SmallVector<int64_t> out(rank, 1);
  for (auto [k, t] : llvm::enumerate(inputs)) {
    size_t off = rank - t.rank();
    for (int64_t j = 0; j < t.rank(); ++j) {
      int64_t d = t.dim(j);
      int64_t &r = out[off + j];
      if (d == r || d == 1)
        continue;
      if (r == 1) {
        r = d;
        continue;
      }
      return op->emitError("operands are not broadcast-compatible at run "
                           "time: dim ")
             << off + j << " is " << r << " vs " << d << " (operand #" << k
             << ")";
    }
  }
  return out;
}

SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> inShape,
                                      ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> strides(outShape.size(), 0);
  SmallVector<int64_t> inStrides = contiguousStrides(inShape);
  size_t off = outShape.size() - inShape.size();
  for (size_t j = 0; j < inShape.size(); ++j)
    strides[off + j] = inShape[j] == 1 ? 0 : inStrides[j];
  return strides;
}

LogicalResult takeTensor(Operation *op, llvm::Expected<Tensor> t, Tensor &out,
                         std::optional<unsigned> result) {
  if (!t) {
    std::string what = result ? "result #" + std::to_string(*result)
                              : std::string("a temporary");
    return op->emitError() << what << ": " << llvm::toString(t.takeError());
  }
  out = std::move(*t);
  return success();
}

LogicalResult allocTensor(Operation *op, Tensor &out, DType dt,
                          ArrayRef<int64_t> shape,
                          std::optional<unsigned> result) {
  return takeTensor(op, Tensor::create(dt, shape), out, result);
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += std::to_string(d);
  }
  return s + "]";
}

SliceBounds sliceBounds(int64_t size, std::optional<int64_t> start,
                        std::optional<int64_t> end, int64_t step) {
  int64_t s = start ? *start : 0;
  int64_t e = end ? *end : size;
  if (s < 0)
    s += size;
  if (e < 0)
    e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  return {s, e == s ? 0 : (e - s - 1) / step + 1};
}

StridedView StridedView::contiguous(ArrayRef<int64_t> shape) {
  return {SmallVector<int64_t>(shape), contiguousStrides(shape), 0};
}

StridedView StridedView::ofRef(const Tensor &ref) {
  return {SmallVector<int64_t>(ref.shape()),
          SmallVector<int64_t>(ref.refStrides()), ref.refOffset()};
}

StridedView StridedView::permuted(ArrayRef<int64_t> perm) const {
  StridedView v{{}, {}, offset};
  for (int64_t p : perm) {
    v.shape.push_back(shape[p]);
    v.strides.push_back(strides[p]);
  }
  return v;
}

StridedView StridedView::sliced(int64_t d, SliceBounds b, int64_t step) const {
  StridedView v = *this;
  v.offset += b.start * strides[d];
  v.shape[d] = b.length;
  v.strides[d] *= step;
  return v;
}

StridedView StridedView::selected(int64_t d, int64_t index) const {
  StridedView v = *this;
  v.offset += index * strides[d];
  v.shape.erase(v.shape.begin() + d);
  v.strides.erase(v.strides.begin() + d);
  return v;
}

FailureOr<StridedView> StridedView::expanded(Operation *op,
                                             ArrayRef<int64_t> size) const {
  int64_t lead = size.size() - shape.size();
  StridedView v{{}, {}, offset};
  for (auto [i, s] : llvm::enumerate(size)) {
    if ((int64_t)i < lead) {
      v.shape.push_back(s);
      v.strides.push_back(0);
      continue;
    }
    int64_t k = i - lead, d = shape[k];
    if (s == -1 || s == d) {
      v.shape.push_back(d);
      v.strides.push_back(strides[k]);
      continue;
    }
    if (d != 1)
      return op->emitError() << "dim " << k << " of self has size " << d
                             << " at run time and cannot be expanded to " << s
                             << " (only size-1 dims expand)";
    v.shape.push_back(s);
    v.strides.push_back(0);
  }
  return v;
}

FailureOr<StridedView> StridedView::squeezed(Operation *op, ArrayAttr dimAttr,
                                             ArrayRef<int64_t> typeShape,
                                             StringRef reshapeOp) const {
  int64_t rank = shape.size();
  SmallVector<int64_t> dims;
  if (dimAttr) {
    for (int64_t d : kt::getI64Array(dimAttr))
      dims.push_back(kt::wrapDim(d, rank));
  } else {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
  }
  StridedView v{{}, {}, offset};
  for (int64_t i = 0; i < rank; ++i) {
    if (shape[i] == 1 && llvm::is_contained(dims, i)) {
      if (ShapedType::isDynamic(typeShape[i]))
        return op->emitError()
               << "dynamic dim " << i << " has size 1 at run time; "
               << op->getName().getStringRef()
               << " keeps `?` dims in its result type, so it cannot squeeze "
                  "it as PyTorch would (make the dim static or use "
               << reshapeOp << ")";
      continue;
    }
    v.shape.push_back(shape[i]);
    v.strides.push_back(strides[i]);
  }
  return v;
}

FailureOr<SmallVector<int64_t>> reshapeSizes(Operation *op,
                                             ArrayRef<int64_t> inShape,
                                             ArrayRef<int64_t> shapeIn,
                                             StringRef what, StringRef prep) {
  SmallVector<int64_t> shape(shapeIn);
  int64_t prod = 1, inferIdx = -1, n = numElements(inShape);
  for (auto [i, s] : llvm::enumerate(shape)) {
    if (s == -1)
      inferIdx = i;
    else
      prod *= s;
  }
  if (inferIdx >= 0) {
    if (prod == 0 || n % prod != 0)
      return op->emitError() << "cannot " << what << " of shape "
                             << shapeStr(inShape) << " (" << n
                             << " elements) " << prep << " shape "
                             << shapeStr(shape) << ": " << n
                             << " is not divisible by " << prod;
    shape[inferIdx] = n / prod;
  } else if (prod != n) {
    return op->emitError() << "cannot " << what << " of shape "
                           << shapeStr(inShape) << " (" << n << " elements) "
                           << prep << " shape " << shapeStr(shape);
  }
  return shape;
}

FailureOr<SmallVector<int64_t>> substituteSizes(Operation *op,
                                                ArrayRef<int64_t> shape,
                                                ArrayRef<Tensor> sizes) {
  SmallVector<int64_t> out(shape);
  size_t next = 0;
  for (auto [i, s] : llvm::enumerate(out)) {
    if (s != -2)
      continue;
    if (next >= sizes.size())
      return op->emitError("missing size operand for dim ") << i;
    s = sizes[next++].getI(0);
    if (s < 0)
      return op->emitError("size ")
             << s << " of dim " << i << " is negative at run time";
  }
  return out;
}

SmallVector<int64_t> transposePerm(int64_t rank, int64_t d0, int64_t d1) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[kt::wrapDim(d0, rank)], perm[kt::wrapDim(d1, rank)]);
  return perm;
}

SmallVector<int64_t> wrapDims(ArrayRef<int64_t> dims, int64_t rank) {
  SmallVector<int64_t> r;
  for (int64_t d : dims)
    r.push_back(kt::wrapDim(d, rank));
  return r;
}

void delinearize(int64_t linear, ArrayRef<int64_t> shape,
                 SmallVectorImpl<int64_t> &idx) {
  idx.assign(shape.size(), 0);
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] == 0)
      continue;
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
}

} // namespace kiln::interp
