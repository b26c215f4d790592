//===- OneDNNConv.cpp - Convolutions as oneDNN calls (after bufferization) ===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. A bufferized
// linalg.conv_2d_nchw_fchw / conv_2d_ngchw_gfchw marked
// kiln.conv_impl = "onednn" (kiln-cpu-conv-im2col) becomes a call of
// libkiln_onednn's kiln_onednn_conv2d_f32 (runtime/onednn/KilnOneDNN.cpp)
// on its operands' aligned pointers plus offsets, sizes and strides. The
// linalg conv accumulates into its init; when a zero linalg.fill of that
// buffer comes right before it (only side-effect-free ops in between), the
// fill is dropped and the call overwrites instead of accumulating.
//
// In-kernel padding: where the conv's input is a fresh buffer that only a
// zero fill and a copy of another buffer into its interior write (both
// marked kiln.conv_pad by kiln-cpu-conv-im2col), the call is
// kiln_onednn_conv2d_pad_f32 on the copy's source plus the four paddings,
// and the fill, the copy and the buffer are erased: one pass over the
// activations instead of three (fill, copy, conv).
//
// Bias: where the init is the broadcast of a 1-D bias over the channels
// (a linalg.generic marked kiln.conv_bias by kiln-cpu-conv-im2col), the
// broadcast is dropped and the call is kiln_onednn_conv2d_bias_f32 with the
// bias (and the paddings, 0 without in-kernel padding): oneDNN adds it in
// its epilogue, the depthwise loops start from it; the output is written
// once instead of broadcast, read back and written again.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/rt/OneDNNLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <cmath>

using namespace mlir;

linalg::FillOp kiln::cpu::zeroFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getDpsInits()[0] != buffer)
        return nullptr;
      auto cst = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
      auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
      if (f && f.getValue().isZero())
        return fill;
      return nullptr;
    }
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

namespace {

/// The bias broadcast (kConvBiasAttr, marked by kiln-cpu-conv-im2col) that
/// writes conv output `y` (the buffer itself or the source of its grouped
/// expand_shape) before `conv`, with only side-effect-free ops and the
/// marked padding fill/copy of the input (another buffer) in between.
linalg::GenericOp biasBroadcastBefore(Operation *conv, Value y) {
  Value buffer = y;
  if (auto e = y.getDefiningOp<memref::ExpandShapeOp>())
    buffer = e.getSrc();
  for (Operation *prev = conv->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    if (auto gen = dyn_cast<linalg::GenericOp>(prev);
        gen && gen->hasAttr(kiln::cpu::kConvBiasAttr)) {
      if (gen.hasPureBufferSemantics() && gen.getDpsInits()[0] == buffer)
        return gen;
      return nullptr;
    }
    if (!isMemoryEffectFree(prev) && !prev->hasAttr(kiln::cpu::kConvPadAttr))
      return nullptr;
  }
  return nullptr;
}

/// The padded-input pattern described in the file comment, for conv input
/// `x` (the buffer itself or its grouped expand_shape).
struct InKernelPad {
  memref::AllocOp alloc;
  memref::ExpandShapeOp expand; // grouped form (else null)
  linalg::FillOp fill;
  memref::SubViewOp interior;
  linalg::CopyOp copy;
  SmallVector<memref::DimOp> dims; // sizes read from the padded buffer
  SmallVector<memref::CopyOp> selfCopies; // copies of the interior onto itself
  Value src;                  // the unpadded input (4-D NCHW)
  int64_t pt, pl, pb, pr;     // zero padding of H and W
};

/// The buffer `v` is a view of (through view-like ops: subview,
/// expand/collapse_shape, casts).
Value rootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether an op strictly between `from` and `to` (one block) but `except`
/// may write a view of `buffer` (or, with `reads`, read one): ops with
/// unknown effects, or an effect whose target is unknown or has `buffer`'s
/// root, count.
bool touchedBetween(Value buffer, Operation *from, Operation *to, bool reads,
                    Operation *except = nullptr) {
  Value root = rootBuffer(buffer);
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (op == except || isMemoryEffectFree(op))
      continue;
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return true;
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects) {
      if (!reads &&
          !isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      if (!e.getValue() || rootBuffer(e.getValue()) == root)
        return true;
    }
  }
  return false;
}

bool writtenBetween(Value buffer, Operation *from, Operation *to) {
  return touchedBetween(buffer, from, to, /*reads=*/false);
}

std::optional<InKernelPad> matchInKernelPad(Value x, Operation *conv) {
  InKernelPad m{};
  Value base = x;
  if (auto e = x.getDefiningOp<memref::ExpandShapeOp>()) {
    if (!e->hasOneUse())
      return std::nullopt;
    auto et = cast<MemRefType>(e.getType());
    if (et.isDynamicDim(1) || et.isDynamicDim(2))
      return std::nullopt;
    m.expand = e;
    base = e.getSrc();
  }
  m.alloc = base.getDefiningOp<memref::AllocOp>();
  if (!m.alloc || m.alloc->getBlock() != conv->getBlock())
    return std::nullopt;
  auto at = cast<MemRefType>(m.alloc.getType());
  if (at.getRank() != 4 || at.isDynamicDim(2) || at.isDynamicDim(3))
    return std::nullopt;
  for (Operation *user : m.alloc->getUsers()) {
    if (user == conv || user == m.expand.getOperation() ||
        isa<memref::DeallocOp>(user))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      if (m.fill || !fill->hasAttr(kiln::cpu::kConvPadAttr) ||
          fill.getDpsInits()[0] != base)
        return std::nullopt;
      m.fill = fill;
      continue;
    }
    if (auto dim = dyn_cast<memref::DimOp>(user)) {
      std::optional<int64_t> i = dim.getConstantIndex();
      if (!i)
        return std::nullopt;
      m.dims.push_back(dim);
      continue;
    }
    if (auto sv = dyn_cast<memref::SubViewOp>(user)) {
      for (Operation *su : sv->getUsers()) {
        // A copy of the interior onto itself (what bufferization may leave
        // of the tensor.insert_slice of the copied interior): a no-op.
        if (auto self = dyn_cast<memref::CopyOp>(su)) {
          auto a = self.getSource().getDefiningOp<memref::SubViewOp>();
          auto b = self.getTarget().getDefiningOp<memref::SubViewOp>();
          if (!a || !b || a.getSource() != base || b.getSource() != base ||
              a.getStaticOffsets() != b.getStaticOffsets() ||
              a.getStaticSizes() != b.getStaticSizes() ||
              a.getStaticStrides() != b.getStaticStrides() ||
              !a.getOffsets().empty() || !b.getOffsets().empty() ||
              !llvm::equal(a.getSizes(), b.getSizes()) ||
              !a.getStrides().empty() ||
              !b.getStrides().empty())
            return std::nullopt;
          if (!llvm::is_contained(m.selfCopies, self))
            m.selfCopies.push_back(self);
          continue;
        }
        auto copy = dyn_cast<linalg::CopyOp>(su);
        if (!copy || !copy->hasAttr(kiln::cpu::kConvPadAttr) ||
            copy.getDpsInits()[0] != sv.getResult() || m.interior)
          return std::nullopt;
        m.interior = sv;
        m.copy = copy;
      }
      continue;
    }
    return std::nullopt;
  }
  if (!m.fill || !m.copy)
    return std::nullopt;
  // Order: fill, then copy, then the conv, all in one block.
  if (m.fill->getBlock() != conv->getBlock() ||
      m.copy->getBlock() != conv->getBlock() ||
      !m.fill->isBeforeInBlock(m.copy) || !m.copy->isBeforeInBlock(conv))
    return std::nullopt;
  // The call reads the copy's source when the conv runs, not when the copy
  // did: nothing may write it in between (bufferization can reuse a buffer
  // for a later result once its last reader, the copy, has run: a chain of
  // convs in one kernel), and the conv must not write it itself.
  Value src = m.copy.getDpsInputs()[0];
  if (writtenBetween(src, m.copy, conv) ||
      rootBuffer(src) ==
          rootBuffer(cast<linalg::LinalgOp>(conv).getDpsInits()[0]))
    return std::nullopt;
  auto cst = m.fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  if (!f || !f.getValue().isPosZero())
    return std::nullopt;
  ArrayRef<int64_t> off = m.interior.getStaticOffsets(),
                    sizes = m.interior.getStaticSizes(),
                    steps = m.interior.getStaticStrides();
  for (int i = 0; i < 4; ++i)
    if (ShapedType::isDynamic(off[i]) || steps[i] != 1)
      return std::nullopt;
  if (off[0] != 0 || off[1] != 0 || ShapedType::isDynamic(sizes[2]) ||
      ShapedType::isDynamic(sizes[3]))
    return std::nullopt;
  // The interior covers the whole batch and channels (the subview's N, C
  // sizes are the buffer's; dynamic ones are the same SSA size).
  for (int i = 0; i < 2; ++i)
    if (!at.isDynamicDim(i) && sizes[i] != at.getDimSize(i))
      return std::nullopt;
  m.src = m.copy.getDpsInputs()[0];
  m.pt = off[2];
  m.pl = off[3];
  m.pb = at.getDimSize(2) - off[2] - sizes[2];
  m.pr = at.getDimSize(3) - off[3] - sizes[3];
  if (m.pb < 0 || m.pr < 0)
    return std::nullopt;
  return m;
}

/// A transpose that the call reads through permuted strides instead of
/// its copy: `alloc`, written only by the marked linalg.transpose `t`
/// (kConvViewAttr), read only by `reader` (the conv, or the copy that pads
/// the conv's input, which the conversion drops too).
struct TransposeView {
  linalg::TransposeOp t;
  memref::AllocOp alloc;
};

/// The TransposeView of buffer `v` (a conv operand or its padding copy's
/// source) read by `reader` for `conv`: `t` comes first in the block, and
/// nothing between it and the conv writes the transpose's source (the call
/// reads it when the conv runs), nor does the conv itself.
std::optional<TransposeView> matchTransposeView(Value v, Operation *reader,
                                                Operation *conv) {
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != conv->getBlock())
    return std::nullopt;
  linalg::TransposeOp t;
  for (Operation *user : alloc->getUsers()) {
    if (user == reader || isa<memref::DeallocOp>(user))
      continue;
    auto tr = dyn_cast<linalg::TransposeOp>(user);
    if (!tr || t || !tr->hasAttr(kiln::cpu::kConvViewAttr) ||
        tr.getInit() != v)
      return std::nullopt;
    t = tr;
  }
  if (!t || t->getBlock() != conv->getBlock() ||
      !t->isBeforeInBlock(reader) || !isa<MemRefType>(t.getInput().getType()))
    return std::nullopt;
  Value src = t.getInput();
  if (writtenBetween(src, t, conv) ||
      rootBuffer(src) ==
          rootBuffer(cast<linalg::LinalgOp>(conv).getDpsInits()[0]))
    return std::nullopt;
  return TransposeView{t, alloc};
}

/// A channels-last twin the call writes through permuted strides instead
/// of the conv's own output: `alloc` (the conv's output buffer) is read
/// only by the marked linalg.transpose `t` (kConvViewAttr) into `t`'s init.
struct OutputView {
  linalg::TransposeOp t;
  memref::AllocOp alloc;
  // A grouped conv's: collapse_shapes of its 5-D output view back to 4-D
  // (what the transpose may read before canonicalization), erased with it.
  SmallVector<Operation *> collapses;
};

/// The OutputView of conv `conv`'s output `y` (initialized by `init`, or
/// null): `y` is a memref.alloc of the conv's block whose users are the
/// conv, `init`, deallocs, memref.dims and one marked transpose after the
/// conv; nothing between the conv and the transpose touches the
/// transpose's output, which is none of the buffers the conv reads (the
/// call writes it when the conv runs). `reads` are the buffers the call
/// reads.
/// A grouped conv writes `y` through `expand` (its 5-D expand_shape, read
/// by nothing but the conv).
std::optional<OutputView> matchOutputView(Value y, Operation *conv,
                                          Operation *init,
                                          ArrayRef<Value> reads,
                                          Operation *expand = nullptr) {
  auto alloc = y.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != conv->getBlock())
    return std::nullopt;
  // y and the views of it that stand for it: a grouped conv's collapse of
  // its 5-D view back to y's type.
  SmallVector<Value> aliases = {y};
  SmallVector<Operation *> collapses;
  if (expand)
    for (Operation *u : expand->getUsers()) {
      if (u == conv || u == init)
        continue;
      auto c = dyn_cast<memref::CollapseShapeOp>(u);
      if (!c || c.getType() != y.getType())
        return std::nullopt;
      aliases.push_back(c.getResult());
      collapses.push_back(c);
    }
  linalg::TransposeOp t;
  for (Value v : aliases)
    for (Operation *user : v.getUsers()) {
      if (user == conv || user == init || (expand && user == expand) ||
          isa<memref::DeallocOp, memref::DimOp>(user))
        continue;
      auto tr = dyn_cast<linalg::TransposeOp>(user);
      if (!tr || t || !tr->hasAttr(kiln::cpu::kConvViewAttr) ||
          tr.getInput() != v)
        return std::nullopt;
      t = tr;
    }
  if (!t || t->getBlock() != conv->getBlock() || !conv->isBeforeInBlock(t) ||
      !isa<MemRefType>(t.getInit().getType()))
    return std::nullopt;
  Value out = t.getInit();
  // The output's own memref.alloc between the two moves before the conv's
  // init (where its sizes are known there; not between the init and the
  // conv, where zeroFillBefore would no longer see the fill).
  auto outAlloc = out.getDefiningOp<memref::AllocOp>();
  if (outAlloc && (outAlloc->getBlock() != conv->getBlock() ||
                   outAlloc->isBeforeInBlock(conv)))
    outAlloc = nullptr;
  if (outAlloc && (!init || init->getBlock() != conv->getBlock()))
    return std::nullopt;
  if (outAlloc)
    for (Value v : outAlloc->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->getBlock() == conv->getBlock() &&
          !def->isBeforeInBlock(init))
        return std::nullopt;
    }
  if (touchedBetween(out, conv, t, /*reads=*/true, outAlloc))
    return std::nullopt;
  for (Value r : reads)
    if (r && rootBuffer(r) == rootBuffer(out))
      return std::nullopt;
  if (outAlloc)
    outAlloc->moveBefore(init);
  return OutputView{t, alloc, collapses};
}

/// The buffers that go from one oneDNN conv straight into another (a chain
/// that kiln-cpu-outline-kernels put in one kernel) and that nothing else
/// reads or writes: a memref.alloc (4-D, identity layout) that ungrouped
/// conv A of `ops` overwrites (its zero fill or bias broadcast, which the
/// conversion drops, comes first) and whose only reader is ungrouped conv B
/// of `ops`, as its input or as the source of its in-kernel padding; other
/// users only deallocs and memref.dims. Both calls then describe the buffer
/// as channels-last (strides [C*H*W, 1, W*C, C]): no other code sees its
/// layout, and oneDNN, which computes in channels-last on this machine,
/// neither reorders A's output back to NCHW nor B's input into NHWC.
llvm::DenseSet<Value> channelsLastBuffers(ArrayRef<linalg::LinalgOp> ops) {
  llvm::DenseSet<Value> result;
  // Ungrouped, and blocked by libkiln_onednn's rule (static sizes): next to
  // a plain-layout conv a channels-last buffer would add reorders instead
  // of saving them (mobilenet_v2's 1x1 -> 1x1 pairs).
  auto ungrouped = [](Operation *op) {
    auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op);
    if (!conv)
      return false;
    auto w = cast<ShapedType>(conv.getDpsInputs()[1].getType());
    auto y = cast<ShapedType>(conv.getDpsInits()[0].getType());
    if (!w.hasStaticShape() || y.isDynamicDim(2) || y.isDynamicDim(3))
      return false;
    // A `?` batch counts as 1 (the positions of one image).
    int64_t n = y.isDynamicDim(0) ? 1 : y.getDimSize(0);
    return kiln::rt::oneDNNBlockedLayout(1, w.getDimSize(1), w.getDimSize(2),
                                         w.getDimSize(3),
                                         n * y.getDimSize(2) * y.getDimSize(3));
  };
  for (linalg::LinalgOp a : ops) {
    if (!ungrouped(a))
      continue;
    Value y = a.getDpsInits()[0];
    auto alloc = y.getDefiningOp<memref::AllocOp>();
    auto type = cast<MemRefType>(y.getType());
    if (!alloc || type.getRank() != 4 || !type.getLayout().isIdentity())
      continue;
    Operation *init = biasBroadcastBefore(a, y);
    if (!init)
      init = kiln::cpu::zeroFillBefore(a, y);
    if (!init)
      continue;
    Operation *reader = nullptr;
    bool ok = true;
    for (Operation *user : y.getUsers()) {
      if (user == a.getOperation() || user == init ||
          isa<memref::DeallocOp, memref::DimOp>(user))
        continue;
      Operation *conv = user;
      if (auto copy = dyn_cast<linalg::CopyOp>(user)) {
        // The padding's copy of y into conv B's padded input.
        conv = nullptr;
        for (linalg::LinalgOp b : ops) {
          std::optional<InKernelPad> pad =
              ungrouped(b) ? matchInKernelPad(b.getDpsInputs()[0], b)
                           : std::nullopt;
          if (pad && pad->copy == copy && pad->src == y)
            conv = b;
        }
      } else if (!llvm::any_of(ops, [&](linalg::LinalgOp b) {
                   return b.getOperation() == user && ungrouped(b) &&
                          b.getDpsInputs()[0] == y;
                 })) {
        conv = nullptr;
      }
      if (!conv || reader) {
        ok = false;
        break;
      }
      reader = conv;
    }
    if (ok && reader)
      result.insert(y);
  }
  return result;
}

} // namespace

bool kiln::cpu::oneDNNAvailable() {
#ifdef KILN_HAVE_ONEDNN
  return true;
#else
  return false;
#endif
}

unsigned kiln::cpu::lowerConvsToOneDNN(ModuleOp module, unsigned threads) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    auto impl = op->getAttrOfType<StringAttr>(kConvImplAttr);
    if (impl && impl.getValue() == "onednn" && op.hasPureBufferSemantics() &&
        isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(
            op.getOperation()) &&
        getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
      ops.push_back(op);
  });
  if (ops.empty())
    return 0;
  MLIRContext *ctx = module.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> argTypes(3, ptrTy);
  argTypes.append(31, i64);
  auto fnType = FunctionType::get(ctx, argTypes, {});
  SmallVector<Type> padArgTypes(3, ptrTy);
  padArgTypes.append(35, i64);
  auto padFnType = FunctionType::get(ctx, padArgTypes, {});
  // x, w, y, bias; 29 sizes and strides, 4 paddings, the bias stride,
  // threads.
  SmallVector<Type> biasArgTypes(4, ptrTy);
  biasArgTypes.append(35, i64);
  auto biasFnType = FunctionType::get(ctx, biasArgTypes, {});
  // x, w, y, bias (or null); 29 sizes and strides, 4 paddings, the bias
  // stride, accumulate; the clamp's two f32 bounds; threads.
  auto f32 = Float32Type::get(ctx);
  SmallVector<Type> postArgTypes(4, ptrTy);
  postArgTypes.append(35, i64);
  postArgTypes.append({i64, f32, f32, f32, f32, i64});
  auto postFnType = FunctionType::get(ctx, postArgTypes, {});
  auto declare = [&](StringRef name, FunctionType type) {
    if (module.lookupSymbol(name))
      return;
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(mb, module.getLoc(), name, type);
    decl.setPrivate();
  };
  llvm::DenseSet<Value> channelsLast = channelsLastBuffers(ops);
  for (linalg::LinalgOp op : ops) {
    bool grouped = isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
    DenseIntElementsAttr stridesAttr, dilationsAttr;
    if (auto c = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
      stridesAttr = c.getStrides();
      dilationsAttr = c.getDilations();
    } else {
      auto g = cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
      stridesAttr = g.getStrides();
      dilationsAttr = g.getDilations();
    }
    Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
          y = op.getDpsInits()[0];
    Location loc = op.getLoc();
    std::optional<InKernelPad> pad = matchInKernelPad(x, op);
    bool accumulate = true;
    linalg::GenericOp biasInit = biasBroadcastBefore(op, y);
    // The channels-last twin written in place of y (only where the call
    // overwrites y: with accumulate it would read the twin).
    // (A grouped conv's: y is the 5-D expand_shape of the 4-D buffer.)
    std::optional<OutputView> yView;
    {
      auto yExpand = grouped ? y.getDefiningOp<memref::ExpandShapeOp>()
                             : memref::ExpandShapeOp();
      Value y4 = yExpand ? yExpand.getSrc() : y;
      // (A grouped conv's zero fill writes its 5-D view, its bias
      // broadcast the 4-D buffer.)
      Operation *init = biasInit ? biasInit.getOperation()
                                 : zeroFillBefore(op, y).getOperation();
      if (init && (!grouped || yExpand)) {
        SmallVector<Value> reads = {x, w};
        if (pad)
          reads.push_back(pad->src);
        if (biasInit)
          reads.push_back(biasInit.getDpsInputs()[0]);
        yView = matchOutputView(y4, op, init, reads, yExpand);
      }
    }
    Value bias;
    if (biasInit) {
      bias = biasInit.getDpsInputs()[0];
      biasInit->erase();
      accumulate = false;
    } else if (linalg::FillOp fill = zeroFillBefore(op, y)) {
      fill->erase();
      accumulate = false;
    }
    OpBuilder b(op);
    Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
    Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
    auto toI64 = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, i64, v).getResult();
    };
    struct Desc {
      Value ptr;
      SmallVector<Value> sizes, strides; // i64, 5-D (a 1-group dim added)
    };
    // [lead..., rest...] with a group dim of size 1 / stride 0 inserted at
    // `groupDim` for the ungrouped form.
    // An f32 buffer's address (aligned pointer plus offset) and metadata.
    auto pointer = [&](Value m) {
      auto md = memref::ExtractStridedMetadataOp::create(b, loc, m);
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
      Value off = arith::MulIOp::create(
          b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, 4));
      return std::make_pair(
          LLVM::IntToPtrOp::create(
              b, loc, ptrTy, toI64(arith::AddIOp::create(b, loc, base, off)))
              .getResult(),
          md);
    };
    // (A TransposeView's buffer: its source, dim i being the source's
    // dim perm[i].)
    auto desc = [&](Value m, unsigned groupDim,
                    std::optional<TransposeView> view = std::nullopt,
                    std::optional<OutputView> out = std::nullopt) {
      Desc d;
      if (view)
        m = view->t.getInput();
      if (out)
        m = out->t.getInit();
      auto [ptr, md] = pointer(m);
      d.ptr = ptr;
      for (auto [sz, st] : llvm::zip(md.getSizes(), md.getStrides())) {
        d.sizes.push_back(toI64(sz));
        d.strides.push_back(toI64(st));
      }
      if (view) {
        Desc src = d;
        for (auto [i, p] : llvm::enumerate(view->t.getPermutation())) {
          d.sizes[i] = src.sizes[p];
          d.strides[i] = src.strides[p];
        }
      }
      if (out) {
        // The twin's dim i is the conv output's dim perm[i].
        Desc dst = d;
        for (auto [i, p] : llvm::enumerate(out->t.getPermutation())) {
          d.sizes[p] = dst.sizes[i];
          d.strides[p] = dst.strides[i];
        }
      }
      if (channelsLast.contains(m)) {
        // [N, C, H, W] stored as [N, H, W, C] (channelsLastBuffers).
        Value c = d.sizes[1], h = d.sizes[2], w = d.sizes[3];
        Value wc = arith::MulIOp::create(b, loc, w, c);
        d.strides = {arith::MulIOp::create(b, loc, wc, h), one, wc, c};
      }
      if (!grouped) {
        d.sizes.insert(d.sizes.begin() + groupDim, one);
        d.strides.insert(d.strides.begin() + groupDim, zero);
      }
      return d;
    };
    auto cst = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
    };
    // Transposed operands read in place (a grouped conv's input through
    // its in-kernel padding only).
    std::optional<TransposeView> xView, wView;
    if (!grouped) {
      xView = pad ? matchTransposeView(pad->src, pad->copy, op)
                  : matchTransposeView(x, op, op);
      wView = matchTransposeView(w, op, op);
      if (xView && wView && xView->t == wView->t)
        xView = wView = std::nullopt; // one copy read as both: kept
    } else if (pad) {
      xView = matchTransposeView(pad->src, pad->copy, op);
    }
    Desc dx = desc(pad ? pad->src : x, 1, xView), dw = desc(w, 0, wView),
         dy = desc(y, 1, std::nullopt, yView);
    if (grouped && yView) {
      // The twin is 4-D [n, g * f, oh, ow] (permuted strides): split its
      // channels as y's expand_shape does ([n, g, f, oh, ow]).
      Desc d4 = dy;
      auto yt = cast<MemRefType>(y.getType());
      Value f = cst(yt.getDimSize(2));
      dy.sizes = {d4.sizes[0], cst(yt.getDimSize(1)), f, d4.sizes[2],
                  d4.sizes[3]};
      dy.strides = {d4.strides[0],
                    arith::MulIOp::create(b, loc, d4.strides[1], f),
                    d4.strides[1], d4.strides[2], d4.strides[3]};
    }
    if (pad && grouped) {
      // The unpadded source is 4-D [n, g * c, h, w]: split its channels
      // as the padded buffer's expand_shape does ([n, g, c, h, w]).
      Desc d4 = dx;
      auto xt = cast<MemRefType>(x.getType());
      Value g = cst(xt.getDimSize(1)), c = cst(xt.getDimSize(2));
      dx.sizes = {d4.sizes[0], g, c, d4.sizes[2], d4.sizes[3]};
      dx.strides = {d4.strides[0],
                    arith::MulIOp::create(b, loc, d4.strides[1], c),
                    d4.strides[1], d4.strides[2], d4.strides[3]};
    }
    auto sv = stridesAttr.getValues<int64_t>();
    auto dv = dilationsAttr.getValues<int64_t>();
    SmallVector<Value> args = {dx.ptr, dw.ptr, dy.ptr,
                               // n, g, c, h, w
                               dx.sizes[0], dx.sizes[1], dx.sizes[2],
                               dx.sizes[3], dx.sizes[4],
                               // f, kh, kw
                               dw.sizes[1], dw.sizes[3], dw.sizes[4],
                               // oh, ow
                               dy.sizes[3], dy.sizes[4], cst(sv[0]),
                               cst(sv[1]), cst(dv[0]), cst(dv[1])};
    args.append(dx.strides);
    args.append(dw.strides);
    args.append(dy.strides);
    StringRef callee = pad ? kOneDNNConvPadSymbol : kOneDNNConvSymbol;
    FunctionType calleeType = pad ? padFnType : fnType;
    auto clamp = op->getAttrOfType<DenseF32ArrayAttr>(kConvClampAttr);
    auto inputClamp =
        op->getAttrOfType<DenseF32ArrayAttr>(kConvInputClampAttr);
    if (clamp || inputClamp) {
      // kiln_onednn_conv2d_post_f32: the bias or null, the paddings (0
      // without in-kernel padding), the bias stride, accumulate, which
      // clamps, the output's and the input's bounds.
      Value stride = one;
      if (bias) {
        auto [ptr, md] = pointer(bias);
        args.insert(args.begin() + 3, ptr);
        stride = toI64(md.getStrides()[0]);
      } else {
        args.insert(args.begin() + 3, LLVM::ZeroOp::create(b, loc, ptrTy));
      }
      if (pad)
        args.append({cst(pad->pt), cst(pad->pl), cst(pad->pb), cst(pad->pr)});
      else
        args.append({zero, zero, zero, zero});
      args.push_back(stride);
      args.push_back(cst(accumulate ? 1 : 0));
      args.push_back(cst((clamp ? 1 : 0) | (inputClamp ? 2 : 0)));
      for (DenseF32ArrayAttr bounds : {clamp, inputClamp})
        for (unsigned i = 0; i < 2; ++i) {
          float v = bounds ? bounds.asArrayRef()[i]
                           : (i == 0 ? -INFINITY : INFINITY);
          args.push_back(
              arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)));
        }
      callee = kOneDNNConvPostSymbol;
      calleeType = postFnType;
    } else if (bias) {
      // kiln_onednn_conv2d_bias_f32: the bias after y, the paddings (0
      // when the input is not padded in the call), the bias stride.
      auto [ptr, md] = pointer(bias);
      args.insert(args.begin() + 3, ptr);
      if (pad)
        args.append({cst(pad->pt), cst(pad->pl), cst(pad->pb), cst(pad->pr)});
      else
        args.append({zero, zero, zero, zero});
      args.push_back(toI64(md.getStrides()[0]));
      callee = kOneDNNConvBiasSymbol;
      calleeType = biasFnType;
    } else {
      if (pad)
        args.append({cst(pad->pt), cst(pad->pl), cst(pad->pb), cst(pad->pr)});
      args.push_back(cst(accumulate ? 1 : 0));
    }
    args.push_back(cst(threads));
    declare(callee, calleeType);
    auto call = func::CallOp::create(b, loc, callee, TypeRange{}, args);
    call->setAttr(kConvImplAttr, StringAttr::get(ctx, "onednn"));
    op->erase();
    if (pad) {
      // Nothing reads the padded buffer any more. Its `?` sizes (N, C) are
      // the unpadded input's; H and W are static.
      auto at = cast<MemRefType>(pad->alloc.getType());
      for (memref::DimOp dim : pad->dims) {
        OpBuilder db(dim);
        int64_t i = *dim.getConstantIndex();
        Value v = i < 2 ? memref::DimOp::create(db, dim.getLoc(), pad->src, i)
                              .getResult()
                        : arith::ConstantIndexOp::create(db, dim.getLoc(),
                                                         at.getDimSize(i))
                              .getResult();
        dim.replaceAllUsesWith(v);
        dim->erase();
      }
      for (memref::CopyOp self : pad->selfCopies)
        self->erase();
      pad->copy->erase();
      pad->fill->erase();
      for (Operation *user :
           llvm::make_early_inc_range(pad->alloc->getUsers()))
        if (isa<memref::SubViewOp>(user) && user->use_empty())
          user->erase();
      if (pad->expand)
        pad->expand->erase();
      for (Operation *user :
           llvm::make_early_inc_range(pad->alloc->getUsers()))
        user->erase(); // its deallocs
      pad->alloc->erase();
    }
    if (yView) {
      // The call wrote the twin: the transpose and y's buffer go (y's
      // memref.dims read the twin's permuted dims).
      Value out = yView->t.getInit();
      ArrayRef<int64_t> perm = yView->t.getPermutation();
      yView->t->erase();
      for (Operation *c : yView->collapses) {
        for (Operation *user : llvm::make_early_inc_range(c->getUsers()))
          user->erase(); // its deallocs and dims (no reader left)
        c->erase();
      }
      for (Operation *user :
           llvm::make_early_inc_range(yView->alloc->getUsers())) {
        if (auto dim = dyn_cast<memref::DimOp>(user)) {
          OpBuilder db(dim);
          int64_t k = *dim.getConstantIndex();
          int64_t i = llvm::find(perm, k) - perm.begin();
          dim.replaceAllUsesWith(
              memref::DimOp::create(db, dim.getLoc(), out, i).getResult());
        }
        user->erase(); // its deallocs and dims
      }
      yView->alloc->erase();
    }
    // Nothing reads a transposed copy the call reads in place any more.
    for (std::optional<TransposeView> *view : {&xView, &wView}) {
      if (!*view)
        continue;
      (*view)->t->erase();
      for (Operation *user :
           llvm::make_early_inc_range((*view)->alloc->getUsers()))
        user->erase(); // its deallocs
      (*view)->alloc->erase();
    }
  }
  return ops.size();
}
