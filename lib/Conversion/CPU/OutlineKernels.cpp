//===- OutlineKernels.cpp - One func.func per kernel -----------------------===//
//
// Part of Kiln. kiln::cpu::outlineKernels (pass kiln-cpu-outline-kernels):
// every kernel of a function body (a kt.fusion, or a kt op that computes:
// pointwise, reduction, contraction, composite) becomes a call to a private
// func.func of its own, so that the rest of kiln-cpu (lowering, tiling,
// bufferization, LLVM) works on many small functions instead of one huge
// one: the analyses of bufferization and the LLVM optimizer are
// super-linear in the size of a function, and the pass manager runs
// function passes over the kernels on its threads. Views (the shape ops
// that lower to a tensor reshape or slice: reshape, squeeze, unsqueeze,
// slice, select) and
// creation ops stay in the caller; the shape ops that move data (permute,
// expand, concat, pad, flip, gather, index_select, ...) are kernels, but a
// transpose of the last two dims read only by products is cloned into each
// product's kernel (cblas reads it with its transpose flag, no copy), and a
// permute read only by convs into each conv's kernel (oneDNN reads it
// through permuted strides).
// Constant operands are cloned into the kernel (they stay attributes the
// lowering folds). A kt.conv2d whose only use is a kt.relu or kt.clamp
// takes it into its kernel (convEpilogue), or, when that relu/clamp feeds
// a depthwise conv, the depthwise conv's kernel takes it as its input's
// clamp (depthwisePrologueUser): kiln-cpu-conv-im2col then folds it into
// the oneDNN conv's call, so the clamp costs no pass of its own. The
// static slices from 0 of a conv's H and W that follow it (the weight
// gradient of a strided conv) go into its kernel too (convSlices).
//
// Kernels that are identical up to value names, locations and capture
// annotations (the same layer repeated) are one function, called from each
// site: the key is the printed body in generic form without locations and
// without the `kg.`-prefixed discardable attributes of its ops (the
// importers' provenance, `kg.nn_module_stack`, `kg.source_fn`: kt ops take
// only the attributes they define, and no pass reads these).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTFusionOps.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace kiln;

namespace {

bool rankedTensors(TypeRange types) {
  return llvm::all_of(types, [](Type t) { return isa<RankedTensorType>(t); });
}

/// Whether the shape op `op` lowers to a view of its operand (a tensor
/// reshape or slice: no loop, no copy). The other shape ops (permute,
/// transpose, expand, concat, stack, pad, flip, gather, scatter,
/// index_select, embedding, searchsorted, the *_scatter ops) lower to loops.
bool lowersToView(Operation *op) {
  return isa<kt::ReshapeOp, kt::SqueezeOp, kt::UnsqueezeOp, kt::SliceOp,
             kt::SelectOp>(op);
}

/// Whether `op` (a top-level op of a function body) is a kernel to outline.
bool isKernelOp(Operation *op) {
  if (isa<kt::FusionOp>(op))
    return rankedTensors(op->getOperandTypes()) &&
           rankedTensors(op->getResultTypes()) && op->getNumResults() > 0;
  if (!isa_and_nonnull<kt::KTDialect>(op->getDialect()) ||
      op->getNumRegions() != 0 || op->getNumResults() == 0 ||
      op->hasTrait<OpTrait::ConstantLike>() || !isMemoryEffectFree(op))
    return false;
  auto kindOp = dyn_cast<kt::OpKindInterface>(op);
  if (!kindOp)
    return false;
  // Views (reshape, slice, ...) lower to no loop and stay in the caller;
  // every other shape op copies or gathers data (index_select, pad, concat,
  // permute, ...): its loops are a kernel's, and left in the caller they
  // would make that one function grow with the program (LLVM unrolls the
  // small static ones, and its -O3 is super-linear in a function's size).
  kt::OpKind kind = kindOp.getOpKind();
  if ((kind == kt::OpKind::Shape && lowersToView(op)) ||
      kind == kt::OpKind::Creation)
    return false;
  return rankedTensors(op->getOperandTypes()) &&
         rankedTensors(op->getResultTypes());
}

/// Whether `op` is a kt.transpose of the last two dims (rank >= 2) whose
/// every user is a kt.matmul of the same block. Such a transpose is not a
/// kernel of its own: it is cloned into each product's kernel, where the
/// product reads it through swapped maps (`kiln-matmul-to-blas` gives cblas
/// a transpose flag; generated code reads it strided) instead of a copy of
/// the operand being written and read again. The backward of every linear
/// layer (`dW = dY^T X`) and of attention (`P^T dO`, `Q^T dS`, ...) has one.
bool isAbsorbedTranspose(Operation *op) {
  auto t = dyn_cast<kt::TransposeOp>(op);
  if (!t)
    return false;
  auto type = dyn_cast<RankedTensorType>(t.getType());
  if (!type || type.getRank() < 2 || t->use_empty())
    return false;
  int64_t rank = type.getRank();
  auto norm = [&](int64_t d) { return d < 0 ? d + rank : d; };
  int64_t d0 = norm((int64_t)t.getDim0()), d1 = norm((int64_t)t.getDim1());
  if (std::min(d0, d1) != rank - 2 || std::max(d0, d1) != rank - 1)
    return false;
  return llvm::all_of(t->getUsers(), [&](Operation *user) {
    return isa<kt::MatmulOp>(user) && user->getBlock() == op->getBlock();
  });
}

/// Whether `op` is a 4-D kt.permute whose every user is, in the same block,
/// a kt.conv2d (as its input or its weight), a kt.max_pool2d (its input) or
/// a kiln-fuse kernel whose body reads it only as a conv's input or
/// weight. Such a permute is cloned into each reader's kernel instead of
/// being a kernel of its own: for a oneDNN conv, kiln-cpu-conv-to-onednn
/// then passes the permute's source with permuted strides (no copy;
/// oneDNN's own reorder into its blocked layout reads it where it is), and
/// kiln-cpu-pool-windows pools a channels-last source directly. The weight gradient of every convolution
/// (lib/Autodiff/Conv.cpp swaps the batch and channel dims of the input
/// and of the output gradient) has two.
bool isAbsorbedConvPermute(Operation *op) {
  auto p = dyn_cast<kt::PermuteOp>(op);
  if (!p || p->use_empty())
    return false;
  auto type = dyn_cast<RankedTensorType>(p.getType());
  if (!type || type.getRank() != 4)
    return false;
  return llvm::all_of(p->getUses(), [&](OpOperand &use) {
    Operation *owner = use.getOwner();
    if (owner->getBlock() != op->getBlock())
      return false;
    if (isa<kt::Conv2dOp>(owner))
      return use.getOperandNumber() < 2;
    // A max pool's input (kiln-cpu-pool-windows pools the permute's
    // source channels-last when the pool's result is permuted back too).
    if (isa<kt::MaxPool2dOp>(owner))
      return use.getOperandNumber() == 0;
    // A kiln-fuse kernel (a conv and its epilogue) whose body reads it only
    // as a conv's input or weight.
    auto fusion = dyn_cast<kt::FusionOp>(owner);
    if (!fusion || fusion.getBody().empty())
      return false;
    BlockArgument arg =
        fusion.getBody().front().getArgument(use.getOperandNumber());
    return !arg.use_empty() && llvm::all_of(arg.getUses(), [](OpOperand &u) {
      return isa<kt::Conv2dOp>(u.getOwner()) && u.getOperandNumber() < 2;
    });
  });
}

Operation *depthwisePrologueUser(Operation *op);
bool isUngroupedF32Conv(Operation *op);

/// The dims of 4-D kt.permute `p`.
SmallVector<int64_t> permuteDims(kt::PermuteOp p) {
  SmallVector<int64_t> dims;
  for (Attribute a : p.getDims())
    dims.push_back(cast<IntegerAttr>(a).getInt());
  return dims;
}

/// Whether `p` is a 4-D kt.permute [0, 3, 1, 2] (channels-last to NCHW).
bool isToNCHW(kt::PermuteOp p) {
  auto t = dyn_cast<RankedTensorType>(p.getType());
  return t && t.getRank() == 4 &&
         permuteDims(p) == SmallVector<int64_t>{0, 3, 1, 2};
}

/// The channels-last twin of a conv's result that goes into the conv's own
/// kernel (null if none): a 4-D kt.permute [0, 2, 3, 1] that is the only use
/// of `tail` (the conv, or its relu/clamp epilogue), in the same block
/// (kiln-cpu-conv-channels-last makes them). kiln-cpu-conv-to-onednn makes
/// it the call's output strides: the conv writes [N, H, W, C] directly.
Operation *convOutputPermute(Operation *tail) {
  if (tail->getNumResults() != 1 || !tail->getResult(0).hasOneUse())
    return nullptr;
  auto p = dyn_cast<kt::PermuteOp>(*tail->getResult(0).getUsers().begin());
  if (!p || p->getBlock() != tail->getBlock() ||
      !isa<RankedTensorType>(p.getType()) ||
      cast<RankedTensorType>(p.getType()).getRank() != 4)
    return nullptr;
  return permuteDims(p) == SmallVector<int64_t>{0, 2, 3, 1} ? p.getOperation()
                                                           : nullptr;
}

/// Whether `op` is a kiln-fuse kernel with an ungrouped f32 conv (a conv
/// and its epilogue).
bool isConvFusion(Operation *op) {
  auto fusion = dyn_cast<kt::FusionOp>(op);
  if (!fusion || op->getNumResults() != 1)
    return false;
  bool conv = false;
  fusion.getBody().walk([&](kt::Conv2dOp c) {
    conv |= isUngroupedF32Conv(c);
  });
  return conv;
}

/// The consumer of kt.conv2d `op` that is outlined into the conv's own
/// kernel (null if none): a kt.relu or kt.clamp of the conv's only use, in
/// the same block. kiln-cpu-conv-im2col folds it into a oneDNN conv's call
/// (kiln.conv_clamp: the output clamped as it is stored, no pass of its
/// own over it); for the other conv paths the two ops simply lower in one
/// function.
Operation *convEpilogue(Operation *op) {
  if (!isa<kt::Conv2dOp>(op) || op->getNumResults() != 1 ||
      !op->getResult(0).hasOneUse())
    return nullptr;
  Operation *user = *op->getResult(0).getUsers().begin();
  if (!isa<kt::ReluOp, kt::ClampOp>(user) || user->getNumOperands() != 1 ||
      user->getBlock() != op->getBlock() || !isKernelOp(user) ||
      depthwisePrologueUser(user))
    return nullptr;
  return user;
}

/// The depthwise conv whose kernel takes relu/clamp `op` as a prologue
/// (null if none): `op`'s only use is the input of an f32 kt.conv2d with
/// one input channel per group (more than one group), in the same block,
/// and its bounds keep 0 (kt.relu, or kt.clamp with min <= 0 <= max, each
/// bound optional), so that clamping the zero padding too changes nothing.
/// kiln-cpu-conv-im2col folds it into the call (kiln.conv_input_clamp):
/// libkiln_onednn's depthwise loops clamp each input value as they copy it
/// into their padded plane, so the clamp costs no pass over memory (as an
/// epilogue of the conv before it, it would be an in-place pass after a
/// oneDNN primitive). mobilenet_v2's ReLU6 between each expansion and its
/// depthwise conv.
Operation *depthwisePrologueUser(Operation *op) {
  if (!kiln::cpu::isZeroKeepingClamp(op) || !op->getResult(0).hasOneUse())
    return nullptr;
  Value in = op->getResult(0);
  Operation *user = *in.getUsers().begin();
  // Or, channels-last (kiln-cpu-conv-channels-last), through the conv's own
  // permute [0, 3, 1, 2] of it, which the kernel absorbs too.
  if (auto p = dyn_cast<kt::PermuteOp>(user);
      p && p->getBlock() == op->getBlock() && isAbsorbedConvPermute(p) &&
      p->getResult(0).hasOneUse() && isToNCHW(p)) {
    in = p->getResult(0);
    user = *in.getUsers().begin();
  }
  auto conv = dyn_cast<kt::Conv2dOp>(user);
  if (!conv || conv->getBlock() != op->getBlock() ||
      conv->getOperand(0) != in || !isKernelOp(conv))
    return nullptr;
  auto w = dyn_cast<RankedTensorType>(conv->getOperand(1).getType());
  if (!w || w.getRank() != 4 || w.getDimSize(1) != 1 ||
      !w.getElementType().isF32() || conv.getGroups() <= 1)
    return nullptr;
  return conv;
}

/// The kt.slices that follow kt.conv2d `op` into its kernel (empty if
/// none): a chain of static slices of dims 2 and 3 (H, W) from 0 with step
/// 1, each the only use of the one before, the first the conv's only use,
/// in the same block. kiln-autodiff's weight gradient of a strided conv is
/// a conv whose output has rows and columns past the kernel's size, sliced
/// off after (lib/Autodiff/Conv.cpp); in one kernel, kiln-cpu-conv-im2col
/// makes the conv compute only the rows the slices keep.
SmallVector<Operation *> convSlices(Operation *op) {
  SmallVector<Operation *> slices;
  if (!isa<kt::Conv2dOp>(op) || op->getNumResults() != 1)
    return slices;
  Operation *tail = op;
  while (tail->getResult(0).hasOneUse()) {
    auto s = dyn_cast<kt::SliceOp>(*tail->getResult(0).getUsers().begin());
    if (!s || s->getBlock() != op->getBlock() || !s.getBounds().empty() ||
        s.getDynamicStart() || s.getDynamicEnd() || s.getStep() != 1 ||
        !s.getStart() || *s.getStart() != 0 ||
        !llvm::is_contained({2, 3, -1, -2}, (int64_t)s.getDim()))
      break;
    auto t = dyn_cast<RankedTensorType>(s.getType());
    if (!t || !t.hasStaticShape())
      break;
    slices.push_back(s);
    tail = s;
  }
  return slices;
}

/// Whether `op` is an f32 kt.conv2d with one group (chainable).
bool isUngroupedF32Conv(Operation *op) {
  auto conv = dyn_cast_or_null<kt::Conv2dOp>(op);
  if (!conv || conv.getGroups() != 1)
    return false;
  auto t = dyn_cast<RankedTensorType>(conv->getResult(0).getType());
  return t && t.getRank() == 4 && t.getElementType().isF32();
}

/// The conv that continues a chain of convs ending in `tail` (a conv or its
/// epilogue; null if none): `tail`'s only use is the input of an ungrouped
/// f32 batched kt.conv2d in the same block. A chain (conv -> relu -> conv
/// -> ...) is one kernel, so that kiln-cpu-conv-to-onednn sees each buffer
/// between two convs whole and can keep it in the channels-last layout
/// oneDNN computes in (no reorder out of the first conv and into the next).
Operation *chainNext(Operation *tail) {
  if (tail->getNumResults() != 1 || !tail->getResult(0).hasOneUse())
    return nullptr;
  Operation *user = *tail->getResult(0).getUsers().begin();
  if (!isUngroupedF32Conv(user) || user->getBlock() != tail->getBlock() ||
      user->getOperand(0) != tail->getResult(0) || !isKernelOp(user))
    return nullptr;
  return user;
}

/// Whether `attr` is a capture annotation (a discardable attribute in the
/// `kg` namespace: `kg.nn_module_stack`, `kg.source_fn`, ...), which says
/// where an op came from and not what it computes.
bool isAnnotation(NamedAttribute attr) {
  return attr.getName().strref().starts_with("kg.");
}

/// The key of a kernel function's body: its type and its ops in generic
/// form, without locations, value names or capture annotations.
std::string kernelKey(FunctionType type, Block *body) {
  // Annotations are taken off for the printing and put back after.
  SmallVector<std::pair<Operation *, DictionaryAttr>> stripped;
  body->walk([&](Operation *inner) {
    DictionaryAttr attrs = inner->getDiscardableAttrDictionary();
    if (!llvm::any_of(attrs, isAnnotation))
      return;
    stripped.push_back({inner, attrs});
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute a : attrs)
      if (!isAnnotation(a))
        kept.push_back(a);
    inner->setDiscardableAttrs(kept);
  });
  std::string key;
  llvm::raw_string_ostream os(key);
  os << type;
  for (Operation &inner : *body)
    inner.print(os, OpPrintingFlags()
                        .printGenericOpForm()
                        .enableDebugInfo(false)
                        .useLocalScope());
  for (auto &[inner, attrs] : stripped)
    inner->setDiscardableAttrs(attrs);
  return key;
}

std::string baseName(ArrayRef<Operation *> group, Operation *prologue) {
  if (auto fusion = dyn_cast<kt::FusionOp>(group.front()))
    return fusion.getKernel().str();
  std::string name = "kernel";
  if (prologue)
    name += "_" + prologue->getName().stripDialect().str();
  for (Operation *op : group)
    name += "_" + op->getName().stripDialect().str();
  return name;
}

} // namespace

bool kiln::cpu::isDepthwiseF32Conv(Operation *op) {
  auto conv = dyn_cast_or_null<kt::Conv2dOp>(op);
  if (!conv || conv.getGroups() <= 1 || op->getNumResults() != 1)
    return false;
  auto w = dyn_cast<RankedTensorType>(conv->getOperand(1).getType());
  auto y = dyn_cast<RankedTensorType>(conv->getResult(0).getType());
  return w && y && w.getRank() == 4 && y.getRank() == 4 &&
         y.getElementType().isF32() && w.getDimSize(1) == 1 &&
         w.getDimSize(0) == (int64_t)conv.getGroups();
}

bool kiln::cpu::isZeroKeepingClamp(Operation *op) {
  if (!isa<kt::ReluOp, kt::ClampOp>(op) || op->getNumOperands() != 1 ||
      op->getNumResults() != 1)
    return false;
  if (auto clamp = dyn_cast<kt::ClampOp>(op)) {
    std::optional<APFloat> lo = clamp.getMin(), hi = clamp.getMax();
    if ((lo && !(lo->convertToDouble() <= 0.0)) ||
        (hi && !(hi->convertToDouble() >= 0.0)))
      return false;
  }
  return true;
}

kiln::cpu::OutlineStats kiln::cpu::outlineKernels(ModuleOp module) {
  OutlineStats stats;
  MLIRContext *ctx = module.getContext();
  SymbolTable symbols(module);
  llvm::StringMap<func::FuncOp> byBody;
  SmallVector<func::FuncOp> callers;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && fn.getBody().hasOneBlock() &&
        !fn->hasAttr(kKernelFunctionAttr))
      callers.push_back(fn);
  SmallVector<func::FuncOp> glue;
  for (func::FuncOp caller : callers) {
    Block &block = caller.getBody().front();
    SmallVector<Operation *> kernels;
    SmallVector<Operation *> absorbed;
    // The ops of each kernel after its first: a conv's relu/clamp
    // (convEpilogue), and the convs (with their own relu/clamp) that a
    // chain of convs continues with (chainNext).
    llvm::DenseMap<Operation *, SmallVector<Operation *>> groups;
    llvm::SmallPtrSet<Operation *, 8> claimed;
    // A depthwise conv's input relu/clamp: in that conv's kernel.
    llvm::DenseMap<Operation *, Operation *> prologues;
    // Outlined prologues that an absorbed permute still reads.
    SmallVector<Operation *> readByAbsorbed;
    for (Operation &op : block.without_terminator()) {
      if (isAbsorbedTranspose(&op) || isAbsorbedConvPermute(&op)) {
        absorbed.push_back(&op);
      } else if (claimed.contains(&op)) {
        continue;
      } else if (Operation *conv = depthwisePrologueUser(&op)) {
        prologues[conv] = &op;
      } else if (isKernelOp(&op)) {
        kernels.push_back(&op);
        SmallVector<Operation *> group = {&op};
        if (Operation *e = convEpilogue(&op))
          group.push_back(e);
        else
          group.append(convSlices(&op));
        if (isUngroupedF32Conv(&op) && !isa<kt::SliceOp>(group.back()))
          while (Operation *next = chainNext(group.back())) {
            group.push_back(next);
            if (Operation *e = convEpilogue(next))
              group.push_back(e);
          }
        if ((isUngroupedF32Conv(&op) || kiln::cpu::isDepthwiseF32Conv(&op) ||
             isConvFusion(&op) || isa<kt::MaxPool2dOp>(&op)) &&
            !isa<kt::SliceOp>(group.back()))
          if (Operation *p = convOutputPermute(group.back()))
            group.push_back(p);
        for (Operation *member : llvm::drop_begin(group))
          claimed.insert(member);
        groups[&op] = std::move(group);
      }
    }
    if (!kernels.empty())
      glue.push_back(caller);
    for (Operation *op : kernels) {
      ArrayRef<Operation *> group = groups[op];
      // Arguments: the operands, once each, constants excepted (cloned).
      SmallVector<Value> args;
      SmallVector<Operation *> constants;
      // Transposes cloned into this kernel; the kernel takes their inputs.
      SmallVector<Operation *> inner;
      SmallVector<Value> operands;
      Operation *prologue = prologues.lookup(op);
      for (Operation *member : group)
        for (Value v : member->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (def && llvm::is_contained(group, def))
            continue; // computed in the kernel
          if (def && (llvm::is_contained(absorbed, def) || def == prologue)) {
            Value src = def->getOperand(0);
            // A depthwise conv's prologue read through its absorbed
            // permute: both in the kernel, the prologue first.
            if (prologue && def != prologue && src.getDefiningOp() == prologue) {
              if (!llvm::is_contained(inner, prologue))
                inner.push_back(prologue);
              src = prologue->getOperand(0);
            }
            if (!llvm::is_contained(inner, def))
              inner.push_back(def);
            operands.push_back(src);
          } else {
            operands.push_back(v);
          }
        }
      for (Value v : operands) {
        Operation *def = v.getDefiningOp();
        if (def && def->hasTrait<OpTrait::ConstantLike>() &&
            def->getNumOperands() == 0 && def->getNumResults() == 1) {
          if (!llvm::is_contained(constants, def))
            constants.push_back(def);
        } else if (!llvm::is_contained(args, v)) {
          args.push_back(v);
        }
      }
      // Results: the used ones (all when none is, so that the kernel still
      // computes what the op says). A multi-result op whose other results
      // are dead (kt.batch_norm_train whose normalization the partition
      // left to pointwise ops: only its statistics are read) then computes
      // only what is read: the kernel's lowering drops the dead loops.
      // (Of a group: its last op's, every other result's only use being
      // the next op of the group.)
      Operation *last = group.back();
      SmallVector<unsigned> kept;
      for (OpResult r : last->getResults())
        if (!r.use_empty())
          kept.push_back(r.getResultNumber());
      if (kept.empty())
        for (OpResult r : last->getResults())
          kept.push_back(r.getResultNumber());
      SmallVector<Type> resultTypes;
      for (unsigned i : kept)
        resultTypes.push_back(last->getResult(i).getType());
      OpBuilder b(ctx);
      auto fnType = b.getFunctionType(ValueRange(args).getTypes(),
                                      resultTypes);
      auto kernel = func::FuncOp::create(b, op->getLoc(),
                                         baseName(group, prologue), fnType);
      kernel.setPrivate();
      kernel->setAttr(kKernelFunctionAttr, UnitAttr::get(ctx));
      // Kept a function through LLVM (`passthrough` becomes llvm.func's
      // LLVM attributes): inlined at every call site, the kernels would make
      // one huge function for the LLVM optimizer and codegen again.
      kernel->setAttr("passthrough",
                      b.getArrayAttr({b.getStringAttr("noinline")}));
      Block *body = kernel.addEntryBlock();
      IRMapping map;
      for (auto [v, arg] : llvm::zip(args, body->getArguments())) {
        map.map(v, arg);
        arg.setLoc(v.getLoc());
      }
      b.setInsertionPointToStart(body);
      for (Operation *c : constants)
        b.clone(*c, map);
      for (Operation *t : inner)
        b.clone(*t, map);
      Operation *clone = nullptr;
      for (Operation *member : group)
        clone = b.clone(*member, map);
      SmallVector<Value> returned;
      for (unsigned i : kept)
        returned.push_back(clone->getResult(i));
      func::ReturnOp::create(b, op->getLoc(), returned);

      // The same kernel already outlined: call that one.
      // (A kt.fusion's `kernel` name holds its index: not part of the key.)
      std::string key;
      {
        auto fusion = dyn_cast<kt::FusionOp>(clone);
        StringAttr name = fusion ? fusion.getKernelAttr() : StringAttr();
        if (fusion)
          fusion.setKernel("kernel");
        llvm::scope_exit restore([&] {
          if (fusion)
            fusion.setKernelAttr(name);
        });
        key = kernelKey(fnType, body);
      }
      func::FuncOp callee;
      auto found = byBody.find(key);
      if (found != byBody.end()) {
        callee = found->second;
        kernel.erase();
        ++stats.reused;
      } else {
        symbols.insert(kernel); // renames it when the name is taken
        byBody[key] = kernel;
        callee = kernel;
        ++stats.kernels;
      }
      // At the group's last op: every argument is defined before the op
      // of the group that reads it.
      b.setInsertionPoint(last);
      auto call = func::CallOp::create(b, op->getLoc(), callee, args);
      for (auto [i, r] : llvm::zip(kept, call.getResults()))
        last->getResult(i).replaceAllUsesWith(r);
      for (Operation *member : llvm::reverse(group))
        member->erase();
      // Its one use was `op`, or `op`'s absorbed permute (erased below).
      if (prologue && prologue->use_empty())
        prologue->erase();
      else if (prologue)
        readByAbsorbed.push_back(prologue);
      ++stats.calls;
    }
    // Every user of an absorbed transpose (permute) was a product (conv),
    // now outlined.
    // (Should one keep a user, it stays in the caller and lowers there.)
    for (Operation *t : absorbed)
      if (t->use_empty())
        t->erase();
    for (Operation *p : readByAbsorbed)
      if (p->use_empty())
        p->erase();
  }
  // The callers are glue: one call per kernel site, and memref descriptors
  // moved between them, in one basic block that grows with the program.
  // LLVM's post-RA list scheduler, on for the host's own tuning (znver3,
  // ...), is quadratic in a block's memory operations: 4.2 of 4.6 s of
  // machine code for the 2700-line caller of resnet18's training forward
  // (issue 13). Generic tuning turns it off for the callers only (their
  // instruction order does not matter; the kernels keep the host's).
  for (func::FuncOp caller : glue) {
    SmallVector<Attribute> passthrough;
    if (auto old = caller->getAttrOfType<ArrayAttr>("passthrough"))
      passthrough.assign(old.begin(), old.end());
    Builder b(ctx);
    // A caller's own tuning, if it has one, stays.
    if (llvm::any_of(passthrough, [](Attribute a) {
          auto pair = dyn_cast<ArrayAttr>(a);
          auto key = pair && pair.size() == 2
                         ? dyn_cast<StringAttr>(pair[0])
                         : StringAttr();
          return key && key.getValue() == "tune-cpu";
        }))
      continue;
    passthrough.push_back(b.getArrayAttr(
        {b.getStringAttr("tune-cpu"), b.getStringAttr("generic")}));
    if (!llvm::any_of(passthrough, [](Attribute a) {
          auto s = dyn_cast<StringAttr>(a);
          return s && s.getValue() == "optnone";
        })) {
      passthrough.push_back(b.getStringAttr("optnone"));
      passthrough.push_back(b.getStringAttr("noinline"));
    }
    caller->setAttr("passthrough", b.getArrayAttr(passthrough));
  }
  // Constants only the kernels read are dead now.
  SmallVector<Operation *> dead;
  for (func::FuncOp caller : callers)
    for (Operation &op : caller.getBody().front().without_terminator())
      if (op.hasTrait<OpTrait::ConstantLike>() && op.use_empty() &&
          isMemoryEffectFree(&op))
        dead.push_back(&op);
  for (Operation *op : dead)
    op->erase();
  return stats;
}
