//===- Shape.cpp - Vector-Jacobian rules of kt shape ops ------------------===//
//
// Part of Kiln. Views are undone on the gradient (reshape back, inverse
// permutation, unbroadcast for expand). Ops that read a part of their input
// put the gradient back in place with zero padding (slice, select, pad) or
// split it (concat, stack). gather and index_select scatter the gradient back
// through their index with kt.scatter (reduce = sum), which sums duplicate
// indices as index_add/scatter_add do. Index operands get no gradient.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

namespace {

using Grads = SmallVectorImpl<Value>;

LogicalResult needStatic(Operation *op, Value x, int64_t dim = -1) {
  auto t = cast<RankedTensorType>(x.getType());
  bool ok = dim < 0 ? t.hasStaticShape() : !t.isDynamicDim(dim);
  if (ok)
    return success();
  return op->emitError("no gradient for '")
         << op->getName() << "' with a dynamic input dim";
}

LogicalResult vjpReshape(kt::ReshapeOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  // Back to x's shape; one dynamic dim of x is the one size kt.reshape
  // infers (-1), several are sized by `tensor.dim` of x (-2 entries).
  grads[0] = e.reshapeLike(g, x);
  return success();
}

LogicalResult vjpTranspose(kt::TransposeOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  grads[0] = e.transpose(g, op.getDim0(), op.getDim1());
  return success();
}

LogicalResult vjpPermute(kt::PermuteOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  auto perm = kt::getI64Array(op.getDims());
  int64_t r = perm.size();
  SmallVector<int64_t> inv(r);
  for (int64_t i = 0; i < r; ++i)
    inv[kt::wrapDim(perm[i], r)] = i;
  grads[0] = e.permute(g, inv);
  return success();
}

LogicalResult vjpExpand(kt::ExpandOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  grads[0] = e.unbroadcastTo(g, op.getSelf().getType());
  return success();
}

LogicalResult vjpSqueeze(kt::SqueezeOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  auto shape = GradEmitter::shapeOf(x);
  int64_t r = shape.size();
  // The dims that were removed: size-1 dims (of `dim`, when given).
  SmallVector<int64_t> removed;
  if (auto dims = op.getDim()) {
    for (int64_t d : kt::getI64Array(*dims)) {
      d = r == 0 ? 0 : kt::wrapDim(d, r);
      if (r > 0 && shape[d] == 1)
        removed.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < r; ++d)
      if (shape[d] == 1)
        removed.push_back(d);
  }
  llvm::sort(removed);
  removed.erase(std::unique(removed.begin(), removed.end()), removed.end());
  grads[0] = e.unsqueezeDims(g, removed);
  return success();
}

LogicalResult vjpUnsqueeze(kt::UnsqueezeOp op, GradEmitter &e, Value g,
                           Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  int64_t d = kt::wrapDim(op.getDim(), GradEmitter::rankOf(op.getResult()));
  grads[0] = e.squeeze(g, {d});
  return success();
}

/// The inherent attributes of `op` (its properties) as a list.
SmallVector<NamedAttribute> inherentAttrs(Operation *op) {
  SmallVector<NamedAttribute> attrs;
  if (auto d = dyn_cast_or_null<DictionaryAttr>(
          op->getPropertiesAsAttribute()))
    llvm::append_range(attrs, d.getValue());
  return attrs;
}

LogicalResult vjpSlice(kt::SliceOp op, GradEmitter &e, Value g, Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  if (op.getDynamicStart() || op.getDynamicEnd()) {
    // Dynamic bounds (index operands): g scattered into zeros at the same
    // run-time window (kt.slice_scatter with the same bounds and
    // attributes); the pad below needs static bounds.
    SmallVector<Value> operands{e.zerosLike(x), g};
    llvm::append_range(operands, op.getBounds());
    grads[0] = e.op<kt::SliceScatterOp>(operands, inherentAttrs(op));
    return success();
  }
  int64_t r = GradEmitter::rankOf(x);
  int64_t dim = kt::wrapDim(op.getDim(), r);
  if (failed(needStatic(op, x, dim)))
    return failure();
  int64_t size = GradEmitter::shapeOf(x)[dim];
  auto clampIdx = [&](int64_t v) {
    if (v < 0)
      v += size;
    return std::min(std::max<int64_t>(v, 0), size);
  };
  int64_t start = op.getStart() ? clampIdx(*op.getStart()) : 0;
  int64_t end = op.getEnd() ? clampIdx(*op.getEnd()) : size;
  int64_t step = op.getStep();
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  if (len == 0)
    return success(); // an empty slice: zero gradient
  Value u = g;
  if (step > 1) {
    // Interleave step-1 zeros after each element: [.., L, ..] ->
    // [.., L, step, ..] -> [.., L*step, ..].
    if (failed(needStatic(op, g)))
      return failure();
    SmallVector<int64_t> merged(GradEmitter::shapeOf(g));
    merged[dim] = len * step;
    u = e.padDim(e.unsqueeze(g, dim + 1), dim + 1, 0, step - 1);
    u = e.reshape(u, merged);
  }
  grads[0] = e.padDim(u, dim, start, size - start - len * step);
  return success();
}

LogicalResult vjpSelect(kt::SelectOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  Value x = op.getSelf();
  if (!isFloatValue(x))
    return success();
  int64_t r = GradEmitter::rankOf(x);
  int64_t dim = kt::wrapDim(op.getDim(), r);
  if (failed(needStatic(op, x, dim)))
    return failure();
  int64_t size = GradEmitter::shapeOf(x)[dim];
  // I64Attr getters return uint64_t: read the index as signed.
  int64_t idx = static_cast<int64_t>(op.getIndex());
  if (idx < 0)
    idx += size;
  grads[0] = e.padDim(e.unsqueeze(g, dim), dim, idx, size - 1 - idx);
  return success();
}

// slice_scatter / select_scatter: self's gradient is g with the written
// positions zeroed; src's gradient is g at those positions (PyTorch's rules).
// (kt.slice_scatter's dynamic bounds, the operands after src, go to both.)
template <typename ScatterOp, typename PartOp>
LogicalResult vjpScatter(ScatterOp op, GradEmitter &e, Value g, Grads &grads) {
  SmallVector<NamedAttribute> attrs = inherentAttrs(op);
  auto bounds = op->getOperands().drop_front(2);
  if (isFloatValue(op.getSelf())) {
    SmallVector<Value> operands{g, e.zerosLike(op.getSrc())};
    llvm::append_range(operands, bounds);
    grads[0] = e.template op<ScatterOp>(operands, attrs);
  }
  if (isFloatValue(op.getSrc())) {
    SmallVector<Value> operands{g};
    llvm::append_range(operands, bounds);
    grads[1] = e.template op<PartOp>(operands, attrs);
  }
  return success();
}

LogicalResult vjpSliceScatter(kt::SliceScatterOp op, GradEmitter &e, Value g,
                              Grads &grads) {
  return vjpScatter<kt::SliceScatterOp, kt::SliceOp>(op, e, g, grads);
}

LogicalResult vjpSelectScatter(kt::SelectScatterOp op, GradEmitter &e, Value g,
                               Grads &grads) {
  return vjpScatter<kt::SelectScatterOp, kt::SelectOp>(op, e, g, grads);
}

LogicalResult vjpConcat(kt::ConcatOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  int64_t r = GradEmitter::rankOf(op.getResult());
  int64_t dim = kt::wrapDim(op.getDim(), r);
  int64_t offset = 0;
  for (auto [i, t] : llvm::enumerate(op.getTensors())) {
    // A 1-D empty operand (allowed by PyTorch's cat) contributes nothing.
    if (GradEmitter::rankOf(t) != r)
      continue;
    if (failed(needStatic(op, t, dim)))
      return failure();
    int64_t n = GradEmitter::shapeOf(t)[dim];
    if (isFloatValue(t))
      grads[i] = e.op<kt::SliceOp>(
          {g}, {e.attr("dim", e.builder().getI64IntegerAttr(dim)),
                e.attr("start", e.builder().getI64IntegerAttr(offset)),
                e.attr("end", e.builder().getI64IntegerAttr(offset + n)),
                e.attr("step", e.builder().getI64IntegerAttr(1))});
    offset += n;
  }
  return success();
}

LogicalResult vjpStack(kt::StackOp op, GradEmitter &e, Value g, Grads &grads) {
  int64_t r = GradEmitter::rankOf(op.getResult());
  int64_t dim = kt::wrapDim(op.getDim(), r);
  for (auto [i, t] : llvm::enumerate(op.getTensors()))
    if (isFloatValue(t))
      grads[i] = e.op<kt::SelectOp>(
          {g}, {e.attr("dim", e.builder().getI64IntegerAttr(dim)),
                e.attr("index", e.builder().getI64IntegerAttr(i))});
  return success();
}

LogicalResult vjpPad(kt::PadOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  // Crop what was added; zero-fill what was cropped.
  SmallVector<int64_t> inv;
  for (int64_t p : kt::getI64Array(op.getPad()))
    inv.push_back(-p);
  if (llvm::all_of(inv, [](int64_t p) { return p <= 0; })) {
    // Only crops (the forward only padded): views, one kt.slice per dim.
    int64_t r = GradEmitter::rankOf(g);
    Value gx = g;
    for (size_t i = 0; i + 1 < inv.size(); i += 2) // pairs from the last dim
      gx = e.padDim(gx, r - 1 - i / 2, inv[i], inv[i + 1]);
    grads[0] = gx;
    return success();
  }
  grads[0] = e.pad(g, inv);
  return success();
}

LogicalResult vjpFlip(kt::FlipOp op, GradEmitter &e, Value g, Grads &grads) {
  if (!isFloatValue(op.getSelf()))
    return success();
  grads[0] = e.op<kt::FlipOp>({g}, {e.attr("dims", op.getDimsAttr())});
  return success();
}

/// PyTorch's gather_backward: the gradient scattered back through the index
/// with a sum (repeated indices accumulate): `scatter(zeros_like(self),
/// index, g, dim, reduce = sum)`. Linear in the index size, `?` dims
/// included; positions no index reaches get 0 (also where `index` is
/// smaller than `self` in other dims).
LogicalResult vjpGather(kt::GatherOp op, GradEmitter &e, Value g,
                        Grads &grads) {
  Value x = op.getSelf(), index = op.getIndex();
  if (!isFloatValue(x))
    return success();
  if (GradEmitter::rankOf(x) == 0) {
    grads[0] = e.reshape(g, {}); // rank 0: gather is the identity
    return success();
  }
  grads[0] = e.op<kt::ScatterOp>(
      {e.zerosLike(x), index, g},
      {e.attr("dim", op.getDimAttr()),
       e.attr("reduce", kt::ScatterReduceAttr::get(op.getContext(),
                                                   kt::ScatterReduce::sum))});
  return success();
}

/// PyTorch's scatter / scatter_add / scatter_reduce backward (sum, mean;
/// `none` is torch.scatter's): the gradient of self is g, zero where an
/// index writes without self's value, divided by the count for mean; the
/// gradient of src is g (divided likewise) gathered at the index, zero-padded
/// where src is larger than index. prod/amax/amin have no rule yet (an
/// error at the op).
LogicalResult vjpScatterReduce(kt::ScatterOp op, GradEmitter &e, Value g,
                         Grads &grads) {
  using R = kt::ScatterReduce;
  Value x = op.getSelf(), index = op.getIndex(), src = op.getSrc();
  if (!isFloatValue(x))
    return success();
  R red = op.getReduce();
  if (red != R::none && red != R::sum && red != R::mean)
    return op.emitError("no gradient for 'kt.scatter' with reduce = ")
           << kt::stringifyScatterReduce(red)
           << " (sum, mean and none have one)";
  bool includeSelf = red == R::sum || red == R::mean ? op.getIncludeSelf()
                                                     : false;
  int64_t dim = op.getDim();
  auto scatter = [&](Value self, Value s, R r) {
    return e.op<kt::ScatterOp>(
        {self, index, s},
        {e.attr("dim", op.getDimAttr()),
         e.attr("reduce", kt::ScatterReduceAttr::get(op.getContext(), r))});
  };
  Value gs = g;
  if (red == R::mean) {
    Value n = scatter(includeSelf ? e.onesLike(x) : e.zerosLike(x),
                      e.onesLike(src), R::sum);
    gs = e.div(g, e.maximum(n, e.scalarLike(1, n)));
  }
  // Positions an index writes to without keeping self's value get no
  // gradient through self.
  grads[0] = includeSelf ? gs : scatter(gs, e.zerosLike(src), R::none);
  Value gsrc = e.gather(gs, index, dim);
  auto is = GradEmitter::shapeOf(index), ss = GradEmitter::shapeOf(src);
  if (is.size() != ss.size()) {
    gsrc = e.reshape(gsrc, ss); // rank 0 against rank 1 of one element
  } else if (is != ss) {
    if (failed(needStatic(op, index)) || failed(needStatic(op, src)))
      return failure();
    for (int64_t d = 0, r = ss.size(); d < r; ++d)
      if (is[d] != ss[d])
        gsrc = e.padDim(gsrc, d, 0, ss[d] - is[d]);
  }
  grads[2] = gsrc;
  return success();
}

/// PyTorch's index_select_backward (index_add into zeros): the gradient
/// scattered back with a sum through the index broadcast along the other
/// dims, `scatter(zeros_like(self), expand(index), g, dim, reduce = sum)`.
/// Linear in g's size (repeated indices accumulate), `?` dims included.
LogicalResult vjpIndexSelect(kt::IndexSelectOp op, GradEmitter &e, Value g,
                             Grads &grads) {
  Value x = op.getSelf(), index = op.getIndex();
  if (!isFloatValue(x))
    return success();
  int64_t r = GradEmitter::rankOf(x);
  if (r == 0) {
    grads[0] = e.reshape(g, {});
    return success();
  }
  int64_t dim = kt::wrapDim(op.getDim(), r);
  if (GradEmitter::rankOf(index) == 0)
    index = e.reshape(index, {1});
  // index [K] -> [1, .., K, .., 1] -> g's shape.
  SmallVector<int64_t> others;
  for (int64_t i = 0; i < r; ++i)
    if (i != dim)
      others.push_back(i);
  Value idx = e.unsqueezeDims(index, others);
  auto gt = cast<RankedTensorType>(g.getType());
  if (gt.hasStaticShape())
    idx = e.op<kt::ExpandOp>({idx}, {e.attr("size", e.i64s(gt.getShape()))});
  else
    idx = e.add(idx, e.cast(e.zerosLike(g), GradEmitter::elementTypeOf(idx)));
  grads[0] = e.op<kt::ScatterOp>(
      {e.zerosLike(x), idx, g},
      {e.attr("dim", op.getDimAttr()),
       e.attr("reduce", kt::ScatterReduceAttr::get(op.getContext(),
                                                   kt::ScatterReduce::sum))});
  return success();
}

/// kt.check passes `self` through: the gradient is the identity (the check
/// ran in the forward pass; `cond` is boolean).
LogicalResult vjpCheck(kt::CheckOp op, GradEmitter &, Value g, Grads &grads) {
  if (isFloatValue(op.getSelf()))
    grads[0] = g;
  return success();
}

} // namespace

void autodiff::registerShapeVJPs(MLIRContext *ctx) {
  attachVJP<kt::ReshapeOp, vjpReshape>(ctx);
  attachVJP<kt::TransposeOp, vjpTranspose>(ctx);
  attachVJP<kt::PermuteOp, vjpPermute>(ctx);
  attachVJP<kt::ExpandOp, vjpExpand>(ctx);
  attachVJP<kt::SqueezeOp, vjpSqueeze>(ctx);
  attachVJP<kt::UnsqueezeOp, vjpUnsqueeze>(ctx);
  attachVJP<kt::SliceOp, vjpSlice>(ctx);
  attachVJP<kt::SelectOp, vjpSelect>(ctx);
  attachVJP<kt::ConcatOp, vjpConcat>(ctx);
  attachVJP<kt::StackOp, vjpStack>(ctx);
  attachVJP<kt::PadOp, vjpPad>(ctx);
  attachVJP<kt::FlipOp, vjpFlip>(ctx);
  attachVJP<kt::GatherOp, vjpGather>(ctx);
  attachVJP<kt::ScatterOp, vjpScatterReduce>(ctx);
  attachVJP<kt::IndexSelectOp, vjpIndexSelect>(ctx);
  attachVJP<kt::SliceScatterOp, vjpSliceScatter>(ctx);
  attachVJP<kt::SelectScatterOp, vjpSelectScatter>(ctx);
  attachVJP<kt::CheckOp, vjpCheck>(ctx);
}
