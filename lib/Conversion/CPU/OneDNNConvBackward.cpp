//===- OneDNNConvBackward.cpp - Transposed convs whole, to oneDNN ---------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. kt.conv_transpose2d
// (the input gradient of conv2d) lowers to a stride-1 conv of the
// zero-interleaved, padded input with the flipped weight (KTToLinalg's
// ConvTranspose2dLowering): stride^2 the multiply-adds, plus the
// interleave, pad and flip copies. Where that conv goes to oneDNN, two
// steps run the transposed conv whole instead, on x and w as they are:
//
// * on tensors (kiln-cpu-conv-im2col, transposedConvToScatter): the marked
//   conv (kiln.conv_transpose) becomes its scatter form, a linalg.generic
//     full[n, co, p*sh + i*dh, q*sw + j*dw] += x[n, ci, p, q] * w[ci, co, i, j]
//   over a zero-filled buffer of every position the windows reach, cropped
//   by the padding (an extract_slice). The generic is correct linalg on
//   its own (convert-linalg-to-loops runs it as loops) and survives
//   bufferization with x and w untouched;
// * on buffers (kiln-cpu-conv-to-onednn, lowerTransposedConvsToOneDNN):
//   the generic becomes a call of kiln_onednn_conv_transpose2d_f32
//   (runtime/onednn/KilnOneDNN.cpp), oneDNN's convolution_backward_data
//   primitive with x as diff_dst, w as the weights and the buffer as
//   diff_src; a zero fill of the buffer right before it is dropped. Where
//   the buffer is only read through the crop (a subview at the padding's
//   offsets copied into a buffer of its own, what bufferization makes of
//   the extract_slice when the kernel returns it), the call is
//   kiln_onednn_conv_transpose2d_crop_f32 on that buffer, oneDNN takes
//   the crop as its padding, and the full buffer, the subview and the copy
//   are erased (one write of the output instead of a write, a read and a
//   write; memref.copy of a strided view runs on one thread).
//
// A depthwise transposed conv (one input channel per group: a depthwise
// conv's input gradient) takes the same two steps: its grouped stride-1
// conv becomes the scatter generic full[n, g*F + f, ...] += x[n, g, p, q] *
// w[g, f, i, j] (the scatter attribute's fifth entry the groups), then a
// call of kiln_onednn_dw_conv_transpose2d_f32, libkiln_onednn's own loops
// (oneDNN 2.6 has no fast plain-layout depthwise backward-data), always
// with the crop's offsets (0, 0 where the buffer is not cropped).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  auto cst = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  return f && f.getValue().isZero();
}

/// The crop of a transposed conv's full buffer `y` (written by `gen`): a
/// static-offset unit-stride 4-D subview of `y` keeping its batch and
/// channels, whose only user is a memref.copy into `dst`, a fresh
/// identity-layout memref.alloc of the block; between `gen` and the copy
/// only the subview, that alloc and side-effect-free ops; `y` read by
/// nothing else (deallocs aside).
struct Crop {
  memref::SubViewOp view;
  memref::CopyOp copy;
  memref::AllocOp dst;
  int64_t pt, pl;
};

std::optional<Crop> matchCrop(Value y, Operation *gen) {
  auto alloc = y.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != gen->getBlock())
    return std::nullopt;
  Crop c{};
  for (Operation *user : alloc->getUsers()) {
    if (user == gen || isa<memref::DeallocOp>(user))
      continue;
    auto sv = dyn_cast<memref::SubViewOp>(user);
    if (!sv || c.view || !sv->hasOneUse())
      return std::nullopt;
    c.view = sv;
  }
  if (!c.view)
    return std::nullopt;
  c.copy = dyn_cast<memref::CopyOp>(*c.view->getUsers().begin());
  if (!c.copy || c.copy.getSource() != c.view.getResult())
    return std::nullopt;
  c.dst = c.copy.getTarget().getDefiningOp<memref::AllocOp>();
  if (!c.dst || c.dst->getBlock() != gen->getBlock() ||
      !cast<MemRefType>(c.dst.getType()).getLayout().isIdentity() ||
      !c.dst.getDynamicSizes().empty())
    return std::nullopt;
  for (Operation *op = gen->getNextNode(); op && op != c.copy;
       op = op->getNextNode())
    if (op != c.view && op != c.dst && !isMemoryEffectFree(op))
      return std::nullopt;
  if (!gen->isBeforeInBlock(c.copy))
    return std::nullopt;
  ArrayRef<int64_t> off = c.view.getStaticOffsets(),
                    steps = c.view.getStaticStrides();
  if (off.size() != 4 || !c.view.getOffsets().empty() ||
      !c.view.getStrides().empty() || off[0] != 0 || off[1] != 0 ||
      llvm::any_of(steps, [](int64_t s) { return s != 1; }))
    return std::nullopt;
  auto yt = cast<MemRefType>(y.getType());
  auto vt = cast<MemRefType>(c.view.getType());
  if (!yt.hasStaticShape() || !vt.hasStaticShape() ||
      vt.getDimSize(0) != yt.getDimSize(0) ||
      vt.getDimSize(1) != yt.getDimSize(1) ||
      cast<MemRefType>(c.dst.getType()).getShape() != vt.getShape())
    return std::nullopt;
  c.pt = off[2];
  c.pl = off[3];
  return c;
}

} // namespace

FailureOr<Operation *>
kiln::cpu::transposedConvToScatter(RewriterBase &rw, linalg::LinalgOp op) {
  auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
  auto gconv = dyn_cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
  auto params = op->getAttrOfType<DenseI64ArrayAttr>(kConvTransposeAttr);
  if ((!conv && !gconv) || !params || params.size() != 6 ||
      !op.hasPureTensorSemantics())
    return failure();
  auto cst = conv ? conv.getStrides().getValues<int64_t>()
                  : gconv.getStrides().getValues<int64_t>();
  auto cdl = conv ? conv.getDilations().getValues<int64_t>()
                  : gconv.getDilations().getValues<int64_t>();
  if (cst[0] != 1 || cst[1] != 1)
    return failure();
  int64_t sh = params[0], sw = params[1], ph = params[2], pw = params[3];
  int64_t dh = cdl[0], dw = cdl[1];
  Value z = op.getDpsInputs()[0], wf = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  // Grouped (emitConv's split channels): only depthwise, one input channel
  // per group ([N, G, 1, H, W] * [G, F, 1, kh, kw]); traced back through
  // the channel splits.
  int64_t groups = 1;
  if (gconv) {
    auto wgt = cast<RankedTensorType>(wf.getType());
    auto zs = z.getDefiningOp<tensor::ExpandShapeOp>();
    auto ws = wf.getDefiningOp<tensor::ExpandShapeOp>();
    if (!zs || !ws || wgt.getRank() != 5 || wgt.isDynamicDim(0) ||
        wgt.getDimSize(2) != 1)
      return failure();
    groups = wgt.getDimSize(0);
    z = zs.getSrc();
    wf = ws.getSrc();
    if (auto is = init.getDefiningOp<tensor::ExpandShapeOp>())
      if (!isZeroFill(init))
        init = is.getSrc();
  }
  if (!isZeroFill(init))
    return failure(); // a bias in the init: the stride-1 conv stays
  // The interleaved input: insert_slice(x into zeros) [cropped]; at stride
  // 1 without padding canonicalization folds the insert_slice away (z is x,
  // or a crop of x).
  if (auto ex = z.getDefiningOp<tensor::ExtractSliceOp>())
    z = ex.getSource();
  Value x = z;
  if (auto ins = z.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!isZeroFill(ins.getDest()))
      return failure();
    x = ins.getSource();
  } else if (sh != 1 || sw != 1) {
    return failure();
  }
  // The flipped weight: a generic without inputs reading w.
  auto flip = wf.getDefiningOp<linalg::GenericOp>();
  if (!flip || flip.getNumDpsInputs() != 0)
    return failure();
  Value w;
  flip.getBody()->walk([&](tensor::ExtractOp e) { w = e.getTensor(); });
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto wt = w ? dyn_cast<RankedTensorType>(w.getType()) : RankedTensorType();
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rr = gconv ? 5 : 4; // the result's rank: [N, G, F, H, W] grouped
  if (!xt || !wt || xt.getRank() != 4 || wt.getRank() != 4 ||
      rt.getRank() != rr || !xt.getElementType().isF32() ||
      !wt.getElementType().isF32() || !rt.getElementType().isF32() ||
      !wt.hasStaticShape())
    return failure();
  for (int d = 1; d < 4; ++d)
    if (xt.isDynamicDim(d))
      return failure();
  for (int d = 1; d < rr; ++d)
    if (rt.isDynamicDim(d))
      return failure();
  int64_t oh = xt.getDimSize(2), ow = xt.getDimSize(3);
  // Output channels: co (ungrouped), groups * F (depthwise, F = w's dim 1).
  int64_t co = wt.getDimSize(1) * groups, kh = wt.getDimSize(2),
          kw = wt.getDimSize(3);
  int64_t h = rt.getDimSize(rr - 2), wd = rt.getDimSize(rr - 1);
  if (wt.getDimSize(0) != xt.getDimSize(1) || oh < 1 || ow < 1 || h < 1 ||
      wd < 1)
    return failure();
  if (gconv ? (wt.getDimSize(0) != groups || rt.getDimSize(1) != groups ||
               rt.getDimSize(2) != wt.getDimSize(1))
            : rt.getDimSize(1) != co)
    return failure();
  // The transposed conv's output size from what was traced back: anything
  // else means x is not its input.
  if (h != (oh - 1) * sh - 2 * ph + dh * (kh - 1) + params[4] + 1 ||
      wd != (ow - 1) * sw - 2 * pw + dw * (kw - 1) + params[5] + 1)
    return failure();
  // Every position a window reaches, and the crop past it (output_padding
  // beyond the padding: rows no window reaches, zeros).
  int64_t fh = (oh - 1) * sh + dh * (kh - 1) + 1;
  int64_t fw = (ow - 1) * sw + dw * (kw - 1) + 1;
  int64_t ah = std::max(fh, ph + h), aw = std::max(fw, pw + wd);
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  rw.setInsertionPoint(op);
  OpFoldResult n = xt.isDynamicDim(0)
                       ? OpFoldResult(tensor::DimOp::create(rw, loc, x, 0)
                                          .getResult())
                       : OpFoldResult(rw.getIndexAttr(xt.getDimSize(0)));
  SmallVector<OpFoldResult> fullSizes = {n, rw.getIndexAttr(co),
                                         rw.getIndexAttr(ah),
                                         rw.getIndexAttr(aw)};
  Value empty = tensor::EmptyOp::create(rw, loc, fullSizes, rw.getF32Type());
  Value zero = arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(0.0f));
  Value full = linalg::FillOp::create(rw, loc, ValueRange{zero},
                                      ValueRange{empty})
                   .getResult(0);
  // Loops (n, co, ci, p, q, i, j); depthwise (n, g, f, p, q, i, j), output
  // channel g * F + f.
  AffineExpr dn, dco, dci, dp, dq, di, dj;
  bindDims(ctx, dn, dco, dci, dp, dq, di, dj);
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0, {dn, dci, dp, dq}, ctx),
      AffineMap::get(7, 0, {dci, dco, di, dj}, ctx),
      AffineMap::get(7, 0, {dn, dco, dp * sh + di * dh, dq * sw + dj * dw},
                     ctx)};
  SmallVector<utils::IteratorType> iters(7, utils::IteratorType::reduction);
  iters[0] = iters[1] = utils::IteratorType::parallel;
  if (gconv) {
    int64_t f = wt.getDimSize(1);
    maps = {AffineMap::get(7, 0, {dn, dco, dp, dq}, ctx),
            AffineMap::get(7, 0, {dco, dci, di, dj}, ctx),
            AffineMap::get(
                7, 0,
                {dn, dco * f + dci, dp * sh + di * dh, dq * sw + dj * dw},
                ctx)};
    iters[2] = utils::IteratorType::parallel;
  }
  auto gen = linalg::GenericOp::create(
      rw, loc, TypeRange{full.getType()}, ValueRange{x, w}, ValueRange{full},
      maps, iters, [](OpBuilder &b, Location l, ValueRange a) {
        Value m = arith::MulFOp::create(b, l, a[0], a[1]);
        linalg::YieldOp::create(b, l,
                                ValueRange{arith::AddFOp::create(b, l, a[2], m)
                                               .getResult()});
      });
  gen->setAttr(kConvImplAttr, StringAttr::get(ctx, "onednn"));
  SmallVector<int64_t> scatterParams = {sh, sw, dh, dw};
  if (gconv)
    scatterParams.push_back(groups);
  gen->setAttr(kConvTransposeScatterAttr,
               rw.getDenseI64ArrayAttr(scatterParams));
  SmallVector<OpFoldResult> offsets = {rw.getIndexAttr(0), rw.getIndexAttr(0),
                                       rw.getIndexAttr(ph),
                                       rw.getIndexAttr(pw)};
  SmallVector<OpFoldResult> sizes = {n, rw.getIndexAttr(co),
                                     rw.getIndexAttr(h), rw.getIndexAttr(wd)};
  SmallVector<OpFoldResult> ones(4, rw.getIndexAttr(1));
  Value r = tensor::ExtractSliceOp::create(rw, loc, gen.getResult(0), offsets,
                                           sizes, ones);
  if (gconv) {
    // Back to the grouped conv's [N, G, F, H, W].
    SmallVector<OpFoldResult> split = {n, rw.getIndexAttr(groups),
                                       rw.getIndexAttr(co / groups),
                                       rw.getIndexAttr(h), rw.getIndexAttr(wd)};
    SmallVector<int64_t> shape = {xt.getDimSize(0), groups, co / groups, h,
                                  wd};
    r = tensor::ExpandShapeOp::create(
        rw, loc, RankedTensorType::get(shape, rw.getF32Type()), r,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}, split);
  }
  if (r.getType() != rt)
    r = tensor::CastOp::create(rw, loc, rt, r);
  rw.replaceOp(op, r);
  return gen.getOperation();
}

unsigned kiln::cpu::lowerTransposedConvsToOneDNN(ModuleOp module,
                                                 unsigned threads) {
  SmallVector<linalg::GenericOp> ops;
  module.walk([&](linalg::GenericOp op) {
    auto impl = op->getAttrOfType<StringAttr>(kConvImplAttr);
    auto p = op->getAttrOfType<DenseI64ArrayAttr>(kConvTransposeScatterAttr);
    if (impl && impl.getValue() == "onednn" && p &&
        (p.size() == 4 || p.size() == 5) &&
        op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2 &&
        op.getNumDpsInits() == 1 &&
        getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
      ops.push_back(op);
  });
  if (ops.empty())
    return 0;
  MLIRContext *ctx = module.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> argTypes(3, ptrTy);
  argTypes.append(13 + 12 + 2, i64);
  SmallVector<Type> cropArgTypes(3, ptrTy);
  cropArgTypes.append(13 + 12 + 2 + 2, i64);
  auto declare = [&](StringRef name, ArrayRef<Type> types) {
    if (module.lookupSymbol(name))
      return;
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(mb, module.getLoc(), name,
                                     FunctionType::get(ctx, types, {}));
    decl.setPrivate();
  };
  for (linalg::GenericOp op : ops) {
    auto p = op->getAttrOfType<DenseI64ArrayAttr>(kConvTransposeScatterAttr);
    Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
          y = op.getDpsInits()[0];
    Location loc = op.getLoc();
    bool accumulate = true;
    if (linalg::FillOp fill = zeroFillBefore(op, y)) {
      fill->erase();
      accumulate = false;
    }
    // (An accumulating call adds into the full buffer: no crop.)
    std::optional<Crop> crop =
        accumulate ? std::nullopt : matchCrop(y, op.getOperation());
    if (crop) {
      crop->dst->moveBefore(op);
      y = crop->dst.getResult();
    }
    OpBuilder b(op);
    auto toI64 = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, i64, v).getResult();
    };
    auto cst = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
    };
    struct Desc {
      Value ptr;
      SmallVector<Value> sizes, strides;
    };
    auto desc = [&](Value m) {
      auto md = memref::ExtractStridedMetadataOp::create(b, loc, m);
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
      Value off = arith::MulIOp::create(
          b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, 4));
      Desc d;
      d.ptr = LLVM::IntToPtrOp::create(
          b, loc, ptrTy, toI64(arith::AddIOp::create(b, loc, base, off)));
      for (auto [sz, st] : llvm::zip(md.getSizes(), md.getStrides())) {
        d.sizes.push_back(toI64(sz));
        d.strides.push_back(toI64(st));
      }
      return d;
    };
    Desc dx = desc(x), dw = desc(w), dy = desc(y);
    bool depthwise = p.size() == 5;
    // (Depthwise: x [n, g, oh, ow], w [g, f, kh, kw], y [n, g*f, h, wd]:
    // the same positions, w's dim 1 the multiplier.)
    SmallVector<Value> args = {dx.ptr, dw.ptr, dy.ptr,
                               // n, ci, oh, ow
                               dx.sizes[0], dx.sizes[1], dx.sizes[2],
                               dx.sizes[3],
                               // co, kh, kw
                               dw.sizes[1], dw.sizes[2], dw.sizes[3],
                               // h, w of the buffer
                               dy.sizes[2], dy.sizes[3],
                               cst(p[0]), cst(p[1]), cst(p[2]), cst(p[3])};
    args.append(dx.strides);
    args.append(dw.strides);
    args.append(dy.strides);
    if (crop)
      args.append({cst(crop->pt), cst(crop->pl)});
    else if (depthwise)
      args.append({cst(0), cst(0)});
    args.push_back(cst(accumulate ? 1 : 0));
    args.push_back(cst(threads));
    StringRef callee = depthwise ? kOneDNNDwConvTransposeSymbol
                       : crop    ? kOneDNNConvTransposeCropSymbol
                                 : kOneDNNConvTransposeSymbol;
    declare(callee, crop || depthwise ? ArrayRef<Type>(cropArgTypes)
                                      : ArrayRef<Type>(argTypes));
    auto call = func::CallOp::create(b, loc, callee, TypeRange{}, args);
    call->setAttr(kConvImplAttr, StringAttr::get(ctx, "onednn"));
    Value full = op.getDpsInits()[0];
    op->erase();
    if (crop) {
      // The copy's target holds the crop already; nothing reads the full
      // buffer any more.
      crop->copy->erase();
      crop->view->erase();
      Operation *alloc = full.getDefiningOp();
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        user->erase(); // its deallocs
      alloc->erase();
    }
  }
  return ops.size();
}
