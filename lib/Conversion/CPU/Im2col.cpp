//===- Im2col.cpp - Convolution implementation choice, im2col + GEMM ------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. A 2-D convolution on
// tensors (linalg.conv_2d_nchw_fchw, or linalg.conv_2d_ngchw_gfchw for
// groups > 1, as kiln-lower-to-linalg makes them: the input already padded,
// the init holding the bias or zeros) has two implementations:
//
// * "direct": the linalg conv stays and kiln-cpu-tile-vectorize tiles it;
// * "im2col": per sample n (and group g), the patches of the input are
//   copied into a [C*KH*KW, OH*OW] matrix by one linalg.generic (over
//   (c, kh, kw, oh, ow), reading x[c, oh*sh + kh*dh, ow*sw + kw*dw], then a
//   tensor.collapse_shape), and a plain linalg.matmul
//   W[F, C*KH*KW] x cols[C*KH*KW, OH*OW] accumulates into the [F, OH*OW]
//   slice of the (collapsed) init. kiln-select-matmul then marks that matmul
//   like any other (OpenBLAS for the sizes that matter). A 1x1 kernel with
//   stride 1 needs no copy: cols is the sample itself, collapsed.
//
// The batch/group loop is an scf.for: tileAndVectorize only tiles linalg
// ops, so it puts a thread forall around the im2col copy (inside the loop)
// but never around the loop, and OpenBLAS (which has its own threads) is
// called from one thread at a time.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;

namespace {

/// Static view of a conv's per-sample GEMM and its parameters.
struct ConvShape {
  bool grouped = false;
  int64_t groups = 1;
  // Per group: F output channels, C input channels.
  int64_t f = 0, c = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
};

std::pair<int64_t, int64_t> pairOf(DenseIntElementsAttr a) {
  auto v = a.getValues<int64_t>();
  return {v[0], v[1]};
}

/// Whether `op` is a conv this file handles (f32/f64 on tensors), and its
/// shape.
std::optional<ConvShape> convShape(linalg::LinalgOp op) {
  ConvShape s;
  DenseIntElementsAttr strides, dilations;
  if (auto c = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
    strides = c.getStrides();
    dilations = c.getDilations();
  } else if (auto c = dyn_cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation())) {
    strides = c.getStrides();
    dilations = c.getDilations();
    s.grouped = true;
  } else {
    return std::nullopt;
  }
  if (!op.hasPureTensorSemantics())
    return std::nullopt;
  Type elem;
  for (Value v : op->getOperands()) {
    Type t = getElementTypeOrSelf(v.getType());
    if (elem && t != elem)
      return std::nullopt;
    elem = t;
  }
  if (!elem || !(elem.isF32() || elem.isF64()))
    return std::nullopt;
  std::tie(s.sh, s.sw) = pairOf(strides);
  std::tie(s.dh, s.dw) = pairOf(dilations);
  auto wt = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto ot = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  unsigned g = s.grouped ? 1 : 0;
  if (s.grouped)
    s.groups = wt.getDimSize(0);
  s.f = wt.getDimSize(g);
  s.c = wt.getDimSize(g + 1);
  s.kh = wt.getDimSize(g + 2);
  s.kw = wt.getDimSize(g + 3);
  s.oh = ot.getDimSize(g + 2);
  s.ow = ot.getDimSize(g + 3);
  return s;
}

/// Whether the kernel window (kh x kw) is larger than the output (oh x ow):
/// the weight-gradient form (lib/Autodiff/Conv.cpp swaps batch and
/// channels). False when a size is `?`: kDynamic is INT64_MIN, and a product
/// with it overflows (UB, found by UBSan).
bool kernelLargerThanOutput(int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  for (int64_t d : {kh, kw, oh, ow})
    if (ShapedType::isDynamic(d))
      return false;
  return kh * kw > oh * ow;
}

int64_t mulStatic(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
    return ShapedType::kDynamic;
  return a * b;
}

/// The window of `t` (sizes `full`) at `lead` (one index per leading dim),
/// size 1 in those dims and whole in the others.
void leadingWindow(OpBuilder &b, RankedTensorType t,
                   ArrayRef<OpFoldResult> full, ValueRange lead,
                   SmallVectorImpl<OpFoldResult> &offsets,
                   SmallVectorImpl<OpFoldResult> &sizes,
                   SmallVectorImpl<OpFoldResult> &strides) {
  unsigned drop = lead.size();
  for (unsigned i = 0; i < t.getRank(); ++i) {
    offsets.push_back(i < drop ? OpFoldResult(lead[i]) : b.getIndexAttr(0));
    sizes.push_back(i < drop ? b.getIndexAttr(1) : full[i]);
    strides.push_back(b.getIndexAttr(1));
  }
}

/// `v` without its leading `drop` dims: the slice at `lead` (one index per
/// dropped dim), rank-reduced.
Value sliceLeading(OpBuilder &b, Location loc, Value v, ValueRange lead) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  leadingWindow(b, t, tensor::getMixedSizes(b, loc, v), lead, offsets, sizes,
                strides);
  auto rt = RankedTensorType::get(t.getShape().drop_front(lead.size()),
                                  t.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, rt, v, offsets, sizes, strides);
}

/// Inserts `src` (rank-reduced) into `dest` at `lead` (see sliceLeading).
Value insertLeading(OpBuilder &b, Location loc, Value src, Value dest,
                    ValueRange lead) {
  auto t = cast<RankedTensorType>(dest.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  leadingWindow(b, t, tensor::getMixedSizes(b, loc, dest), lead, offsets,
                sizes, strides);
  return tensor::InsertSliceOp::create(b, loc, src, dest, offsets, sizes,
                                       strides);
}

/// A new tensor of `sizes` that CSE cannot merge with another one: a
/// bufferization.alloc_tensor (it allocates), where two tensor.empty + fill
/// pairs of one shape (two convs' zero inits or paddings) become one value
/// after CSE, and one-shot bufferization then copies the filled buffer for
/// the second user.
Value freshTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elem) {
  SmallVector<int64_t> shape;
  SmallVector<Value> dyn;
  for (OpFoldResult sz : sizes) {
    std::optional<int64_t> c = getConstantIntValue(sz);
    shape.push_back(c.value_or(ShapedType::kDynamic));
    if (!c)
      dyn.push_back(getValueOrCreateConstantIndexOp(b, loc, sz));
  }
  return bufferization::AllocTensorOp::create(
      b, loc, RankedTensorType::get(shape, elem), dyn);
}

/// Gives `conv` an init of its own: when its init is a fill or a generic
/// (the bias broadcast) writing into a tensor.empty, a clone of that op
/// writing into a fresh tensor (see freshTensor) replaces it.
void privateInit(RewriterBase &rw, linalg::LinalgOp conv) {
  OpOperand &initOperand = conv.getDpsInitsMutable()[0];
  auto def = initOperand.get().getDefiningOp<linalg::LinalgOp>();
  if (!def || def->getNumResults() != 1 || def.getNumDpsInits() != 1 ||
      !isa<linalg::FillOp, linalg::GenericOp>(def.getOperation()))
    return;
  auto empty = def.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  if (!empty)
    return;
  rw.setInsertionPoint(conv);
  Value fresh = freshTensor(rw, empty.getLoc(), empty.getMixedSizes(),
                            empty.getType().getElementType());
  Operation *clone = rw.clone(*def.getOperation());
  cast<linalg::LinalgOp>(clone).getDpsInitsMutable()[0].set(fresh);
  rw.modifyOpInPlace(conv, [&] { initOperand.set(clone->getResult(0)); });
}

/// The tensor.pad (constant padding value) that feeds conv input `x`
/// directly or through the tensor.expand_shape of the grouped form.
tensor::PadOp inputPad(Value x) {
  if (auto e = x.getDefiningOp<tensor::ExpandShapeOp>())
    x = e.getSrc();
  auto pad = x.getDefiningOp<tensor::PadOp>();
  if (!pad || !pad.getConstantPaddingValue())
    return nullptr;
  return pad;
}

/// Whether the zero padding `pad` of a oneDNN conv's input can be left to
/// the call (kiln_onednn_conv2d_pad_f32): an f32 NCHW input padded with +0
/// on H and W only, by static amounts, used only by this conv. The
/// weight-gradient forms (a kernel larger than the output) too:
/// libkiln_onednn gives the padding to oneDNN's backward-weights primitive
/// (ungrouped) or pads each plane as its depthwise weight-gradient loops
/// copy it (grouped).
bool padFitsInKernel(tensor::PadOp pad, const ConvShape &s) {
  if (!pad)
    return false;
  Value v = pad.getConstantPaddingValue();
  auto cst = v ? v.getDefiningOp<arith::ConstantOp>() : nullptr;
  auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  if (!f || !f.getValue().isPosZero() || !f.getType().isF32())
    return false;
  RankedTensorType st = pad.getSourceType();
  if (st.getRank() != 4 || st.isDynamicDim(2) || st.isDynamicDim(3))
    return false;
  // One use besides tensor.dims (of a `?` batch, which
  // kiln-cpu-conv-to-onednn reads from the unpadded input instead).
  Operation *user = nullptr;
  for (Operation *u : pad->getUsers()) {
    if (isa<tensor::DimOp>(u))
      continue;
    if (user)
      return false;
    user = u;
  }
  auto lo = pad.getStaticLow(), hi = pad.getStaticHigh();
  for (int i = 0; i < 4; ++i) {
    if (ShapedType::isDynamic(lo[i]) || ShapedType::isDynamic(hi[i]) ||
        lo[i] < 0 || hi[i] < 0)
      return false;
    if (i < 2 && (lo[i] != 0 || hi[i] != 0))
      return false;
  }
  if (auto e = dyn_cast_or_null<tensor::ExpandShapeOp>(user))
    if (!e->hasOneUse())
      return false;
  return true;
}

/// After padAsFillAndCopy: marks the fill and the copy that make conv
/// input `x` (kConvPadAttr), so that kiln-cpu-tile-vectorize leaves them
/// and kiln-cpu-conv-to-onednn can drop them.
void markPadForConv(Value x) {
  if (auto e = x.getDefiningOp<tensor::ExpandShapeOp>())
    x = e.getSrc();
  if (auto c = x.getDefiningOp<tensor::CastOp>())
    x = c.getSource();
  auto ins = x.getDefiningOp<tensor::InsertSliceOp>();
  if (!ins)
    return;
  auto copy = ins.getSource().getDefiningOp<linalg::CopyOp>();
  auto fill = ins.getDest().getDefiningOp<linalg::FillOp>();
  if (!copy || !fill)
    return;
  UnitAttr mark = UnitAttr::get(x.getContext());
  copy->setAttr(kiln::cpu::kConvPadAttr, mark);
  fill->setAttr(kiln::cpu::kConvPadAttr, mark);
}

/// Marks the linalg.transposes that f32 oneDNN conv `conv` reads
/// (kConvViewAttr): its weight (ungrouped), or its input, directly or as
/// the source of the input's marked padding copy (grouped: the padded
/// buffer's, through its expand_shape), each read by nothing else.
void markTransposesForConv(linalg::LinalgOp conv) {
  bool grouped = isa<linalg::Conv2DNgchwGfchwOp>(conv.getOperation());
  if (!grouped && !isa<linalg::Conv2DNchwFchwOp>(conv.getOperation()))
    return;
  auto mark = [&](Value v, Operation *reader) {
    auto t = v.getDefiningOp<linalg::TransposeOp>();
    if (!t || !v.hasOneUse() || *v.getUsers().begin() != reader)
      return;
    t->setAttr(kiln::cpu::kConvViewAttr, UnitAttr::get(conv->getContext()));
  };
  Value x = conv.getDpsInputs()[0];
  if (grouped) {
    // Only through the padding: the grouped input without it is an
    // expand_shape of the transpose, which the call cannot read in place.
    auto e = x.getDefiningOp<tensor::ExpandShapeOp>();
    if (!e)
      return;
    x = e.getSrc();
    if (!x.getDefiningOp<tensor::InsertSliceOp>() &&
        !x.getDefiningOp<tensor::CastOp>())
      return;
  } else {
    mark(conv.getDpsInputs()[1], conv);
  }
  if (auto c = x.getDefiningOp<tensor::CastOp>())
    x = c.getSource();
  if (auto ins = x.getDefiningOp<tensor::InsertSliceOp>()) {
    auto copy = ins.getSource().getDefiningOp<linalg::CopyOp>();
    if (copy && copy->hasAttr(kiln::cpu::kConvPadAttr))
      mark(copy.getDpsInputs()[0], copy);
    return;
  }
  mark(conv.getDpsInputs()[0], conv);
}

/// Marks the linalg.transpose [0, 2, 3, 1] that is the only reader of
/// ungrouped f32 oneDNN conv `conv`'s result (besides tensor.dims), after
/// its relu/clamp is folded (kConvViewAttr): the channels-last twin that
/// kiln-cpu-conv-channels-last made and kiln-cpu-outline-kernels put into
/// the conv's kernel. kiln-cpu-conv-to-onednn makes the call write the
/// transpose's output through permuted strides (matchOutputView).
void markOutputTransposeForConv(linalg::LinalgOp conv) {
  Value r = conv->getResult(0);
  if (isa<linalg::Conv2DNgchwGfchwOp>(conv.getOperation())) {
    // A grouped conv's 5-D result, collapsed back to 4-D.
    if (!r.hasOneUse())
      return;
    auto c = dyn_cast<tensor::CollapseShapeOp>(*r.getUsers().begin());
    if (!c)
      return;
    r = c.getResult();
  } else if (!isa<linalg::Conv2DNchwFchwOp>(conv.getOperation())) {
    return;
  }
  linalg::TransposeOp t;
  for (Operation *u : r.getUsers()) {
    if (isa<tensor::DimOp>(u))
      continue;
    auto tr = dyn_cast<linalg::TransposeOp>(u);
    if (!tr || t)
      return;
    t = tr;
  }
  if (t && t.getPermutation() == ArrayRef<int64_t>{0, 2, 3, 1})
    t->setAttr(kiln::cpu::kConvViewAttr, UnitAttr::get(conv->getContext()));
}

/// Marks the bias broadcast that initializes oneDNN conv `conv`'s output
/// (kConvBiasAttr), so that kiln-cpu-tile-vectorize leaves it and
/// kiln-cpu-conv-to-onednn passes the bias to the call instead: a
/// linalg.generic from a 1-D f32 tensor indexed by dim 1 of a 4-D output,
/// whose body yields the input, read only by the conv (directly or through
/// the grouped form's tensor.expand_shape).
void markBiasForConv(linalg::LinalgOp conv) {
  Value init = conv.getDpsInits()[0];
  if (auto e = init.getDefiningOp<tensor::ExpandShapeOp>()) {
    if (!e->hasOneUse())
      return;
    init = e.getSrc();
  }
  auto gen = init.getDefiningOp<linalg::GenericOp>();
  if (!gen || !init.hasOneUse() || gen.getNumDpsInputs() != 1 ||
      gen.getNumDpsInits() != 1 || gen.getNumParallelLoops() != 4 ||
      gen.getNumLoops() != 4)
    return;
  auto inType = dyn_cast<RankedTensorType>(gen.getDpsInputs()[0].getType());
  if (!inType || inType.getRank() != 1 || !inType.getElementType().isF32())
    return;
  MLIRContext *ctx = conv->getContext();
  SmallVector<AffineMap> maps = gen.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(4, 0, getAffineDimExpr(1, ctx)) ||
      !maps[1].isIdentity())
    return;
  Block &body = gen.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues()[0] != body.getArgument(0))
    return;
  gen->setAttr(kiln::cpu::kConvBiasAttr, UnitAttr::get(ctx));
}

/// Whether `gen` is an all-parallel identity-map generic from one input
/// to one result of the same type, into a tensor.empty (its body does not
/// read the init): the shape of a lowered kt.relu / kt.clamp.
bool isPointwiseOfOne(linalg::GenericOp gen) {
  return gen && gen.getNumDpsInputs() == 1 && gen.getNumDpsInits() == 1 &&
         gen->getNumResults() == 1 &&
         gen.getNumParallelLoops() == gen.getNumLoops() &&
         gen->getResult(0).getType() == gen.getDpsInputs()[0].getType() &&
         gen.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() &&
         llvm::all_of(gen.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// The clamp bounds of `gen`'s body if it computes kt.clamp's rule on its
/// one input: an optional `v < L ? L : v` (cmpf olt + select) followed by an
/// optional `v > H ? H : v` (cmpf ogt + select), L and H f32 constants, at
/// least one of the two (kt.relu is the first with L = 0). Absent bounds
/// are -inf / +inf.
std::optional<std::pair<float, float>> clampBounds(linalg::GenericOp gen) {
  Block &body = gen.getRegion().front();
  Value v = body.getArgument(0);
  float lo = -INFINITY, hi = INFINITY;
  auto constantOf = [](Value c) -> std::optional<float> {
    FloatAttr f;
    if (!matchPattern(c, m_Constant(&f)) || !f.getType().isF32())
      return std::nullopt;
    return f.getValue().convertToFloat();
  };
  auto it = body.begin();
  int steps = 0;
  for (arith::CmpFPredicate pred :
       {arith::CmpFPredicate::OLT, arith::CmpFPredicate::OGT}) {
    auto cmp = dyn_cast<arith::CmpFOp>(&*it);
    if (!cmp || cmp.getPredicate() != pred || cmp.getLhs() != v)
      continue;
    auto sel = dyn_cast<arith::SelectOp>(&*std::next(it));
    std::optional<float> bound = constantOf(cmp.getRhs());
    if (!sel || !bound || sel.getCondition() != cmp.getResult() ||
        sel.getTrueValue() != cmp.getRhs() || sel.getFalseValue() != v)
      return std::nullopt;
    (pred == arith::CmpFPredicate::OLT ? lo : hi) = *bound;
    v = sel.getResult();
    std::advance(it, 2);
    ++steps;
  }
  auto yield = dyn_cast<linalg::YieldOp>(&*it);
  if (!steps || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != v)
    return std::nullopt;
  return std::make_pair(lo, hi);
}

/// Folds the relu/clamp that consumes oneDNN conv `conv`'s result into the
/// conv (kiln-cpu-outline-kernels puts the two in one kernel): where the
/// result (through the grouped form's tensor.collapse_shape) has one use
/// besides tensor.dims, an
/// all-parallel identity linalg.generic with clampBounds whose init is
/// tensor.empty, the generic's uses read the conv's result instead and the
/// conv gets kConvClampAttr (lowerConvsToOneDNN passes the bounds to
/// kiln_onednn_conv2d_post_f32, which clamps as it stores).
void foldClampIntoConv(RewriterBase &rw, linalg::LinalgOp conv) {
  // The one user of `v` that is not a tensor.dim (of a `?` size: it reads
  // the same shape after the fold), or null.
  auto onlyUser = [](Value v) -> Operation * {
    Operation *user = nullptr;
    for (Operation *u : v.getUsers()) {
      if (isa<tensor::DimOp>(u))
        continue;
      if (user)
        return nullptr;
      user = u;
    }
    return user;
  };
  Value r = conv->getResult(0);
  Operation *user = onlyUser(r);
  if (auto c = dyn_cast_or_null<tensor::CollapseShapeOp>(user)) {
    r = c.getResult();
    user = onlyUser(r);
  }
  auto gen = dyn_cast_or_null<linalg::GenericOp>(user);
  if (!isPointwiseOfOne(gen) || gen.getDpsInputs()[0] != r)
    return;
  std::optional<std::pair<float, float>> bounds = clampBounds(gen);
  if (!bounds)
    return;
  conv->setAttr(kiln::cpu::kConvClampAttr,
                rw.getDenseF32ArrayAttr({bounds->first, bounds->second}));
  rw.replaceOp(gen, r);
}

/// Folds the relu/clamp that makes oneDNN conv `conv`'s input into the
/// conv (kiln-cpu-outline-kernels puts a depthwise conv's input relu/clamp
/// into its kernel): where the input (through the grouped form's
/// tensor.expand_shape and the padding's linalg.copy into the padded
/// buffer) is an all-parallel identity linalg.generic with clampBounds whose
/// bounds keep 0 (L <= 0 <= H: clamping the padding's zeros too changes
/// nothing) and one use besides tensor.dims, the conv reads the generic's
/// input instead and gets kConvInputClampAttr.
void foldInputClampIntoConv(RewriterBase &rw, linalg::LinalgOp conv) {
  Value x = conv.getDpsInputs()[0];
  if (auto e = x.getDefiningOp<tensor::ExpandShapeOp>())
    x = e.getSrc();
  if (auto c = x.getDefiningOp<tensor::CastOp>())
    x = c.getSource();
  if (auto ins = x.getDefiningOp<tensor::InsertSliceOp>())
    if (auto copy = ins.getSource().getDefiningOp<linalg::CopyOp>())
      x = copy.getDpsInputs()[0];
  // A channels-last input: the relu/clamp of the [N, H, W, C] value before
  // its transpose (the two commute; the call reads the transpose's source
  // in place, markTransposesForConv).
  if (auto t = x.getDefiningOp<linalg::TransposeOp>(); t && x.hasOneUse())
    x = t.getInput();
  auto gen = x.getDefiningOp<linalg::GenericOp>();
  if (!isPointwiseOfOne(gen))
    return;
  unsigned uses = 0;
  for (Operation *u : x.getUsers())
    if (!isa<tensor::DimOp>(u))
      ++uses;
  if (uses != 1)
    return;
  std::optional<std::pair<float, float>> bounds = clampBounds(gen);
  if (!bounds || !(bounds->first <= 0.0f) || !(bounds->second >= 0.0f))
    return;
  conv->setAttr(kiln::cpu::kConvInputClampAttr,
                rw.getDenseF32ArrayAttr({bounds->first, bounds->second}));
  rw.replaceOp(gen, gen.getDpsInputs()[0]);
}

} // namespace

LogicalResult kiln::cpu::padAsFillAndCopy(RewriterBase &rw,
                                          tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  if (!value)
    return failure();
  Location loc = pad.getLoc();
  rw.setInsertionPoint(pad);
  Value src = pad.getSource();
  auto st = cast<RankedTensorType>(src.getType());
  SmallVector<OpFoldResult> srcSizes = tensor::getMixedSizes(rw, loc, src);
  SmallVector<OpFoldResult> low = pad.getMixedLowPad(),
                            high = pad.getMixedHighPad();
  SmallVector<OpFoldResult> outSizes, ones(st.getRank(), rw.getIndexAttr(1));
  for (int64_t i = 0; i < st.getRank(); ++i) {
    std::optional<int64_t> l = getConstantIntValue(low[i]),
                           s = getConstantIntValue(srcSizes[i]),
                           h = getConstantIntValue(high[i]);
    if (l && s && h) {
      outSizes.push_back(rw.getIndexAttr(*l + *s + *h));
      continue;
    }
    auto v = [&](OpFoldResult x) {
      return getValueOrCreateConstantIndexOp(rw, loc, x);
    };
    outSizes.push_back(
        arith::AddIOp::create(
            rw, loc, arith::AddIOp::create(rw, loc, v(low[i]), v(srcSizes[i])),
            v(high[i]))
            .getResult());
  }
  Value empty = freshTensor(rw, loc, outSizes, st.getElementType());
  Value fill =
      linalg::FillOp::create(rw, loc, ValueRange{value}, ValueRange{empty})
          .getResult(0);
  Value window = tensor::ExtractSliceOp::create(rw, loc, fill, low, srcSizes,
                                                ones);
  // linalg.copy, not an identity linalg.generic: canonicalization erases
  // the latter on tensors (and the insert_slice would be a memref.copy).
  Value copy = linalg::CopyOp::create(rw, loc, src, window).getResult(0);
  Value r =
      tensor::InsertSliceOp::create(rw, loc, copy, fill, low, srcSizes, ones);
  if (r.getType() != pad.getResultType())
    r = tensor::CastOp::create(rw, loc, pad.getResultType(), r);
  rw.replaceOp(pad, r);
  return success();
}

StringRef kiln::cpu::chooseConvImpl(int64_t groups, int64_t f, int64_t c,
                                    int64_t kh, int64_t kw, int64_t oh,
                                    int64_t ow, int64_t sh, int64_t sw,
                                    unsigned elemBits, unsigned threads,
                                    bool allowOneDNN) {
  // The per-sample, per-group GEMM is M = f, N = oh*ow, K = c*kh*kw; a `?`
  // size counts as large. Measured on the
  // development machine (2 shared cores, AVX-512, under load from other
  // builds) with `kiln-run --backend=cpu --random-inputs --repeat=21
  // --cpu-threads=2 --conv=direct|im2col`, f32, median kernel ms
  // (direct / im2col):
  //   3x3 64->64 56x56 b8 (M 64, N 3136, K 576)   314 / 122
  //   3x3 64->128 s2 56x56 b8 (M 128, N 784)       228 / 72
  //   7x7 s2 3->64 224x224 b1 (K 147)               62 / 19
  //   3x3 3->32 32x32 b8 (M 32, K 27)              1.12 / 0.40
  //   3x3 32->32 32x32 b8 (M 32, K 288)            14.9 / 8.9
  //   3x3 64->64 8x8 b8 (N 64)                     14.9 / 7.8
  //   3x3 16->16 32x32 b8 (M 16, K 144)            5.03 / 4.94
  //   3x3 3->16 32x32 b8 (M 16, K 27)              0.30 / 1.01
  //   3x3 64->64 groups 8 56x56 b8 (M 8, K 72)     39.9 / 62.4
  //   depthwise 3x3 64 56x56 b8 (M 1, K 9)         17.8 / 20.9
  //   1x1 64->64 56x56 b8 (no copy)                28.9 / 6.8
  //   1x1 8->8 56x56 b8 (no copy, M 8, K 8)        0.158 / 0.095
  //   1x1 3->64 32x32 b2 (no copy, K 3)            0.233 / 0.310
  // So: im2col once M, N and K are all >= 24; below that the generated matmul on the copied
  // patches loses to the direct conv (few output channels, depthwise,
  // many groups). A 1x1 stride-1 kernel copies nothing: it is a plain
  // matmul and wins from K = C >= 8.
  (void)threads;
  // oneDNN (f32, where this build has it), measured with
  // bench/conv_impl_bench.py (docs/codegen.md, "Convolution through
  // oneDNN"): faster than both of the above on every shape measured except
  // depthwise ones (one input channel per group: im2col/direct 4.4-24 ms vs
  // oneDNN 7.7-69 ms; oneDNN 2.6 has no fast depthwise kernel for NCHW).
  // Those go to libkiln_onednn too, whose own direct depthwise loops run
  // them (NCHW, threaded; KilnOneDNN.cpp "Depthwise convolutions"): 5-20x
  // faster than the generated direct conv (docs/codegen.md, "Depthwise
  // convolutions in training"). An ungrouped conv with one input channel
  // whose kernel is larger than its output is a weight gradient at batch
  // 1 (lib/Autodiff/Conv.cpp swaps batch and channels): libkiln_onednn
  // runs it as oneDNN's backward-weights primitive, so it goes to oneDNN
  // too.
  bool weightGrad = groups == 1 && kernelLargerThanOutput(kh, kw, oh, ow);
  bool depthwise = groups > 1 && c == 1;
  if (allowOneDNN && elemBits == 32 && oneDNNAvailable() &&
      (c != 1 || weightGrad || depthwise))
    return "onednn";
  if (kh == 1 && kw == 1 && sh == 1 && sw == 1)
    return ShapedType::isDynamic(c) || c >= 8 ? "im2col" : "direct";
  // The table's crossover: every one of M, N, K at least 24 (or `?`).
  int64_t n = mulStatic(oh, ow), k = mulStatic(c, mulStatic(kh, kw));
  auto big = [](int64_t d) { return ShapedType::isDynamic(d) || d >= 24; };
  return big(f) && big(n) && big(k) ? "im2col" : "direct";
}

FailureOr<Operation *> kiln::cpu::convToIm2colMatmul(RewriterBase &rw,
                                                     linalg::LinalgOp op) {
  std::optional<ConvShape> shape = convShape(op);
  if (!shape)
    return failure();
  ConvShape s = *shape;
  // A `?` width stays direct: the [.., OH*OW] result is expanded back into
  // (OH, OW), and with OH and OW both `?` that is a memref.expand_shape of
  // one `?` dim into two, which upstream expand-strided-metadata (MLIR 22)
  // crashes on; a `?` input width also makes the sample's row stride
  // dynamic, so its 1x1 collapse would be a copy. `?` batch, channel and
  // height dims are handled.
  auto inW = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  if (ShapedType::isDynamic(s.ow) || inW.isDynamicDim(inW.getRank() - 1))
    return failure();
  MLIRContext *ctx = op->getContext();
  Location loc = op.getLoc();
  rw.setInsertionPoint(op);
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
        init = op.getDpsInits()[0];
  auto ot = cast<RankedTensorType>(init.getType());
  Type elem = ot.getElementType();
  unsigned lead = s.grouped ? 2 : 1; // n [, g]
  SmallVector<OpFoldResult> xs = tensor::getMixedSizes(rw, loc, x),
                            ws = tensor::getMixedSizes(rw, loc, w),
                            os = tensor::getMixedSizes(rw, loc, init);
  unsigned wg = s.grouped ? 1 : 0;
  OpFoldResult cSz = ws[wg + 1], khSz = ws[wg + 2], kwSz = ws[wg + 3];
  OpFoldResult ohSz = os[lead + 1], owSz = os[lead + 2];

  // init [N, (G,) F, OH, OW] -> [N, (G,) F, OH*OW].
  SmallVector<ReassociationIndices> outGroups;
  for (unsigned i = 0; i <= lead; ++i)
    outGroups.push_back({(int64_t)i});
  outGroups.push_back({(int64_t)lead + 1, (int64_t)lead + 2});
  Value acc0 = tensor::CollapseShapeOp::create(rw, loc, init, outGroups);

  // Weights [(G,) F, C, KH, KW] -> [(G,) F, C*KH*KW] (a view).
  SmallVector<ReassociationIndices> wGroups;
  for (unsigned i = 0; i <= wg; ++i)
    wGroups.push_back({(int64_t)i});
  wGroups.push_back({(int64_t)wg + 1, (int64_t)wg + 2, (int64_t)wg + 3});
  Value wm = tensor::CollapseShapeOp::create(rw, loc, w, wGroups);

  bool copyFree = s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1;
  auto implAttr = StringAttr::get(ctx, "im2col");

  // The body for one (n [, g]): returns the updated accumulator.
  auto body = [&](OpBuilder &b, Value acc, ValueRange ivs) -> Value {
    Value sample = sliceLeading(b, loc, x, ivs); // [C, Hp, Wp]
    Value cols;
    if (copyFree) {
      // 1x1, stride 1: the output grid is the input grid.
      cols = tensor::CollapseShapeOp::create(
          b, loc, sample, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    } else {
      SmallVector<OpFoldResult> colSizes = {cSz, khSz, kwSz, ohSz, owSz};
      SmallVector<int64_t> colShape;
      for (OpFoldResult sz : colSizes)
        colShape.push_back(
            getConstantIntValue(sz).value_or(ShapedType::kDynamic));
      auto colType = RankedTensorType::get(colShape, elem);
      Value empty = tensor::EmptyOp::create(b, loc, colSizes, elem);
      AffineExpr c, kh, kw, oh, ow;
      bindDims(ctx, c, kh, kw, oh, ow);
      AffineMap in = AffineMap::get(
          5, 0, {c, oh * s.sh + kh * s.dh, ow * s.sw + kw * s.dw}, ctx);
      auto gen = linalg::GenericOp::create(
          b, loc, TypeRange{colType}, ValueRange{sample}, ValueRange{empty},
          ArrayRef<AffineMap>{in, AffineMap::getMultiDimIdentityMap(5, ctx)},
          SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
          [&](OpBuilder &bb, Location l, ValueRange a) {
            linalg::YieldOp::create(bb, l, a[0]);
          });
      gen->setAttr(kConvImplAttr, implAttr);
      cols = tensor::CollapseShapeOp::create(
          b, loc, gen.getResult(0),
          ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4}});
    }
    Value wSlice = s.grouped ? sliceLeading(b, loc, wm, ivs.drop_front())
                             : wm; // [F, C*KH*KW]
    Value accSlice = sliceLeading(b, loc, acc, ivs); // [F, OH*OW]
    Value mm = linalg::MatmulOp::create(b, loc, TypeRange{accSlice.getType()},
                                        ValueRange{wSlice, cols},
                                        ValueRange{accSlice})
                   .getResult(0);
    return insertLeading(b, loc, mm, acc, ivs);
  };

  Value zero = arith::ConstantIndexOp::create(rw, loc, 0);
  Value one = arith::ConstantIndexOp::create(rw, loc, 1);
  Value nSz = getValueOrCreateConstantIndexOp(rw, loc, xs[0]);
  auto outer = scf::ForOp::create(
      rw, loc, zero, nSz, one, ValueRange{acc0},
      [&](OpBuilder &b, Location l, Value n, ValueRange args) {
        Value acc = args[0];
        if (!s.grouped) {
          scf::YieldOp::create(b, l, body(b, acc, ValueRange{n}));
          return;
        }
        Value gSz = getValueOrCreateConstantIndexOp(b, l, xs[1]);
        auto inner = scf::ForOp::create(
            b, l, zero, gSz, one, ValueRange{acc},
            [&](OpBuilder &bb, Location ll, Value g, ValueRange a2) {
              scf::YieldOp::create(bb, ll, body(bb, a2[0], ValueRange{n, g}));
            });
        inner->setAttr(kConvImplAttr, implAttr);
        scf::YieldOp::create(b, l, inner.getResult(0));
      });
  outer->setAttr(kConvImplAttr, implAttr);
  SmallVector<OpFoldResult> outSizes(os.begin(), os.end());
  Value r = tensor::ExpandShapeOp::create(rw, loc, ot, outer.getResult(0),
                                          outGroups, outSizes);
  rw.replaceOp(op, r);
  return outer.getOperation();
}

/// A conv whose result is read only through a chain of static
/// tensor.extract_slices at offset 0 with unit strides that keep the batch
/// and the channels whole (kiln-cpu-outline-kernels puts them in the conv's
/// kernel: convSlices) computes only the rows and columns they keep: the
/// same conv with the last slice's shape and a fresh fill of the init's
/// value. (A conv's input may be larger than its output needs.)
/// kiln-autodiff's weight gradient of a stride-2 3x3 conv is a 4x4 "kernel"
/// sliced to 3x3: 16 output positions for 9, each a reduction over the
/// whole batch and image. Returns the conv that stays.
linalg::LinalgOp shrinkToSlices(RewriterBase &rw, linalg::LinalgOp op) {
  auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
  if (!conv || !conv.hasPureTensorSemantics())
    return op;
  Value r = op->getResult(0);
  auto rt = cast<RankedTensorType>(r.getType());
  if (!rt.hasStaticShape())
    return op;
  SmallVector<tensor::ExtractSliceOp> chain;
  Value cur = r;
  while (cur.hasOneUse()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(*cur.getUsers().begin());
    if (!slice || slice.getType().getRank() != 4 ||
        !slice.getType().hasStaticShape() || !slice.hasUnitStride() ||
        !slice.hasZeroOffset() || slice.getType().getDimSize(0) != rt.getDimSize(0) ||
        slice.getType().getDimSize(1) != rt.getDimSize(1))
      break;
    chain.push_back(slice);
    cur = slice.getResult();
  }
  if (chain.empty() || chain.back().getType() == rt)
    return op;
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !fill->hasOneUse())
    return op;
  RankedTensorType nt = chain.back().getType();
  Location loc = op.getLoc();
  rw.setInsertionPoint(op);
  Value empty =
      tensor::EmptyOp::create(rw, loc, nt.getShape(), nt.getElementType());
  Value init = linalg::FillOp::create(rw, loc, fill.getDpsInputs()[0], empty)
                   .getResult(0);
  auto small = linalg::Conv2DNchwFchwOp::create(
      rw, loc, TypeRange{nt}, op.getDpsInputs(), ValueRange{init},
      conv.getStrides(), conv.getDilations());
  for (NamedAttribute a : op->getDiscardableAttrs())
    small->setAttr(a.getName(), a.getValue());
  rw.replaceAllUsesWith(chain.back().getResult(), small.getResult(0));
  for (tensor::ExtractSliceOp slice : llvm::reverse(chain))
    rw.eraseOp(slice);
  rw.eraseOp(op);
  if (fill->use_empty())
    rw.eraseOp(fill);
  return cast<linalg::LinalgOp>(small.getOperation());
}

void kiln::cpu::selectConvImpl(ModuleOp module, StringRef impl,
                               unsigned threads, bool allowOneDNN) {
  SmallVector<linalg::LinalgOp> convs;
  module.walk([&](linalg::LinalgOp op) {
    if (convShape(op))
      convs.push_back(op);
  });
  IRRewriter rw(module.getContext());
  for (linalg::LinalgOp op : convs) {
    op = shrinkToSlices(rw, op);
    ConvShape s = *convShape(op);
    // Either way the zero padding of the input becomes a vectorized fill +
    // copy (see padAsFillAndCopy); for a oneDNN conv the call applies it
    // itself where it can (markPadForConv below).
    tensor::PadOp pad = inputPad(op.getDpsInputs()[0]);
    bool padInKernel = padFitsInKernel(pad, s);
    if (pad)
      (void)padAsFillAndCopy(rw, pad);
    privateInit(rw, op);
    StringRef choice = impl;
    // A conv inside an scf.forall is one tile of a kiln-fuse kernel that
    // already runs on the OpenMP threads: OpenBLAS calls from there would
    // contend with them (and with each other), so it stays direct.
    Type elem = getElementTypeOrSelf(op->getResult(0).getType());
    if (op->getParentOfType<scf::ForallOp>())
      choice = "direct";
    else if (impl == "onednn" && elem.isF32())
      choice = "onednn";
    else if (impl == "auto" || impl == "onednn")
      // (f64 convs under impl=onednn: auto's choice, never oneDNN)
      choice = chooseConvImpl(
          s.groups, s.f, s.c, s.kh, s.kw, s.oh, s.ow, s.sh, s.sw,
          getElementTypeOrSelf(op->getResult(0).getType())
              .getIntOrFloatBitWidth(),
          threads, allowOneDNN);
    // A transposed conv (conv2d's input gradient) runs whole on oneDNN's
    // backward-data primitive instead of as a stride-1 conv over its
    // zero-interleaved input (OneDNNConvBackward.cpp).
    if (choice == "onednn" && succeeded(transposedConvToScatter(rw, op)))
      continue;
    if (choice == "direct" || choice == "onednn") {
      op->setAttr(kConvImplAttr, StringAttr::get(op->getContext(), choice));
      if (choice == "onednn" && padInKernel && elem.isF32())
        markPadForConv(op.getDpsInputs()[0]);
      if (choice == "onednn" && elem.isF32()) {
        markTransposesForConv(op);
        markBiasForConv(op);
        foldClampIntoConv(rw, op);
        foldInputClampIntoConv(rw, op);
        markOutputTransposeForConv(op);
      }
      continue;
    }
    if (failed(convToIm2colMatmul(rw, op)))
      op->setAttr(kConvImplAttr, StringAttr::get(op->getContext(), "direct"));
  }
}

void kiln::cpu::privatizeConvInits(ModuleOp module) {
  module.walk([&](linalg::LinalgOp conv) {
    auto impl = conv->getAttrOfType<StringAttr>(kConvImplAttr);
    if (!impl || impl.getValue() != "onednn" ||
        !conv.hasPureTensorSemantics() || conv.getNumDpsInits() != 1)
      return;
    Value init = conv.getDpsInits()[0];
    if (auto e = init.getDefiningOp<tensor::ExpandShapeOp>())
      init = e.getSrc();
    auto def = init.getDefiningOp<linalg::LinalgOp>();
    if (!def || def.getNumDpsInits() != 1 ||
        !(isa<linalg::FillOp>(def.getOperation()) ||
          def->hasAttr(kConvBiasAttr)))
      return;
    // (A grouped conv's zero fill writes the 5-D expand_shape of a 4-D
    // tensor.empty.)
    Value dest = def.getDpsInits()[0];
    auto expand = dest.getDefiningOp<tensor::ExpandShapeOp>();
    auto empty = (expand ? expand.getSrc() : dest).getDefiningOp<tensor::EmptyOp>();
    if (!empty)
      return;
    // (Neither op reads its init: a fill, or the broadcast yielding its
    // input.)
    OpBuilder b(def);
    Value fresh = freshTensor(b, empty.getLoc(), empty.getMixedSizes(),
                              empty.getType().getElementType());
    if (expand)
      fresh = tensor::ExpandShapeOp::create(
          b, expand.getLoc(), expand.getResultType(), fresh,
          expand.getReassociationIndices(), expand.getMixedOutputShape());
    def.getDpsInitsMutable()[0].set(fresh);
  });
}
