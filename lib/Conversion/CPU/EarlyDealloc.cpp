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
// its last use and leaves the block's dealloc.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

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

unsigned kiln::cpu::deallocCallResultsEarly(ModuleOp module) {
  SymbolTableCollection symbols;
  FreshResults returnsFreshBuffer;
  unsigned freed = 0;
  SmallVector<bufferization::DeallocOp> deallocs;
  module.walk([&](bufferization::DeallocOp d) { deallocs.push_back(d); });
  for (bufferization::DeallocOp dealloc : deallocs) {
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
    for (auto [i, pair] : llvm::enumerate(
             llvm::zip(dealloc.getMemrefs(), dealloc.getConditions()))) {
      if (drop[i]) {
        dead.push_back(std::get<0>(pair).getDefiningOp());
        continue;
      }
      memrefs.push_back(std::get<0>(pair));
      conditions.push_back(std::get<1>(pair));
    }
    OpBuilder b(dealloc);
    auto replacement = bufferization::DeallocOp::create(
        b, dealloc.getLoc(), memrefs, conditions, dealloc.getRetained());
    dealloc->replaceAllUsesWith(replacement);
    dealloc->erase();
    for (Operation *op : dead)
      if (op->use_empty())
        op->erase();
  }
  return freed;
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
