//===- PoolWindows.cpp - Pooling as one pointwise op over window slices ---===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. A
// linalg.pooling_nchw_max / pooling_nchw_sum on tensors with a static
// KH x KW window (at most kMaxWindow elements) becomes one all-parallel
// linalg.generic over the output whose inputs are the KH*KW strided window
// slices of the (already padded) input:
//
//   s[kh, kw] = tensor.extract_slice %x[0, 0, kh*dh, kw*dw] [N, C, OH, OW]
//                                       [1, 1, sh, sw]
//   out[n, c, oh, ow] = init (+)max s[0, 0] (+)max s[0, 1] ... s[KH-1, KW-1]
//
// in the pooling op's own order (kh outer, kw inner) with its own combiner
// (cloned from its body), so results are bit-identical. kiln-cpu-tile-
// vectorize then vectorizes it along OW like any pointwise op; the pooling
// op itself has its reduction dims (kh, kw) innermost, so it was tiled to
// one output element per step with a masked 64-lane vector for a 3-element
// window row (max_pool2d 3x3 s2 on 8x64x112x112: 170-190 ms, see
// docs/codegen.md "Pooling").
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

constexpr int64_t kMaxWindow = 64;

/// The combiner of a pooling body `(in, window, out) -> op(out, in)` (or
/// `op(in, out)`): that one op, or null.
Operation *combiner(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || body->getOperations().size() != 2)
    return nullptr;
  Operation *c = &body->front();
  if (c->getNumOperands() != 2 || c->getNumResults() != 1 ||
      c->getNumRegions() != 0)
    return nullptr;
  Value in = body->getArgument(0), out = body->getArgument(2);
  bool ok = (c->getOperand(0) == out && c->getOperand(1) == in) ||
            (c->getOperand(0) == in && c->getOperand(1) == out);
  return ok ? c : nullptr;
}

bool isTranspose(Operation *op, ArrayRef<int64_t> perm) {
  auto t = dyn_cast_or_null<linalg::TransposeOp>(op);
  return t && t.getPermutation() == perm && t->getNumResults() == 1;
}

/// A pool whose input and output are channels-last twins
/// (kiln-cpu-conv-channels-last; kiln-cpu-outline-kernels puts both
/// permutes into the pool's kernel): `src` is the [N, H, W, C] tensor whose
/// linalg.transpose [0, 3, 1, 2] is the pool's input (directly, or through
/// kiln-cpu-pad-to-copy's fill + copy + insert_slice of its padding: `pad`
/// (pt, pl, pb, pr) with `padValue`), and `out` the linalg.transpose
/// [0, 2, 3, 1] that alone reads the pool's result. `initValue` is the
/// value the pool's init is filled with.
struct ChannelsLastPool {
  Value src, padValue, initValue;
  int64_t pad[4] = {0, 0, 0, 0};
  linalg::TransposeOp out;
};

std::optional<ChannelsLastPool> matchChannelsLast(linalg::LinalgOp op) {
  ChannelsLastPool m;
  for (Operation *u : op->getResult(0).getUsers()) {
    if (isa<tensor::DimOp>(u))
      continue;
    if (m.out || !isTranspose(u, {0, 2, 3, 1}))
      return std::nullopt;
    m.out = cast<linalg::TransposeOp>(u);
  }
  auto initFill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!m.out || !initFill)
    return std::nullopt;
  m.initValue = initFill.getDpsInputs()[0];
  Value x = op.getDpsInputs()[0];
  if (auto ins = x.getDefiningOp<tensor::InsertSliceOp>()) {
    auto copy = ins.getSource().getDefiningOp<linalg::CopyOp>();
    auto fill = ins.getDest().getDefiningOp<linalg::FillOp>();
    auto padded = dyn_cast<RankedTensorType>(ins.getDest().getType());
    auto inner = dyn_cast<RankedTensorType>(ins.getSource().getType());
    if (!copy || !fill || !padded || !inner || !padded.hasStaticShape() ||
        !inner.hasStaticShape() || !ins.hasUnitStride())
      return std::nullopt;
    ArrayRef<int64_t> off = ins.getStaticOffsets();
    if (llvm::any_of(off, ShapedType::isDynamic) || off[0] != 0 || off[1] != 0)
      return std::nullopt;
    m.pad[0] = off[2];
    m.pad[1] = off[3];
    m.pad[2] = padded.getDimSize(2) - off[2] - inner.getDimSize(2);
    m.pad[3] = padded.getDimSize(3) - off[3] - inner.getDimSize(3);
    m.padValue = fill.getDpsInputs()[0];
    x = copy.getDpsInputs()[0];
  }
  Operation *t = x.getDefiningOp();
  if (!isTranspose(t, {0, 3, 1, 2}))
    return std::nullopt;
  m.src = cast<linalg::TransposeOp>(t).getInput();
  return m;
}

LogicalResult rewritePool(RewriterBase &rw, linalg::LinalgOp op) {
  DenseIntElementsAttr stridesAttr, dilationsAttr;
  if (auto p = dyn_cast<linalg::PoolingNchwMaxOp>(op.getOperation())) {
    stridesAttr = p.getStrides();
    dilationsAttr = p.getDilations();
  } else if (auto p = dyn_cast<linalg::PoolingNchwSumOp>(op.getOperation())) {
    stridesAttr = p.getStrides();
    dilationsAttr = p.getDilations();
  } else {
    return failure();
  }
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1)
    return failure();
  Operation *comb = combiner(op);
  if (!comb)
    return failure();
  Value x = op.getDpsInputs()[0], init = op.getDpsInits()[0];
  auto window = dyn_cast<ShapedType>(op.getDpsInputs()[1].getType());
  auto initType = dyn_cast<RankedTensorType>(init.getType());
  if (!window || !window.hasStaticShape() || window.getRank() != 2 ||
      !initType || initType.getRank() != 4)
    return failure();
  int64_t kh = window.getDimSize(0), kw = window.getDimSize(1);
  if (kh * kw < 1 || kh * kw > kMaxWindow)
    return failure();
  // An empty input or output (a zero-size batch) has no windows to slice:
  // the pool stays (its loops run zero times).
  auto inType = dyn_cast<RankedTensorType>(x.getType());
  if (!inType || llvm::is_contained(inType.getShape(), 0) ||
      llvm::is_contained(initType.getShape(), 0))
    return failure();
  auto st = llvm::to_vector(stridesAttr.getValues<int64_t>());
  auto dl = llvm::to_vector(dilationsAttr.getValues<int64_t>());
  Location loc = op.getLoc();
  rw.setInsertionPoint(op);
  // Channels-last twins in and out: the same windows over the [N, H, W, C]
  // source (padded again in that layout), the result written [N, OH, OW, C]
  // in place of the output transpose; both transposes and the NCHW padding
  // go (nothing else reads them). The window loops then run along C, which
  // is contiguous.
  std::optional<ChannelsLastPool> cl = matchChannelsLast(op);
  tensor::PadOp nhwcPad;
  // Dims of the window slices in the layout pooled: (H, W) and the order
  // of [N, C, H, W]'s dims in it.
  unsigned hDim = 2, wDim = 3;
  if (cl) {
    x = cl->src;
    if (llvm::any_of(cl->pad, [](int64_t p) { return p != 0; })) {
      SmallVector<OpFoldResult> lo = {rw.getIndexAttr(0),
                                      rw.getIndexAttr(cl->pad[0]),
                                      rw.getIndexAttr(cl->pad[1]),
                                      rw.getIndexAttr(0)};
      SmallVector<OpFoldResult> hi = {rw.getIndexAttr(0),
                                      rw.getIndexAttr(cl->pad[2]),
                                      rw.getIndexAttr(cl->pad[3]),
                                      rw.getIndexAttr(0)};
      nhwcPad = tensor::PadOp::create(rw, loc, Type(), x, lo, hi,
                                      cl->padValue);
      x = nhwcPad.getResult();
    }
    SmallVector<OpFoldResult> outSizes =
        tensor::getMixedSizes(rw, loc, cl->out.getInit());
    auto outType = cast<RankedTensorType>(cl->out.getInit().getType());
    Value empty = tensor::EmptyOp::create(rw, loc, outSizes,
                                          outType.getElementType());
    init = linalg::FillOp::create(rw, loc, cl->initValue, empty)
               .getResult(0);
    initType = cast<RankedTensorType>(init.getType());
    hDim = 1;
    wDim = 2;
  }
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, init);
  SmallVector<OpFoldResult> strides(4, rw.getIndexAttr(1));
  strides[hDim] = rw.getIndexAttr(st[0]);
  strides[wDim] = rw.getIndexAttr(st[1]);
  SmallVector<Value> slices;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      SmallVector<OpFoldResult> offsets(4, rw.getIndexAttr(0));
      offsets[hDim] = rw.getIndexAttr(i * dl[0]);
      offsets[wDim] = rw.getIndexAttr(j * dl[1]);
      auto sliceType = RankedTensorType::get(
          initType.getShape(),
          cast<ShapedType>(x.getType()).getElementType());
      slices.push_back(tensor::ExtractSliceOp::create(
          rw, loc, sliceType, x, offsets, sizes, strides));
    }
  MLIRContext *ctx = op->getContext();
  SmallVector<AffineMap> maps(slices.size() + 1,
                              AffineMap::getMultiDimIdentityMap(4, ctx));
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  bool outFirst = comb->getOperand(0) == op.getBlock()->getArgument(2);
  auto generic = linalg::GenericOp::create(
      rw, loc, TypeRange{initType}, slices, ValueRange{init}, maps, iters,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value acc = args.back();
        for (Value s : args.drop_back()) {
          IRMapping m;
          m.map(comb->getOperand(0), outFirst ? acc : s);
          m.map(comb->getOperand(1), outFirst ? s : acc);
          acc = b.clone(*comb, m)->getResult(0);
        }
        linalg::YieldOp::create(b, l, acc);
      });
  if (cl) {
    rw.replaceOp(cl->out, generic->getResults());
    // (The NCHW result's `?` sizes are its init's.)
    for (Operation *u : llvm::make_early_inc_range(op->getResult(0).getUsers()))
      rw.modifyOpInPlace(u, [&] {
        cast<tensor::DimOp>(u).getSourceMutable().assign(op.getDpsInits()[0]);
      });
    rw.eraseOp(op);
    if (nhwcPad)
      (void)kiln::cpu::padAsFillAndCopy(rw, nhwcPad);
    return success();
  }
  // Strided reads along the width: scalar loops, for LLVM's vectorizer.
  if (st[1] != 1)
    generic->setAttr(kiln::cpu::kScalarLoopsAttr, rw.getUnitAttr());
  rw.replaceOp(op, generic->getResults());
  return success();
}

} // namespace

unsigned kiln::cpu::poolsAsWindowSlices(Operation *root) {
  SmallVector<linalg::LinalgOp> pools;
  root->walk([&](linalg::LinalgOp op) {
    if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(
            op.getOperation()))
      pools.push_back(op);
  });
  IRRewriter rw(root->getContext());
  unsigned n = 0;
  for (linalg::LinalgOp op : pools)
    n += succeeded(rewritePool(rw, op));
  return n;
}
