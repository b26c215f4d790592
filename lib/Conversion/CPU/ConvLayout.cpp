//===- ConvLayout.cpp - Channels-last activations between oneDNN convs ----===//
//
// Part of Kiln. kiln::cpu::convsToChannelsLast (the pass
// kiln-cpu-conv-channels-last): on this machine oneDNN computes the
// ungrouped f32 convs in channels-last (`acdb`), and a conv that reads and
// writes NCHW pays a reorder of its input in and of its output back on
// every call. Between two convs, the ops in a resnet (the residual add, its
// relu) are pointwise and do not care which layout they run in. Like
// Inductor's layout optimization, this pass gives each such conv a
// channels-last twin of its result, `kt.permute [0, 2, 3, 1]` (which
// kiln-cpu-outline-kernels puts into the conv's kernel and
// kiln-cpu-conv-to-onednn turns into the call's output strides: no copy),
// and runs the pointwise ops that read those twins on [N, H, W, C] tensors;
// a conv that reads a channels-last value reads it through
// `kt.permute [0, 3, 1, 2]`, which the call reads in place too
// (isAbsorbedConvPermute). Whatever else reads a value gets it in NCHW
// (a permute back, i.e. a copy, only where a channels-last value meets an
// NCHW-only reader: a pool, a function result). Depthwise convs take part
// too: libkiln_onednn runs them channels-last (vectorized along C).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "kiln/Dialect/KT/IR/KTBuilder.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kToNHWC[4] = {0, 2, 3, 1};
constexpr int64_t kToNCHW[4] = {0, 3, 1, 2};

RankedTensorType permuted(RankedTensorType t, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape;
  for (int64_t d : dims)
    shape.push_back(t.getDimSize(d));
  return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
}

/// `v` permuted by `dims`: with `fold`, the source itself where `v` is the
/// inverse permute of it.
Value permute(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> dims,
              bool fold = true) {
  if (auto p = fold ? v.getDefiningOp<kt::PermuteOp>() : kt::PermuteOp()) {
    SmallVector<int64_t> inner;
    for (Attribute a : p.getDims())
      inner.push_back(cast<IntegerAttr>(a).getInt());
    bool identity = inner.size() == 4;
    for (unsigned i = 0; identity && i < 4; ++i)
      identity = (inner[dims[i]] + 4) % 4 == (int64_t)i;
    if (identity && p.getSelf().getType() ==
                        permuted(cast<RankedTensorType>(v.getType()), dims))
      return p.getSelf();
  }
  auto t = cast<RankedTensorType>(v.getType());
  return kt::PermuteOp::create(b, loc, permuted(t, dims), v,
                               b.getI64ArrayAttr(dims))
      .getResult();
}

bool isRank4(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.getRank() == 4;
}

/// A 4-D f32 kt.conv2d with a static weight that runs channels-last: an
/// ungrouped one of more than one input channel (kiln-cpu-conv-im2col gives
/// those to oneDNN, chooseConvImpl; one input channel goes to im2col or the
/// direct loops, where a permute would stay a copy), or a depthwise one
/// (one input and one output channel per group: libkiln_onednn's
/// channels-last depthwise loops, vectorized along the channels).
bool isChannelsLastConv(Operation *op) {
  auto conv = dyn_cast<kt::Conv2dOp>(op);
  if (!conv || op->getNumResults() != 1)
    return false;
  auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto w = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  auto y = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!x || !w || !y || x.getRank() != 4 || y.getRank() != 4 ||
      w.getRank() != 4 || !w.hasStaticShape() || !y.getElementType().isF32())
    return false;
  if (conv.getGroups() == 1)
    return w.getDimSize(1) != 1;
  return cpu::isDepthwiseF32Conv(op);
}

/// A grouped conv that is not channels-last (more than one channel per
/// group, or a channel multiplier): it runs in NCHW.
bool isNCHWGroupedConv(Operation *op) {
  auto conv = dyn_cast_or_null<kt::Conv2dOp>(op);
  return conv && conv.getGroups() != 1 && !isChannelsLastConv(op);
}

/// Whether ungrouped conv `conv` meets an NCHW grouped conv through
/// relu/clamp: its input comes from one, or its result goes into one. A
/// channels-last twin next to one would cost a permute each way.
bool meetsGroupedConv(Operation *conv) {
  Value x = conv->getOperand(0);
  while (Operation *def = x.getDefiningOp()) {
    if (isNCHWGroupedConv(def))
      return true;
    if (!isa<kt::ReluOp, kt::ClampOp>(def))
      break;
    x = def->getOperand(0);
  }
  SmallVector<Value> work = {conv->getResult(0)};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isNCHWGroupedConv(user))
        return true;
      if (isa<kt::ReluOp, kt::ClampOp>(user))
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

/// Whether relu/clamp `op` is the prologue of a channels-last depthwise
/// conv: its only use is that conv's input, and its bounds keep 0
/// (kiln-cpu-outline-kernels puts it into the conv's kernel, and the
/// depthwise loops clamp each value as they read it; see
/// depthwisePrologueUser there).
bool isDepthwisePrologue(Operation *op) {
  if (!cpu::isZeroKeepingClamp(op) || !op->getResult(0).hasOneUse())
    return false;
  OpOperand &use = *op->getResult(0).getUses().begin();
  auto conv = dyn_cast<kt::Conv2dOp>(use.getOwner());
  return conv && use.getOperandNumber() == 0 && conv.getGroups() != 1 &&
         isChannelsLastConv(conv);
}

/// The last op of `conv`'s unit: its relu/clamp when that is the conv's
/// only use (kiln-cpu-outline-kernels keeps the two in one kernel and
/// oneDNN clamps as it stores), else the conv.
/// A relu/clamp that is a channels-last depthwise conv's prologue is not
/// part of the unit: the twin is the conv's, and the relu/clamp runs on it
/// (then, in the depthwise conv's kernel, as the loops read it).
Operation *unitTail(Operation *conv) {
  Value r = conv->getResult(0);
  if (!r.hasOneUse())
    return conv;
  Operation *user = *r.getUsers().begin();
  if (isa<kt::ReluOp, kt::ClampOp>(user) && user->getNumOperands() == 1 &&
      user->getNumResults() == 1 && user->getBlock() == conv->getBlock() &&
      !isDepthwisePrologue(user))
    return user;
  return conv;
}

bool isPointwise(Operation *op) {
  auto kind = dyn_cast<kt::OpKindInterface>(op);
  return kind && kind.getOpKind() == kt::OpKind::Pointwise &&
         op->getNumResults() == 1 && op->getRegions().empty() &&
         isRank4(op->getResult(0).getType());
}

/// Whether `use` can read a channels-last twin instead of the NCHW value
/// (the operands rewriteBlock rewrites when they have one).
bool readsTwin(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<kt::Conv2dOp, kt::MaxPool2dOp, kt::BatchNormOp>(user))
    return use.getOperandNumber() == 0;
  return isPointwise(user) || isa<kt::MeanOp, kt::SumOp, kt::AmaxOp>(user);
}

/// Whether every use of `v` can read a twin: a twin of a value that
/// something else needs in NCHW (a training graph's kt.batch_norm_train,
/// a result saved for the backward, a weight-gradient conv's operand) would
/// be a copy next to it.
bool onlyTwinReaders(Value v) {
  return llvm::all_of(v.getUses(), readsTwin);
}

unsigned rewriteBlock(Block &block) {
  // The channels-last twin of a value ([N, H, W, C], same elements).
  llvm::DenseMap<Value, Value> twin;
  SmallVector<Operation *> created;
  unsigned convs = 0;
  for (Operation &opRef : llvm::make_early_inc_range(block)) {
    Operation *op = &opRef;
    if (isChannelsLastConv(op) && !meetsGroupedConv(op)) {
      OpBuilder b(op);
      Value x = op->getOperand(0);
      if (Value t = twin.lookup(x)) {
        // A permute of its own, even of a conv's twin (not folded back to
        // the conv's NCHW result): the call reads it in place and the
        // producing conv writes the twin, so the buffer between two convs
        // is channels-last whatever layout oneDNN picks for each.
        op->setOperand(0, permute(b, op->getLoc(), t, kToNCHW,
                                  /*fold=*/false));
      }
      Operation *tail = unitTail(op);
      if (!onlyTwinReaders(tail->getResult(0)))
        continue;
      b.setInsertionPointAfter(tail);
      Value t = permute(b, tail->getLoc(), tail->getResult(0), kToNHWC);
      created.push_back(t.getDefiningOp());
      twin[tail->getResult(0)] = t;
      ++convs;
      continue;
    }
    if (isa<kt::MaxPool2dOp>(op) && op->getNumResults() == 1 &&
        isRank4(op->getResult(0).getType()) && twin.count(op->getOperand(0))) {
      // A max pool of a twin (resnet's stem): the pool reads the twin
      // through a permute of its own and gets a twin of its result;
      // kiln-cpu-outline-kernels puts both into its kernel and
      // kiln-cpu-pool-windows pools [N, H, W, C] directly.
      OpBuilder b(op);
      op->setOperand(0, permute(b, op->getLoc(),
                                twin.lookup(op->getOperand(0)), kToNCHW,
                                /*fold=*/false));
      b.setInsertionPointAfter(op);
      Value out = permute(b, op->getLoc(), op->getResult(0), kToNHWC);
      created.push_back(out.getDefiningOp());
      twin[op->getResult(0)] = out;
      continue;
    }
    if (auto bn = dyn_cast<kt::BatchNormOp>(op)) {
      // Inference batch_norm (not folded into its conv) of a channels-last
      // value: x * a[c] + b[c] on [N, H, W, C] (the [C] vectors broadcast
      // along the last dim), with PyTorch's a = weight * rsqrt(var + eps),
      // b = bias - mean * a; pointwise, so it fuses with what follows.
      Value t = twin.lookup(bn.getInput());
      if (!t || !isRank4(bn.getType()) || !onlyTwinReaders(bn.getResult()))
        continue;
      OpBuilder b(op);
      kt::KTBuilder e(b, op->getLoc());
      Value var = bn.getRunningVar();
      Value a = e.rsqrt(
          e.add(var, e.scalarLike(bn.getEps().convertToDouble(), var)));
      if (Value w = bn.getWeight())
        a = e.mul(w, a);
      Value shift = e.neg(e.mul(bn.getRunningMean(), a));
      if (Value beta = bn.getBias())
        shift = e.add(beta, shift);
      Value y = e.add(e.mul(t, a), shift);
      created.push_back(y.getDefiningOp());
      Value back = permute(b, op->getLoc(), y, kToNCHW);
      created.push_back(back.getDefiningOp());
      op->getResult(0).replaceAllUsesWith(back);
      op->erase();
      twin[back] = y;
      continue;
    }
    if (isa<kt::MeanOp, kt::SumOp, kt::AmaxOp>(op) &&
        op->getNumOperands() == 1 && twin.count(op->getOperand(0))) {
      // A reduction over H and W (global average pooling) of a twin: over
      // its dims 1 and 2 instead; with keepdim the [N, 1, 1, C] result is
      // the [N, C, 1, 1] one reshaped (same element order).
      // (No `dim`: a reduction of all dims, left on the NCHW value; a null
      // ArrayAttr cannot be iterated.)
      auto dims = op->getAttrOfType<ArrayAttr>("dim");
      if (!dims)
        continue;
      SmallVector<int64_t> d;
      for (Attribute a : dims)
        if (auto i = dyn_cast<IntegerAttr>(a))
          d.push_back((i.getInt() + 4) % 4);
      llvm::sort(d);
      auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
      if (d != SmallVector<int64_t>{2, 3} ||
          resultType.getNumDynamicDims() > 1)
        continue;
      OpBuilder b(op);
      IRMapping map;
      map.map(op->getOperand(0), twin.lookup(op->getOperand(0)));
      Operation *clone = b.clone(*op, map);
      clone->setAttr("dim", b.getI64ArrayAttr({1, 2}));
      Value r = clone->getResult(0);
      if (resultType.getRank() == 4) {
        SmallVector<int64_t> shape = llvm::to_vector(resultType.getShape());
        r.setType(RankedTensorType::get({shape[0], 1, 1, shape[1]},
                                        resultType.getElementType()));
        for (int64_t &v : shape)
          if (ShapedType::isDynamic(v))
            v = -1;
        r = kt::KTBuilder(b, op->getLoc()).reshape(r, shape);
      }
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
      continue;
    }
    if (!isPointwise(op))
      continue;
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // Worth it when at least as many full-size operands come channels-last
    // as would have to be permuted into it (a permute each); broadcast
    // operands ([1, C, 1, 1]) and scalars are cheap.
    unsigned withTwin = 0, without = 0;
    bool ok = true;
    for (Value v : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() > 4) {
        ok = false;
        break;
      }
      if (t.getRank() < 4)
        continue; // broadcast over the leading dims
      if (twin.count(v))
        ++withTwin;
      else if (t.getShape() == resultType.getShape())
        ++without;
    }
    if (!ok || withTwin == 0 || without > withTwin)
      continue;
    OpBuilder b(op);
    IRMapping map;
    for (Value v : op->getOperands()) {
      auto t = cast<RankedTensorType>(v.getType());
      if (t.getRank() == 0 || map.contains(v))
        continue;
      Value nv = twin.lookup(v);
      if (!nv) {
        // A [C, 1, 1] (decomposed batch_norm's statistics) or other
        // broadcast operand: 4-D first (leading 1s), then permuted.
        // With static sizes and at most one dim that is not 1 (a [C]
        // vector in any of those shapes) it is a reshape, not a copy.
        kt::KTBuilder e(b, op->getLoc());
        SmallVector<int64_t> shape4(4 - t.getRank(), 1);
        llvm::append_range(shape4, t.getShape());
        if (t.hasStaticShape() && llvm::count_if(shape4, [](int64_t d) {
                                    return d != 1;
                                  }) <= 1) {
          SmallVector<int64_t> target;
          for (int64_t d : kToNHWC)
            target.push_back(shape4[d]);
          nv = e.reshape(v, target);
        } else {
          Value v4 = v;
          for (int64_t r = t.getRank(); r < 4; ++r)
            v4 = e.unsqueeze(v4, 0);
          nv = permute(b, op->getLoc(), v4, kToNHWC);
        }
        created.push_back(nv.getDefiningOp());
      }
      map.map(v, nv);
    }
    Operation *clone = b.clone(*op, map);
    clone->getResult(0).setType(permuted(resultType, kToNHWC));
    created.push_back(clone);
    Value back = permute(b, op->getLoc(), clone->getResult(0), kToNCHW);
    created.push_back(back.getDefiningOp());
    op->getResult(0).replaceAllUsesWith(back);
    op->erase();
    twin[back] = clone->getResult(0);
  }
  // Twins and permutes back that nothing reads.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *&op : created)
      if (op && op->use_empty()) {
        op->erase();
        op = nullptr;
        changed = true;
      }
  }
  return convs;
}

} // namespace

unsigned kiln::cpu::convsToChannelsLast(Operation *root) {
  unsigned n = 0;
  root->walk([&](func::FuncOp fn) {
    for (Block &block : fn.getBody())
      n += rewriteBlock(block);
  });
  return n;
}
