//===- VJPUtils.cpp - Helpers shared by vector-Jacobian rules -------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

Value autodiff::buildScalar(OpBuilder &b, Location loc, double value,
                            Type elementType) {
  return kt::KTBuilder(b, loc).scalar(value, elementType);
}

Value autodiff::buildFullLike(OpBuilder &b, Location loc, Value like,
                              double value) {
  auto t = cast<RankedTensorType>(like.getType());
  SmallVector<Value> dyn;
  SmallVector<int64_t> size;
  for (auto [i, d] : llvm::enumerate(t.getShape())) {
    if (ShapedType::isDynamic(d)) {
      dyn.push_back(tensor::DimOp::create(b, loc, like, i));
      size.push_back(-1);
    } else {
      size.push_back(d);
    }
  }
  return kt::FullOp::create(b, loc, dyn, b.getI64ArrayAttr(size),
                            b.getF64FloatAttr(value),
                            TypeAttr::get(t.getElementType()))
      .getResult();
}

Value autodiff::unbroadcast(OpBuilder &b, Location loc, Value grad,
                            Type targetType) {
  auto gt = cast<RankedTensorType>(grad.getType());
  auto tt = cast<RankedTensorType>(targetType);
  int64_t gr = gt.getRank(), tr = tt.getRank();
  GradEmitter e(b, loc);
  Value g = grad;
  // Leading dims the target lacks.
  if (gr > tr) {
    SmallVector<int64_t> lead;
    for (int64_t i = 0; i < gr - tr; ++i)
      lead.push_back(i);
    g = e.sum(g, lead, /*keepdim=*/false);
  }
  // Dims where the target has 1 and the gradient does not (statically).
  SmallVector<int64_t> ones;
  ArrayRef<int64_t> gs = GradEmitter::shapeOf(g);
  for (int64_t i = 0; i < tr; ++i)
    if (tt.getDimSize(i) == 1 && gs[i] != 1)
      ones.push_back(i);
  if (!ones.empty())
    g = e.sum(g, ones, /*keepdim=*/true);
  return g;
}

bool autodiff::isFloatValue(Value v) {
  auto t = dyn_cast<ShapedType>(v.getType());
  return t && kt::isKTFloat(t.getElementType());
}

SmallVector<int64_t> autodiff::reductionDims(std::optional<ArrayAttr> dim,
                                             int64_t rank) {
  SmallVector<int64_t> dims;
  if (!dim || dim->empty()) {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
    return dims;
  }
  for (int64_t d : kt::getI64Array(*dim))
    dims.push_back(d < 0 ? d + std::max<int64_t>(rank, 1) : d);
  llvm::sort(dims);
  if (rank == 0)
    dims.clear();
  return dims;
}

int64_t autodiff::countAt(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(shape[d]))
      return -1;
    n *= shape[d];
  }
  return n;
}

Value GradEmitter::padDim(Value x, int64_t dim, int64_t lo, int64_t hi) {
  if (lo == 0 && hi == 0)
    return x;
  int64_t r = rankOf(x);
  if (lo <= 0 && hi <= 0) {
    // A crop is a view (kt.slice; `end` counts from the end, so `?` dims
    // need no size): as a kt.pad it was a kernel that copied the tensor
    // (two per strided convolution's weight gradient, issue 13).
    SmallVector<NamedAttribute> attrs = {
        attr("dim", b.getI64IntegerAttr(dim)),
        attr("start", b.getI64IntegerAttr(-lo)),
        attr("step", b.getI64IntegerAttr(1))};
    if (hi < 0)
      attrs.push_back(attr("end", b.getI64IntegerAttr(hi)));
    return op<kt::SliceOp>({x}, attrs);
  }
  // kt.pad lists pairs from the last dim.
  SmallVector<int64_t> pads(2 * (r - dim), 0);
  pads[2 * (r - 1 - dim)] = lo;
  pads[2 * (r - 1 - dim) + 1] = hi;
  return pad(x, pads);
}

Value GradEmitter::unsqueezeDims(Value x, ArrayRef<int64_t> dims) {
  for (int64_t d : dims) // sorted ascending: positions in the result
    x = unsqueeze(x, d);
  return x;
}

Value GradEmitter::expandLike(Value x, Value like) {
  auto t = mlir::cast<RankedTensorType>(like.getType());
  if (t.hasStaticShape())
    return op<kt::ExpandOp>({x}, {attr("size", i64s(t.getShape()))});
  return mul(x, onesLike(like));
}

Value GradEmitter::oneHot(Value index, int64_t n, Type elemTy) {
  Value ar = arange(n, elementTypeOf(index));
  return cast(eq(unsqueeze(index, -1), ar), elemTy);
}
