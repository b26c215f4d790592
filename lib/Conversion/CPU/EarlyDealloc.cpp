//===- EarlyDealloc.cpp - Free kernel results after their last use --------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h (deallocCallResultsEarly).
// The ownership-based deallocation pass frees what a block owns at the end
// of the block, in one bufferization.dealloc whose operands it then
// simplifies pairwise. After kiln-cpu-outline-kernels a compiled function is
// a straight line of kernel calls, each returning a fresh buffer: with N
// kernels every intermediate stayed alive until the function returned (peak
// memory: all of them) and buffer-deallocation-simplification took O(N^2)
// (1.4 s of 2 s at 1000 kt ops). Here each such buffer is freed right after
// its last use and leaves the block's dealloc; before that, the fresh
// buffers the function returns leave it too (handOverReturnedCallResults:
// a training forward returns hundreds of saved activations).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

/// Whether result `index` of every call of `callee` is a buffer the callee
/// allocated (memref.alloc, through casts), distinct from its other
/// results and from views of them: the caller then owns it alone. (A kernel
/// returning a buffer and a view of it, `memref.expand_shape` of a sum's
/// result for its keepdim and scalar forms, made the caller free the
/// buffer early and again through the view: a double free.)
static bool computeReturnsFreshBuffer(func::FuncOp callee, unsigned index) {
  if (!callee || callee.isExternal())
    return false;
  bool fresh = true;
  callee.walk([&](func::ReturnOp ret) {
    auto allocOf = [](Value v) -> Operation * {
      while (auto cast = v.getDefiningOp<memref::CastOp>())
        v = cast.getSource();
      return v.getDefiningOp<memref::AllocOp>();
    };
    // The value `v` is a view of (through every view-like op).
    auto rootOf = [](Value v) {
      while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
        v = view.getViewSource();
      return v;
    };
    Operation *mine = allocOf(ret.getOperand(index));
    if (!mine) {
      fresh = false;
      return;
    }
    for (auto [i, other] : llvm::enumerate(ret.getOperands()))
      if (i != index && isa<BaseMemRefType>(other.getType()) &&
          rootOf(other).getDefiningOp() == mine)
        fresh = false;
  });
  return fresh;
}

namespace {
/// computeReturnsFreshBuffer once per (callee, result): a kernel function
/// is called from many sites (one per layer).
struct FreshResults {
  llvm::DenseMap<std::pair<Operation *, unsigned>, bool> known;
  bool operator()(func::FuncOp callee, unsigned index) {
    auto key = std::make_pair(callee.getOperation(), index);
    auto it = known.find(key);
    if (it != known.end())
      return it->second;
    return known[key] = computeReturnsFreshBuffer(callee, index);
  }
};
} // namespace

/// The values that may alias `root` (root included), found through the
/// users of each: views (and any other op with memref results, as views)
/// and calls (their memref results, unless the callee returns fresh
/// buffers). Fails when an alias escapes: a terminator uses it (returned,
/// yielded), or an op other than `own` deallocates it.
static FailureOr<SetVector<Value>>
aliasesOf(Value root, Operation *own, SymbolTableCollection &symbols,
          FreshResults &returnsFreshBuffer) {
  SetVector<Value> aliases;
  aliases.insert(root);
  for (unsigned i = 0; i < aliases.size(); ++i) {
    for (OpOperand &use : aliases[i].getUses()) {
      Operation *user = use.getOwner();
      if (user == own)
        continue;
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          isa<bufferization::DeallocOp, memref::DeallocOp,
              bufferization::CloneOp>(user))
        return failure();
      auto call = dyn_cast<func::CallOp>(user);
      func::FuncOp callee =
          call ? symbols.lookupNearestSymbolFrom<func::FuncOp>(
                     call, call.getCalleeAttr())
               : nullptr;
      for (OpResult r : user->getResults()) {
        if (!isa<BaseMemRefType>(r.getType()))
          continue;
        if (call && returnsFreshBuffer(callee, r.getResultNumber()))
          continue;
        aliases.insert(r);
      }
    }
  }
  return aliases;
}

/// The buffers a call returned fresh that `dealloc` retains because its
/// block's func.return returns them (directly or through views and casts)
/// leave it: the dealloc neither frees a retained buffer nor needs it to
/// decide about the others, since nothing else it lists may alias a fresh
/// buffer of this block. The buffer's ownership goes to the return (the
/// dealloc's ownership result for it is `true`: it was listed with a true
/// condition). A training forward returns hundreds of saved activations,
/// and upstream's buffer-deallocation-simplification was quadratic in that
/// one dealloc. Left as they were: a buffer returned twice or with a view of
/// it (the caller would free it twice), one with an alias the dealloc lists
/// or retains otherwise, or used by another terminator, dealloc or clone, or
/// by an op that may return an alias (arith.select, a call of a callee that
/// may return its argument). Returns the dealloc to continue with (null when
/// it was erased) and adds the buffers handed over to `handed`.
/// The memrefs and conditions of `dealloc`'s entries that `drop` does not
/// mark; the ops that made the dropped memrefs (their metadata or the
/// buffer) go to `dead`.
static void keptEntries(bufferization::DeallocOp dealloc, ArrayRef<bool> drop,
                        SmallVectorImpl<Value> &memrefs,
                        SmallVectorImpl<Value> &conditions,
                        SmallVectorImpl<Operation *> &dead) {
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(dealloc.getMemrefs(), dealloc.getConditions()))) {
    if (drop[i]) {
      dead.push_back(std::get<0>(pair).getDefiningOp());
      continue;
    }
    memrefs.push_back(std::get<0>(pair));
    conditions.push_back(std::get<1>(pair));
  }
}

static bufferization::DeallocOp
handOverReturnedCallResults(bufferization::DeallocOp dealloc,
                            SymbolTableCollection &symbols,
                            FreshResults &returnsFreshBuffer,
                            unsigned &handed) {
  Block *block = dealloc->getBlock();
  auto ret = dyn_cast<func::ReturnOp>(block->getTerminator());
  if (!ret)
    return dealloc;
  ValueRange retainedList = dealloc.getRetained();
  llvm::DenseMap<Value, unsigned> retainedAt;
  for (auto [j, r] : llvm::enumerate(retainedList))
    // A value retained twice is left alone (-1 marks it).
    if (!retainedAt.try_emplace(r, j).second)
      retainedAt[r] = ~0u;
  llvm::DenseSet<Value> listed(dealloc.getMemrefs().begin(),
                               dealloc.getMemrefs().end());
  SmallVector<bool> dropMemref(dealloc.getMemrefs().size(), false);
  SmallVector<bool> dropRetained(retainedList.size(), false);
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(dealloc.getMemrefs(), dealloc.getConditions()))) {
    auto [memref, cond] = pair;
    if (!matchPattern(cond, m_One()))
      continue;
    // The fresh buffer: a call's result (listed as the base buffer of its
    // metadata), or a clone or alloc of this block (listed as it is, or so).
    auto meta = memref.getDefiningOp<memref::ExtractStridedMetadataOp>();
    if (meta && (meta->getBlock() != block || memref != meta.getBaseBuffer() ||
                 !memref.hasOneUse()))
      continue;
    Value fresh = meta ? meta.getSource() : memref;
    Operation *def = fresh.getDefiningOp();
    if (!def || def->getBlock() != block)
      continue;
    if (auto call = dyn_cast<func::CallOp>(def)) {
      if (!returnsFreshBuffer(symbols.lookupNearestSymbolFrom<func::FuncOp>(
                                  call, call.getCalleeAttr()),
                              cast<OpResult>(fresh).getResultNumber()))
        continue;
    } else if (!isa<bufferization::CloneOp, memref::AllocOp>(def)) {
      continue;
    }
    // The aliases of the buffer: it, its views and casts. Exactly one
    // operand of the return may be one of them, and the dealloc may list
    // or retain no other.
    SetVector<Value> aliases;
    aliases.insert(fresh);
    Value returned;
    bool ok = true;
    for (unsigned k = 0; ok && k < aliases.size(); ++k) {
      Value a = aliases[k];
      for (OpOperand &use : a.getUses()) {
        Operation *user = use.getOwner();
        if (meta && user == meta.getOperation())
          continue;
        if (user == dealloc.getOperation()) {
          // Retained, or listed as entry `i` itself.
          unsigned n = use.getOperandNumber();
          if (n == i && a == memref)
            continue;
          if (n < dealloc.getMemrefs().size() +
                      dealloc.getConditions().size()) {
            ok = false;
            break;
          }
          continue;
        }
        if (user == ret.getOperation()) {
          if (returned) {
            ok = false;
            break;
          }
          returned = a;
          continue;
        }
        if (user->hasTrait<OpTrait::IsTerminator>() ||
            isa<bufferization::DeallocOp, memref::DeallocOp,
                bufferization::CloneOp, memref::ExtractStridedMetadataOp>(
                user)) {
          ok = false;
          break;
        }
        auto viewSourceIs = [&](Operation *op) {
          if (isa<memref::CastOp>(op))
            return true;
          auto view = dyn_cast<ViewLikeOpInterface>(op);
          return view && view.getViewSource() == a &&
                 op->getNumResults() == 1;
        };
        if (viewSourceIs(user)) {
          aliases.insert(user->getResult(0));
          continue;
        }
        auto userCall = dyn_cast<func::CallOp>(user);
        func::FuncOp callee =
            userCall ? symbols.lookupNearestSymbolFrom<func::FuncOp>(
                           userCall, userCall.getCalleeAttr())
                     : nullptr;
        for (OpResult r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()) &&
              !(userCall && returnsFreshBuffer(callee, r.getResultNumber())))
            ok = false;
        if (!ok)
          break;
      }
    }
    if (!ok || !returned)
      continue;
    auto at = retainedAt.find(returned);
    if (at == retainedAt.end() || at->second == ~0u)
      continue;
    Value listedAs = memref;
    if (llvm::any_of(aliases, [&](Value a) {
          return (a != returned && retainedAt.count(a)) ||
                 (a != listedAs && listed.contains(a));
        }))
      continue;
    dropMemref[i] = true;
    dropRetained[at->second] = true;
    ++handed;
  }
  if (!llvm::is_contained(dropMemref, true))
    return dealloc;

  SmallVector<Value> memrefs, conditions, retained;
  SmallVector<Operation *> dead;
  keptEntries(dealloc, dropMemref, memrefs, conditions, dead);
  for (auto [j, r] : llvm::enumerate(retainedList))
    if (!dropRetained[j])
      retained.push_back(r);
  OpBuilder b(dealloc);
  Location loc = dealloc.getLoc();
  Value owned = arith::ConstantIntOp::create(b, loc, 1, 1);
  bufferization::DeallocOp replacement;
  if (!memrefs.empty())
    replacement = bufferization::DeallocOp::create(b, loc, memrefs,
                                                   conditions, retained);
  // With nothing left to free, no other retained value is owned here.
  Value notOwned;
  unsigned next = 0;
  for (auto [j, old] : llvm::enumerate(dealloc.getUpdatedConditions())) {
    Value now;
    if (dropRetained[j])
      now = owned;
    else if (replacement)
      now = replacement.getUpdatedConditions()[next++];
    else
      now = notOwned ? notOwned
                     : (notOwned = arith::ConstantIntOp::create(b, loc, 0, 1));
    old.replaceAllUsesWith(now);
  }
  dealloc->erase();
  for (Operation *op : dead)
    if (op->use_empty())
      op->erase();
  if (owned.use_empty())
    owned.getDefiningOp()->erase();
  return replacement;
}

kiln::cpu::EarlyDeallocStats
kiln::cpu::deallocCallResultsEarly(ModuleOp module) {
  SymbolTableCollection symbols;
  FreshResults returnsFreshBuffer;
  unsigned freed = 0;
  SmallVector<bufferization::DeallocOp> deallocs;
  module.walk([&](bufferization::DeallocOp d) { deallocs.push_back(d); });
  unsigned handed = 0;
  for (bufferization::DeallocOp dealloc : deallocs) {
    dealloc = handOverReturnedCallResults(dealloc, symbols, returnsFreshBuffer,
                                          handed);
    if (!dealloc)
      continue;
    Block *block = dealloc->getBlock();
    llvm::DenseSet<Value> retained(dealloc.getRetained().begin(),
                                   dealloc.getRetained().end());
    llvm::DenseSet<Value> listed(dealloc.getMemrefs().begin(),
                                 dealloc.getMemrefs().end());
    SmallVector<bool> drop(dealloc.getMemrefs().size(), false);
    for (auto [i, pair] : llvm::enumerate(
             llvm::zip(dealloc.getMemrefs(), dealloc.getConditions()))) {
      auto [memref, cond] = pair;
      if (!matchPattern(cond, m_One()))
        continue;
      // The base buffer of a call's result, extracted for this dealloc.
      auto meta = memref.getDefiningOp<memref::ExtractStridedMetadataOp>();
      if (!meta || meta->getBlock() != block ||
          memref != meta.getBaseBuffer() || !meta.getBaseBuffer().hasOneUse())
        continue;
      auto result = dyn_cast<OpResult>(meta.getSource());
      auto call = result ? dyn_cast<func::CallOp>(result.getOwner()) : nullptr;
      if (!call || call->getBlock() != block ||
          !returnsFreshBuffer(symbols.lookupNearestSymbolFrom<func::FuncOp>(
                                  call, call.getCalleeAttr()),
                              result.getResultNumber()))
        continue;
      FailureOr<SetVector<Value>> aliases =
          aliasesOf(result, meta, symbols, returnsFreshBuffer);
      if (failed(aliases) ||
          llvm::any_of(*aliases, [&](Value a) {
            return retained.contains(a) || (a != result && listed.contains(a));
          }))
        continue;
      // After the last op of the block that uses an alias (none when a use
      // is not before the dealloc: then the buffer is left to it).
      Operation *last = call;
      for (Value a : *aliases)
        for (Operation *user : a.getUsers()) {
          if (user == meta || !last)
            continue;
          Operation *inBlock = block->findAncestorOpInBlock(*user);
          if (!inBlock || !inBlock->isBeforeInBlock(dealloc))
            last = nullptr;
          else if (last->isBeforeInBlock(inBlock))
            last = inBlock;
        }
      if (!last)
        continue;
      OpBuilder b(last->getContext());
      b.setInsertionPointAfter(last);
      memref::DeallocOp::create(b, call.getLoc(), result);
      drop[i] = true;
      ++freed;
    }
    if (!llvm::is_contained(drop, true))
      continue;
    SmallVector<Value> memrefs, conditions;
    SmallVector<Operation *> dead;
    keptEntries(dealloc, drop, memrefs, conditions, dead);
    OpBuilder b(dealloc);
    auto replacement = bufferization::DeallocOp::create(
        b, dealloc.getLoc(), memrefs, conditions, dealloc.getRetained());
    dealloc->replaceAllUsesWith(replacement);
    dealloc->erase();
    for (Operation *op : dead)
      if (op->use_empty())
        op->erase();
  }
  return {freed, handed};
}

/// Whether a memref of `type` addresses its elements exactly as the
/// identity layout of its shape does: offset 0 and the row-major strides
/// (a unit dim's stride is never used). E.g. a leading-dim subview at
/// offset 0, `memref<32x32xf32, strided<[32, 1]>>`: its cast to
/// `memref<32x32xf32>` is exact and needs no copy.
static bool addressesLikeIdentity(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || offset != 0)
    return false;
  int64_t running = 1; // ShapedType::kDynamic once a dynamic size is passed
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    int64_t size = type.getDimSize(d);
    if (size == 1)
      continue;
    if (ShapedType::isDynamic(running) || strides[d] != running)
      return false;
    running = ShapedType::isDynamic(size) ? ShapedType::kDynamic
                                          : running * size;
  }
  return true;
}

unsigned kiln::cpu::copyStridedCallOperands(ModuleOp module) {
  unsigned copied = 0;
  module.walk([&](func::CallOp call) {
    OpBuilder b(call);
    for (OpOperand &operand : call->getOpOperands()) {
      auto cast = operand.get().getDefiningOp<memref::CastOp>();
      if (!cast)
        continue;
      auto from = dyn_cast<MemRefType>(cast.getSource().getType());
      auto to = dyn_cast<MemRefType>(cast.getType());
      if (!from || !to || from.getLayout().isIdentity() ||
          !to.getLayout().isIdentity() || addressesLikeIdentity(from))
        continue;
      Location loc = call.getLoc();
      SmallVector<Value> dynSizes;
      for (int64_t d = 0; d < to.getRank(); ++d)
        if (to.isDynamicDim(d))
          dynSizes.push_back(
              memref::DimOp::create(b, loc, cast.getSource(), d));
      Value fresh = memref::AllocOp::create(b, loc, to, dynSizes,
                                            b.getI64IntegerAttr(64));
      memref::CopyOp::create(b, loc, cast.getSource(), fresh);
      operand.set(fresh);
      ++copied;
      if (cast->use_empty())
        cast->erase();
    }
  });
  return copied;
}
