//===- KernelUtils.cpp - Helpers for interpreter kernels ------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "llvm/Support/raw_ostream.h"

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
