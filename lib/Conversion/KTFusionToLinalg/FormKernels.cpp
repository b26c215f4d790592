//===- FormKernels.cpp - One kernel per kt.fusion --------------------------===//
//
// Part of Kiln. Kernel formation (kiln-form-kernels). For each kt.fusion
// whose body kiln-lower-to-linalg has lowered:
//
// 1. elementwise fusion inside the body only (the region is isolated, so the
//    greedy driver never reaches ops of other groups): a chain of pointwise
//    generics becomes one generic, pointwise prologues fold into the
//    reductions that read them;
// 2. each root (an op producing a yielded value) is tiled along its outer
//    parallel dims with scf.forall and the group's producers are fused into
//    the tile (scf::tileConsumerAndFuseProducersUsingSCF): softmax becomes
//    one forall over row blocks computing max, sum and the normalization for
//    its rows; linear + gelu one forall whose body holds the matmul tile and
//    the epilogue;
// 3. the forall gets `kiln.kernel = "<kt.fusion name>"` and the location of
//    the kt.fusion; the body is inlined in place of the kt.fusion.
//
// Tile sizes: the loops of the root split into parallel and reduction loops.
// The outer parallel loops are all parallel loops when the root reduces (its
// reduction loops stay whole: each tile computes whole rows); for a
// pointwise root reading results of reductions of the group (an epilogue),
// the loops indexing those results (the rows: softmax over dim 0 tiles the
// columns); else the parallel loops but the last for a contraction (M of a
// matmul; N and K stay whole) or for a pointwise root of rank >= 2 (the
// innermost dim stays whole and contiguous). The innermost outer loop gets
// `tileRows`, the others 1; a 1-D pointwise root gets `tileElements`. A
// yielded value finished after a rank-0 reduction of every element (a
// loss's mean) has for roots the linalg ops with parallel loops that the
// reduction reads (collectRoots). A
// producer that every tile reads whole (a transposed weight) is not fused:
// it is computed once before the loop.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KTFusionToLinalg/FormKernels.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"

#include "kiln/Dialect/KT/IR/KTFusionOps.h"
#include "kiln/Support/BoundedRewrite.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/SmallBitVector.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

/// Cap on the rewrites of each greedy cleanup (it stops early, not hangs).
static constexpr int64_t kMaxCleanupRewrites = 20000;
/// Ops (with its terminator) of a generic whose body elementwise fusion may
/// copy into another consumer while the generic stays for its other uses
/// (shouldFuseElementwise).
static constexpr int64_t kMaxDuplicatedBody = 32;
/// The largest body (ops, about: each side at most half) and operand count
/// elementwise fusion builds.
static constexpr int64_t kMaxFusedBody = 1024;
static constexpr int64_t kMaxFusedOperands = 256;
using namespace kiln;

namespace {

bool holdsKT(kt::FusionOp fusion) {
  bool found = false;
  fusion.getBody().walk([&](Operation *op) {
    if (isa<kt::KTDialect>(op->getDialect()) && !isa<kt::YieldOp>(op))
      found = true;
  });
  return found;
}

/// Whether `v` is computed from a reduction of the group (not a
/// contraction): the reduction itself, or pointwise ops over its results
/// (softmax's 1/sum per row), followed a few producers deep.
bool fromReduction(Value v, int depth = 4) {
  auto producer = v.getDefiningOp<linalg::LinalgOp>();
  if (!producer || linalg::isaContractionOpInterface(producer))
    return false;
  if (producer.getNumReductionLoops() != 0)
    return true;
  if (depth == 0)
    return false;
  for (OpOperand *in : producer.getDpsInputOperands())
    if (fromReduction(in->get(), depth - 1))
      return true;
  return false;
}

/// The loops of `root` that index the values it reads from reductions of the
/// group (the rows those reductions computed), in loop order.
SmallVector<unsigned> rowLoops(linalg::LinalgOp root) {
  llvm::SmallBitVector dims(root.getNumLoops());
  for (OpOperand *in : root.getDpsInputOperands()) {
    if (!fromReduction(in->get()))
      continue;
    for (AffineExpr e : root.getMatchingIndexingMap(in).getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        dims.set(d.getPosition());
  }
  SmallVector<unsigned> result;
  for (unsigned d : dims.set_bits())
    result.push_back(d);
  return result;
}

/// Adds to `roots` the op computing the yielded value `v` when it is a
/// linalg op with a parallel loop. A value finished by ops that have none
/// (a rank-0 reduction of every element, then scalar arith,
/// tensor.extract / tensor.from_elements: a loss's mean over its per-row
/// losses) gives instead the linalg ops with parallel loops that those
/// reductions read (the per-row part: the kernel), and the finishing ops
/// run after the kernel, once. A yielded value that is not computed by a
/// linalg op and not through such a reduction gives no root.
void collectRoots(Value v, Block &body, bool afterReduceAll,
                  llvm::SetVector<Operation *> &roots,
                  DenseSet<Operation *> &seen, bool yielded = true) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body || !seen.insert(def).second)
    return;
  if (auto l = dyn_cast<linalg::LinalgOp>(def)) {
    if (l.getNumParallelLoops() != 0) {
      if (yielded || afterReduceAll)
        roots.insert(def);
      return;
    }
    afterReduceAll |= l.getNumReductionLoops() != 0;
  } else if (!afterReduceAll &&
             !isa<tensor::FromElementsOp, tensor::ExtractOp>(def) &&
             !isa<arith::ArithDialect>(def->getDialect())) {
    return;
  }
  for (Value o : def->getOperands())
    collectRoots(o, body, afterReduceAll, roots, seen, /*yielded=*/false);
}

SmallVector<OpFoldResult> tileSizesFor(TilingInterface root,
                                       const KernelFormationOptions &options) {
  OpBuilder b(root);
  SmallVector<utils::IteratorType> iters = root.getLoopIteratorTypes();
  SmallVector<int64_t> sizes(iters.size(), 0);
  SmallVector<unsigned> parallel;
  bool reduces = false;
  for (auto [i, it] : llvm::enumerate(iters)) {
    if (it == utils::IteratorType::parallel)
      parallel.push_back(i);
    else
      reduces = true;
  }
  bool contraction = false;
  SmallVector<unsigned> rows;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(root.getOperation())) {
    contraction = linalg::isaContractionOpInterface(linalgOp);
    if (!reduces)
      rows = rowLoops(linalgOp);
  }
  SmallVector<unsigned> outer(parallel);
  if (!rows.empty()) {
    // An epilogue of reductions: tile the rows they computed, so that each
    // tile computes its rows' reductions (a per-row epilogue whose loops
    // are all rows, cross_entropy's per-row loss, by `tileRows` as the
    // reduction itself would be, not as a 1-D pointwise op).
    outer = rows;
  } else if (contraction || !reduces) {
    if (!outer.empty())
      outer.pop_back();
    if (outer.empty() && !contraction && parallel.size() == 1)
      sizes[parallel[0]] = options.tileElements;
  }
  for (unsigned d : outer)
    sizes[d] = 1;
  if (!outer.empty())
    sizes[outer.back()] = options.tileRows;
  SmallVector<OpFoldResult> result;
  for (int64_t s : sizes)
    result.push_back(b.getIndexAttr(s));
  return result;
}

/// A generic reading `tensor.expand_shape %src` that only adds unit dims,
/// through an indexing map with constant 0 at those dims (a kept dim of a
/// keepdim reduction, broadcast), reads %src instead. So the consumer's tile
/// reaches the reduction itself and fuses it.
struct FoldUnitExpandIntoGeneric : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto expand = in->get().getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand)
        continue;
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      AffineMap map = op.getMatchingIndexingMap(in);
      llvm::SmallBitVector drop(shape.size());
      bool ok = true;
      for (ReassociationIndices group : expand.getReassociationIndices()) {
        // Keep the one dim that is not a static 1 (or the first if all are).
        int64_t keep = group.front();
        unsigned nonUnit = 0;
        for (int64_t d : group)
          if (shape[d] != 1) {
            keep = d;
            ++nonUnit;
          }
        if (nonUnit > 1) {
          ok = false;
          break;
        }
        for (int64_t d : group)
          if (d != keep) {
            auto c = dyn_cast<AffineConstantExpr>(map.getResult(d));
            if (!c || c.getValue() != 0)
              ok = false;
            drop.set(d);
          }
      }
      if (!ok || drop.none())
        continue;
      SmallVector<AffineExpr> results;
      for (unsigned i = 0; i < map.getNumResults(); ++i)
        if (!drop.test(i))
          results.push_back(map.getResult(i));
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[in->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      rw.modifyOpInPlace(op, [&] {
        in->set(expand.getSrc());
        op.setIndexingMapsAttr(rw.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

/// A slice that takes the whole source (static zero offsets, unit strides,
/// the source's static sizes): it does not depend on the tile.
bool isWholeSlice(tensor::ExtractSliceOp slice) {
  auto type = slice.getSourceType();
  if (!type.hasStaticShape())
    return false;
  for (auto [o, sz, st, dim] :
       llvm::zip(slice.getMixedOffsets(), slice.getMixedSizes(),
                 slice.getMixedStrides(), type.getShape()))
    if (getConstantIntValue(o) != 0 || getConstantIntValue(st) != 1 ||
        getConstantIntValue(sz) != dim)
      return false;
  return true;
}

/// Whether elementwise fusion may fold the producer of `use` into its
/// consumer. Not when the consumer reads it through a broadcast (fewer
/// results than the consumer's loops: a per-row statistic read by every
/// element of the row) and the producer computes more than casts and moves:
/// the fused body would redo the producer's work once per element instead
/// of once per row (softmax's 1/sum, an f64 divide, and layer_norm's
/// 1/sqrt(var + eps) ran per element of the normalization). Such a producer
/// stays a generic of its own, which the root's tiling fuses into the tile
/// (computed once per row of the tile).
bool shouldFuseElementwise(OpOperand *use) {
  auto consumer = dyn_cast<linalg::LinalgOp>(use->getOwner());
  auto producer = use->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer)
    return true;
  // A producer marked to be stored once (softmax's exp(x - max)) is read,
  // not recomputed, by each consumer; its in-place update (the
  // normalization) is not folded into an epilogue, which would write it to
  // an extra output besides the epilogue's.
  if (isMaterialized(producer) || updatesMaterialized(producer))
    return false;
  // A producer with a run-time check (cross_entropy's target range check:
  // an scf.if calling the error function) is not folded: folded, the
  // producer stays for its side effect (a generic without results) and the
  // check runs twice, the second time outside the kernel.
  if (!isMemoryEffectFree(producer))
    return false;
  // A per-row value (computed from the group's reductions: cross_entropy's
  // per-row loss) read by a reduction of every element (the loss's mean)
  // stays a generic of its own: it is the kernel's root, tiled by rows with
  // its reductions (collectRoots), and the rank-0 reduction runs after the
  // kernel over its results. Folded, the rank-0 reduction would be the only
  // consumer and the row statistics separate kernels (the max computed
  // twice, the input read three times).
  if (consumer.getNumParallelLoops() == 0 &&
      producer.getNumParallelLoops() != 0 &&
      llvm::any_of(producer.getDpsInputOperands(), [](OpOperand *in) {
        return fromReduction(in->get());
      }))
    return false;
  // Fusing a producer into one of the consumer's operands replaces that
  // operand by the producer's operands; an operand the consumer takes twice
  // (y = x + x) is fused twice. Along a chain where every value is used
  // twice (x = max(y, b); y' = x + x: an unrolled adaptive max pool and its
  // backward masks) the fused consumer's operands and body doubled per step
  // and compile time grew as 2^chain (a 20-step chain never finished).
  // Operands that repeat (same value, same map) are merged first by the
  // canonicalization in the same pattern set
  // (populateEraseUnusedOperandsAndResultsPatterns); the fusion is tried
  // again on the merged op.
  AffineMap useMap = consumer.getMatchingIndexingMap(use);
  for (OpOperand &other : consumer->getOpOperands())
    if (&other != use && other.get() == use->get() &&
        consumer.getMatchingIndexingMap(&other) == useMap)
      return false;
  // Backstops for what merging does not catch: a producer that stays for
  // its other uses gets its body copied into this consumer (small bodies
  // only: recomputing a few ops beats a round trip through memory), and no
  // consumer grows past a size where compile time, not memory traffic,
  // dominates.
  // (Counted up to the cap: a block's size() walks the whole list.)
  auto bodyLarger = [](linalg::LinalgOp op, int64_t cap) {
    int64_t n = 0;
    for ([[maybe_unused]] Operation &o : *op.getBlock())
      if (++n > cap)
        return true;
    return false;
  };
  if (!producer->hasOneUse() && bodyLarger(producer, kMaxDuplicatedBody))
    return false;
  if (consumer->getNumOperands() + producer->getNumOperands() >
          kMaxFusedOperands ||
      bodyLarger(consumer, kMaxFusedBody / 2) ||
      bodyLarger(producer, kMaxFusedBody / 2))
    return false;
  if (useMap.getNumResults() >= consumer.getNumLoops() ||
      useMap.getNumResults() == 0)
    return true;
  for (Operation &op : producer.getBody()->without_terminator())
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp, arith::ExtUIOp,
             arith::TruncIOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::FPToSIOp, arith::FPToUIOp, arith::BitcastOp,
             arith::IndexCastOp, arith::ConstantOp, linalg::IndexOp>(op))
      return false;
  return true;
}

/// Canonicalization and CSE inside the (isolated) group only.
void cleanUp(kt::FusionOp fusion) {
  Region &region = fusion.getBody();
  MLIRContext *ctx = fusion.getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *d : ctx->getLoadedDialects())
    d->getCanonicalizationPatterns(patterns);
  // Not scf.forall's: they would fold a one-tile kernel into straight code
  // and drop its name (the pipeline's canonicalizer still does).
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    if (op.getStringRef() != scf::ForallOp::getOperationName())
      op.getCanonicalizationPatterns(patterns, ctx);
  // Bounded, and reported when the cap is reached (kiln/Support/
  // BoundedRewrite.h): the run-time broadcast copies of `?` dims once made
  // upstream patterns undo each other until the cap (seconds per group).
  (void)applyPatternsBounded(
      region, std::move(patterns),
      GreedyRewriteConfig().setMaxNumRewrites(kMaxCleanupRewrites), fusion,
      "kernel formation (cleanup of '" + fusion.getKernel().str() + "')");
  IRRewriter rw(ctx);
  DominanceInfo dom;
  eliminateCommonSubExpressions(rw, dom, fusion);
}

/// Erases ops of `block` (not the terminator) whose results are unused.
void eraseDeadOps(Block &block, RewriterBase &rw) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isPure(op)) {
        rw.eraseOp(op);
        changed = true;
      }
  }
}

/// Tile-and-fuse fuses a producer once per slice it is read through: a
/// stored-once generic (kMaterializeAttr: softmax's exp(x - max)) that is
/// both read by a consumer (the sum) and the destination of the root (the
/// in-place normalization) gets two copies in the tile, the first writing a
/// scratch tile. Keeps the one that writes the destination: it is moved up
/// to the first copy (with the slice it writes into, when that only reads
/// values defined before) and takes its uses, so the tile computes the
/// producer once, into the kernel's result.
void mergeMaterializedCopies(Operation *loop, RewriterBase &rw) {
  // Bodies equal up to their block arguments (values from above: equal).
  auto sameBody = [](linalg::GenericOp a, linalg::GenericOp b) {
    DenseMap<Value, Value> map;
    return OperationEquivalence::isRegionEquivalentTo(
        &a.getRegion(), &b.getRegion(),
        [&](Value l, Value r) {
          return success(l == r || map.lookup(l) == r);
        },
        [&](Value l, Value r) { map[l] = r; },
        OperationEquivalence::Flags::IgnoreLocations);
  };
  SmallVector<linalg::GenericOp> ops;
  loop->walk([&](linalg::GenericOp g) {
    if (isMaterialized(g))
      ops.push_back(g);
  });
  DominanceInfo dom;
  SmallPtrSet<Operation *, 4> erased;
  for (size_t i = 0; i < ops.size(); ++i) {
    linalg::GenericOp a = ops[i];
    if (erased.contains(a))
      continue;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      linalg::GenericOp b = ops[j];
      if (erased.contains(b) || b->getBlock() != a->getBlock() ||
          !a->isBeforeInBlock(b) || a->getNumResults() != 1 ||
          b->getResultTypes() != a->getResultTypes() ||
          !llvm::equal(a.getDpsInputs(), b.getDpsInputs()) ||
          a.getIndexingMapsArray() != b.getIndexingMapsArray() ||
          a.getIteratorTypesArray() != b.getIteratorTypesArray() ||
          !sameBody(a, b))
        continue;
      // b's destination: defined before a, or a slice whose operands are.
      Value dest = b.getDpsInits()[0];
      Operation *destDef = dest.getDefiningOp();
      bool destBefore = dom.properlyDominates(dest, a);
      if (!destBefore &&
          !(destDef && destDef->getBlock() == a->getBlock() &&
            isa<tensor::ExtractSliceOp>(destDef) &&
            llvm::all_of(destDef->getOperands(), [&](Value v) {
              return dom.properlyDominates(v, a);
            })))
        continue;
      if (!destBefore)
        rw.moveOpBefore(destDef, a);
      rw.moveOpBefore(b, a);
      rw.replaceAllUsesWith(a->getResult(0), b->getResult(0));
      rw.eraseOp(a);
      erased.insert(a);
      break;
    }
  }
}

LogicalResult formKernel(kt::FusionOp fusion,
                         const KernelFormationOptions &options) {
  MLIRContext *ctx = fusion.getContext();
  IRRewriter rw(ctx);
  Block &body = fusion.getBody().front();
  std::string name = fusion.getKernel().str();

  if (!holdsKT(fusion)) {
    // 1. Elementwise fusion, restricted to the group's region.
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 shouldFuseElementwise);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    patterns.add<FoldUnitExpandIntoGeneric>(ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, ctx);
    (void)applyPatternsBounded(
        fusion.getBody(), std::move(patterns),
        GreedyRewriteConfig().setMaxNumRewrites(kMaxCleanupRewrites), fusion,
        "kernel formation (elementwise fusion in '" + name + "')");
    eraseDeadOps(body, rw);

    // 2. Tile each root and fuse its producers into the tile. A group with
    // a statically empty loop has no work and upstream tiling does not take
    // zero-size ranges: it stays untiled (plain ops, inlined below).
    bool empty = false;
    body.walk([&](linalg::LinalgOp op) {
      empty |= llvm::is_contained(op.getStaticLoopRanges(), int64_t(0));
    });
    auto yield = cast<kt::YieldOp>(body.getTerminator());
    llvm::SetVector<Operation *> roots;
    DenseSet<Operation *> seen;
    for (Value v : yield.getOperands())
      collectRoots(v, body, /*afterReduceAll=*/false, roots, seen);
    SmallVector<Operation *> ordered(roots.begin(), roots.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return b->isBeforeInBlock(a); // last root first
    });
    for (Operation *root : empty ? SmallVector<Operation *>() : ordered) {
      unsigned index = llvm::find(roots, root) - roots.begin();
      auto tileable = cast<TilingInterface>(root);
      SmallVector<OpFoldResult> sizes = tileSizesFor(tileable, options);
      if (llvm::all_of(sizes, [](OpFoldResult s) {
            return getConstantIntValue(s) == 0;
          }))
        continue; // a rank-0 root: nothing to tile
      scf::SCFTileAndFuseOptions tf;
      tf.tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      tf.tilingOptions.setTileSizes(sizes);
      // A producer read whole by every tile (a transposed weight) is computed
      // once before the loop instead of once per tile.
      tf.setFusionControlFn(
          [](tensor::ExtractSliceOp slice, OpResult, bool)
              -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            if (isWholeSlice(slice))
              return std::nullopt;
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          });
      rw.setInsertionPoint(root);
      FailureOr<scf::SCFTileAndFuseResult> tiled =
          scf::tileConsumerAndFuseProducersUsingSCF(rw, tileable, tf);
      if (failed(tiled) || tiled->loops.empty())
        continue;
      for (OpResult r : root->getResults())
        if (Value repl = tiled->replacements.lookup(r))
          rw.replaceAllUsesWith(r, repl);
      // The tile computes what the root and the producers fused into it
      // did, their run-time checks included (cross_entropy's target range
      // check, which keeps an unused generic from being trivially dead):
      // those left without uses go too.
      SmallVector<Operation *> withEffects;
      for (Operation *op : tiled->fusedProducers)
        if (!isMemoryEffectFree(op))
          withEffects.push_back(op);
      if (!isMemoryEffectFree(root) || !withEffects.empty())
        withEffects.push_back(root); // (or which reads them)
      if (!withEffects.empty())
        if (auto forall = dyn_cast<scf::ForallOp>(
                tiled->loops.front().getOperation()))
          eraseDeadOps(*forall.getBody(), rw); // unused slices of them
      for (bool erased = true; erased;) {
        erased = false;
        for (Operation *&op : withEffects)
          if (op && op->use_empty()) {
            rw.eraseOp(op);
            op = nullptr;
            erased = true;
          }
      }
      Operation *loop = tiled->loops.front();
      std::string kernel = ordered.size() == 1
                               ? name
                               : name + "_" + std::to_string(index);
      loop->setAttr(kKernelAttrName, StringAttr::get(ctx, kernel));
      loop->setLoc(fusion.getLoc());
      eraseDeadOps(body, rw);
    }
    cleanUp(fusion);
    // After the cleanup's CSE, which makes the copies' inputs the same values.
    body.walk([&](scf::ForallOp loop) {
      if (!loop->hasAttr(kKernelAttrName))
        return;
      mergeMaterializedCopies(loop, rw);
      eraseDeadOps(*loop.getBody(), rw);
    });
  }

  // 3. Inline the body in place of the kt.fusion. A yielded value may be a
  // block argument (a result that folded to a group input: neg(neg(x)), an
  // identity cast): it is replaced by the input itself, since inlining
  // erases the block's arguments.
  auto yield = cast<kt::YieldOp>(body.getTerminator());
  SmallVector<Value> results;
  for (Value v : yield.getOperands()) {
    auto arg = dyn_cast<BlockArgument>(v);
    results.push_back(arg && arg.getOwner() == &body &&
                              !options.testRestoreFoldedResultCrash
                          ? fusion.getInputs()[arg.getArgNumber()]
                          : v);
  }
  rw.eraseOp(yield);
  rw.inlineBlockBefore(&body, fusion, fusion.getInputs());
  rw.replaceOp(fusion, results);
  return success();
}

} // namespace

LogicalResult kiln::formKernels(Operation *root,
                                const KernelFormationOptions &options) {
  if (options.tileRows < 1 || options.tileElements < 1)
    return root->emitError("kernel formation: tile sizes must be at least 1");
  SmallVector<kt::FusionOp> fusions;
  root->walk([&](kt::FusionOp f) { fusions.push_back(f); });
  for (kt::FusionOp f : fusions)
    if (failed(formKernel(f, options)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// The kiln-form-kernels pass
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFORMKERNELSPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

namespace {
struct FormKernelsPass
    : public kiln::impl::KilnFormKernelsPassBase<FormKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    KernelFormationOptions options;
    options.tileRows = tileRows;
    options.tileElements = tileElements;
    options.testRestoreFoldedResultCrash = testRestoreFoldedResultCrash;
    if (failed(formKernels(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
