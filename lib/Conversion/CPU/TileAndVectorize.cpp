//===- TileAndVectorize.cpp - Thread and register tiles, vectorization ----===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. Two tiling levels per
// linalg op on tensors:
//
// 1. threads: scf.forall with `threads` iterations over the outermost
//    parallel dim whose extent reaches the thread count (skipped inside an
//    existing scf.forall, for ops with less work than minParallelWork, and
//    when threads == 1);
// 2. registers: scf.for tiles that linalg::vectorize turns into vector ops.
//    * matmul / batch_matmul: [MR, NR, 1] tiles (n outside m, k innermost);
//      vector.contract lowers to MR FMAs of NR-wide rows per k step, and the
//      accumulator is hoisted out of the k loop after bufferization;
//    * cross_entropy's online row max and sum of exp (two results):
//      lowerOnlineRowStats (OnlineRowStats.cpp);
//    * one innermost reduction dim: every parallel dim tiled to 1, then a
//      partial reduction into a 4-register-wide accumulator
//      (scf::tileReductionUsingScf) and a final merge; several results over
//      one iteration space (independent reductions with neutral elements,
//      takesReductionPath) the same way, one accumulator each;
//    * everything else: every dim tiled to 1 except the innermost parallel
//      dim, which gets two registers' worth of elements.
//    Partial tiles (sizes that do not divide) are vectorized with masks.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <thread>

using namespace mlir;

/// Whether every result of `op` is a reduction whose combiner has a neutral
/// element, the condition of upstream's partial-reduction tiling
/// (generateInitialTensorForPartialReduction), checked first because
/// upstream reports a failure as an error diagnostic ("Failed to get an
/// identity value for the reduction operation"), which kiln-opt would print
/// although the op only stays scalar (cross_entropy's label smoothing).
static bool hasNeutralCombiners(linalg::LinalgOp op) {
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    SmallVector<Operation *, 4> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), i, combiners) ||
        combiners.size() != 1 || !arith::getNeutralElement(combiners[0]))
      return false;
  }
  return true;
}

unsigned kiln::cpu::hostVectorBits() {
  // Asked per function by the lowering passes: the host's features once.
  static const unsigned bits = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (features.lookup("avx512f"))
      return 512u;
    if (features.lookup("avx2"))
      return 256u;
    return 128u;
  }();
  return bits;
}

unsigned kiln::cpu::hostCores() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

namespace {

/// Widest element type (bits) among the op's operands; 0 if the op is not
/// vectorized: an operand that is not an int or float, f16/bf16 (x86 has no
/// vector arithmetic on them; LLVM fails to legalize some of their
/// conversions). i1 counts as 8 bits: a bool is a byte in memory, and
/// kiln-cpu-lower-vectors reads and writes vectors of i1 as bytes
/// (populateByteBoolTransferPatterns; LLVM would pack them as bits).
unsigned widestElementBits(linalg::LinalgOp op) {
  unsigned bits = 8;
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = getElementTypeOrSelf(operand.get().getType());
    if (!t.isIntOrFloat() || t.isF16() || t.isBF16())
      return 0;
    bits = std::max(bits, t.getIntOrFloatBitWidth());
  }
  // Index-based bodies (arange, rand's counters, flip) stay scalar: their
  // vector form (vector.step arithmetic) is not worth the lowering risk.
  bool usesIndex = false;
  op->walk([&](linalg::IndexOp) { usesIndex = true; });
  return usesIndex ? 0 : bits;
}

/// Whether `op`'s iterator types agree with its output maps: every output
/// map is a projected permutation that reads every parallel dim and no
/// reduction dim. Upstream's vectorizer and kiln's thread tiling assume it
/// (a dim marked "reduction" that an output keeps became a
/// vector.multi_reduction with a scalar destination: invalid IR; threads
/// over a "parallel" dim that an output drops raced on that output).
bool iteratorsMatchOutputs(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap m = op.getMatchingIndexingMap(&init);
    if (!m.isProjectedPermutation(/*allowZeroInResults=*/false))
      return false;
    for (unsigned d = 0; d < iters.size(); ++d)
      if (m.isFunctionOfDim(d) !=
          (iters[d] == utils::IteratorType::parallel))
        return false;
  }
  return true;
}

/// The iterator types that a generic with the single output map `m` (a
/// projected permutation) has by its loop semantics: the dims `m` reads
/// parallel, the others reductions.
SmallVector<utils::IteratorType> itersOfOutput(AffineMap m) {
  SmallVector<utils::IteratorType> iters;
  for (unsigned d = 0; d < m.getNumDims(); ++d)
    iters.push_back(m.isFunctionOfDim(d) ? utils::IteratorType::parallel
                                         : utils::IteratorType::reduction);
  return iters;
}

/// Puts a generic whose iterator types disagree with its output maps
/// (iteratorsMatchOutputs) into the form the tiling and the vectorizer
/// take, keeping its loop semantics (out_i[map_i(p)] = f_i(ins(p),
/// out_i[map_i(p)]) at every point p, in order). Results whose yielded
/// values read only the inputs and their own accumulator (through pure
/// ops without regions) become one generic each, with iterator types read
/// off that output's map (a rank-0 sum next to a [C] sum: two reductions,
/// each on the reduction fast path; the input is read once per result).
/// Returns the ops that replace `op` (`op` itself when it agrees already),
/// or nothing when it cannot be split (a result reads another's
/// accumulator): the caller leaves such an op to the scalar loops.
SmallVector<linalg::LinalgOp> normalizeOutputs(RewriterBase &rewriter,
                                               linalg::LinalgOp op) {
  if (iteratorsMatchOutputs(op))
    return {op};
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || g->getNumResults() != g.getNumDpsInits() ||
      g->getNumResults() == 0)
    return {};
  for (OpOperand &init : g.getDpsInitsMutable())
    if (!g.getMatchingIndexingMap(&init).isProjectedPermutation(
            /*allowZeroInResults=*/false))
      return {};
  Block *body = g.getBlock();
  for (Operation &inner : body->without_terminator())
    if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return {};
  unsigned numInputs = g.getNumDpsInputs();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  // Per result, the body ops its yielded value depends on; none may read
  // another result's accumulator.
  SmallVector<llvm::SmallPtrSet<Operation *, 16>> slices(g->getNumResults());
  for (unsigned i = 0; i < g->getNumResults(); ++i) {
    SmallVector<Value> work{yield.getOperand(i)};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == body && arg.getArgNumber() >= numInputs &&
            arg.getArgNumber() != numInputs + i)
          return {};
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body || !slices[i].insert(def).second)
        continue;
      llvm::append_range(work, def->getOperands());
    }
  }
  SmallVector<AffineMap> inputMaps;
  for (OpOperand *in : g.getDpsInputOperands())
    inputMaps.push_back(g.getMatchingIndexingMap(in));
  SmallVector<linalg::LinalgOp> parts;
  SmallVector<Value> results;
  rewriter.setInsertionPoint(g);
  for (unsigned i = 0; i < g->getNumResults(); ++i) {
    OpOperand *init = g.getDpsInitOperand(i);
    AffineMap outMap = g.getMatchingIndexingMap(init);
    SmallVector<AffineMap> maps = inputMaps;
    maps.push_back(outMap);
    auto part = linalg::GenericOp::create(
        rewriter, g.getLoc(), TypeRange{g->getResult(i).getType()},
        g.getDpsInputs(), ValueRange{init->get()}, maps,
        itersOfOutput(outMap),
        [&](OpBuilder &b, Location, ValueRange args) {
          IRMapping map;
          for (unsigned k = 0; k < numInputs; ++k)
            map.map(body->getArgument(k), args[k]);
          map.map(body->getArgument(numInputs + i), args[numInputs]);
          for (Operation &inner : body->without_terminator())
            if (slices[i].contains(&inner))
              b.clone(inner, map);
          linalg::YieldOp::create(b, yield.getLoc(),
                                  map.lookupOrDefault(yield.getOperand(i)));
        });
    part->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    parts.push_back(cast<linalg::LinalgOp>(part.getOperation()));
    results.push_back(part->getResult(0));
  }
  rewriter.replaceOp(g, results);
  return parts;
}

/// An op with a static zero-size loop does nothing: leave it to the loops.
bool hasEmptyLoop(linalg::LinalgOp op) {
  return llvm::is_contained(op.getStaticLoopRanges(), 0);
}

int64_t staticWork(linalg::LinalgOp op) {
  int64_t work = 1;
  for (int64_t r : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(r))
      return INT64_MAX / 4;
    work *= std::max<int64_t>(r, 1);
    if (work > INT64_MAX / 4)
      return INT64_MAX / 4;
  }
  return work;
}

bool isMatmul(linalg::LinalgOp op) {
  return kiln::cpu::isPlainMatmul(op);
}

/// Level 1. Returns the op to tile further (the tiled op in the forall or
/// the op itself).
linalg::LinalgOp threadTile(RewriterBase &rewriter, linalg::LinalgOp op,
                            const kiln::cpu::TileVectorizeOptions &o) {
  if (o.threads <= 1 || op->getParentOfType<scf::ForallOp>() ||
      staticWork(op) < o.minParallelWork)
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (iters[d] == utils::IteratorType::parallel &&
        (ShapedType::isDynamic(ranges[d]) ||
         ranges[d] >= (int64_t)o.threads)) {
      dim = d;
      break;
    }
  if (!dim)
    return op;
  SmallVector<OpFoldResult> tiles(ranges.size(), rewriter.getIndexAttr(0));
  if (ShapedType::isDynamic(ranges[*dim])) {
    SmallVector<OpFoldResult> numThreads(ranges.size(),
                                         rewriter.getIndexAttr(0));
    numThreads[*dim] = rewriter.getIndexAttr(o.threads);
    scf::SCFTilingOptions opts;
    opts.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    opts.setNumThreads(numThreads);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> res = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), opts);
    if (failed(res))
      return op;
    rewriter.replaceOp(op, res->replacements);
    return cast<linalg::LinalgOp>(res->tiledOps.back());
  }
  int64_t chunk = llvm::divideCeil(ranges[*dim], o.threads);
  tiles[*dim] = rewriter.getIndexAttr(chunk);
  scf::SCFTilingOptions opts;
  opts.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  opts.setTileSizes(tiles);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> res =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), opts);
  if (failed(res))
    return op;
  rewriter.replaceOp(op, res->replacements);
  return cast<linalg::LinalgOp>(res->tiledOps.back());
}

/// scf.for tiling with the given sizes (0 = not tiled). Returns the tiled op
/// or null on failure (the op is then unchanged).
linalg::LinalgOp forTile(RewriterBase &rewriter, linalg::LinalgOp op,
                         ArrayRef<int64_t> sizes,
                         ArrayRef<int64_t> interchange = {}) {
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return op;
  scf::SCFTilingOptions opts;
  opts.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  opts.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  if (!interchange.empty())
    opts.setInterchange(interchange);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> res =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), opts);
  if (failed(res))
    return nullptr;
  rewriter.replaceOp(op, res->replacements);
  return cast<linalg::LinalgOp>(res->tiledOps.back());
}

bool readsInputs(linalg::LinalgOp op, Value v);

/// Whether a reduction result of `op` adds (or multiplies, maxes...) a term
/// that reads no input: the same value at every iteration (a sum of a
/// splat constant, whose fill kiln-cpu-fuse-elementwise folded into the
/// body). Upstream's vectorizer combines such a term once instead of once
/// per reduction iteration (`sum(ones(8, 64), 1)` gave 1, not 64), so
/// such an op stays on the scalar loops.
bool hasInvariantReductionTerm(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    SmallVector<Operation *, 4> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), i, combiners))
      continue;
    Value acc = op.getRegionOutputArgs()[i];
    for (Operation *c : combiners)
      for (Value v : c->getOperands())
        if (v != acc && !llvm::is_contained(c->getResults(), v) &&
            !llvm::any_of(combiners, [&](Operation *o) {
              return v.getDefiningOp() == o;
            }) &&
            !readsInputs(op, v))
          return true;
  }
  return false;
}

/// Vectorizes `op` with vector sizes = its static loop ranges capped by
/// `caps` (masked where the tile is dynamic). Leaves it if the vectorizer
/// refuses, or if a reduction term is loop-invariant
/// (hasInvariantReductionTerm).
void vectorizeTile(RewriterBase &rewriter, linalg::LinalgOp op,
                   ArrayRef<int64_t> caps, bool contraction = false) {
  if (hasInvariantReductionTerm(op))
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes;
  bool dynamic = false;
  for (auto [r, cap] : llvm::zip(ranges, caps)) {
    if (ShapedType::isDynamic(r)) {
      dynamic = true;
      sizes.push_back(cap);
    } else {
      sizes.push_back(r);
    }
  }
  for (int64_t s : sizes)
    if (s <= 0 || s > 1024)
      return;
  ArrayRef<int64_t> vs = dynamic ? ArrayRef<int64_t>(sizes)
                                 : ArrayRef<int64_t>();
  SmallVector<bool> scalable(dynamic ? sizes.size() : 0, false);
  if (failed(linalg::vectorizeOpPrecondition(op, vs, scalable)))
    return;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> res = linalg::vectorize(
      rewriter, op, vs, scalable,
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/contraction);
  if (failed(res))
    return;
  rewriter.replaceOp(op, res->replacements);
}

/// Vector lanes for the widest element type among the operands of `op`
/// (inputs only with `inputsOnly`) whose indexing map reads a dim for which
/// `alongDim` holds; `lanes` when there is none.
int64_t lanesAlong(linalg::LinalgOp op,
                   const kiln::cpu::TileVectorizeOptions &o, int64_t lanes,
                   bool inputsOnly, llvm::function_ref<bool(unsigned)> alongDim) {
  unsigned bits = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    if (inputsOnly && !op.isDpsInput(&operand))
      continue;
    AffineMap m = op.getMatchingIndexingMap(&operand);
    if (llvm::any_of(m.getResults(), [&](AffineExpr e) {
          auto d = dyn_cast<AffineDimExpr>(e);
          return d && alongDim(d.getPosition());
        }))
      bits = std::max(bits, getElementTypeOrSelf(operand.get().getType())
                                .getIntOrFloatBitWidth());
  }
  if (!bits)
    return lanes;
  return std::max<int64_t>(o.vectorBits / std::max(bits, 8u), 1);
}

/// Vector steps per block of a cascaded sum (see splitWidenedSum).
constexpr int64_t kCascadeSteps = 8;

/// The f32 terms of a reduction whose every result adds its term into a
/// wider float accumulator (body `yield addf(out_i, extf(term_i))`, each
/// accumulator used only there): the kt accumulation rule's f32 sums into
/// f64, one per result (batch_norm_backward's sum(gy) and sum(gy * xhat)
/// are two over one read). Empty otherwise.
SmallVector<Value> widenedSumTerms(linalg::GenericOp g) {
  SmallVector<Value> terms;
  if (g.getNumDpsInits() == 0 || g.getNumResults() != g.getNumDpsInits())
    return {};
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  for (unsigned i = 0; i < g.getNumDpsInits(); ++i) {
    BlockArgument out = g.getMatchingBlockArgument(g.getDpsInitOperand(i));
    auto add = yield.getOperand(i).getDefiningOp<arith::AddFOp>();
    if (!add || !out.hasOneUse() || !add->hasOneUse())
      return {};
    Value other = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
    auto ext = other ? other.getDefiningOp<arith::ExtFOp>() : nullptr;
    if (!ext || !ext->hasOneUse() || !ext.getIn().getType().isF32() ||
        !out.getType().isF64())
      return {};
    terms.push_back(ext.getIn());
  }
  return terms;
}

/// Splits a widened sum `g` (widenedSumTerms: one or more results) over one
/// block into the sums of its terms in f32 (from 0, one result each) and a
/// pointwise generic adding each block sum, widened, into its f64
/// accumulator, which replaces `g`. Cascade summation: each f64
/// accumulator receives f32 sums of at most a block's terms, so f32
/// rounding does not grow with the reduction's length while most adds stay
/// in f32 (no widening per element).
std::pair<linalg::GenericOp, linalg::GenericOp>
splitWidenedSum(RewriterBase &rewriter, linalg::GenericOp g) {
  SmallVector<Value> terms = widenedSumTerms(g);
  unsigned k = terms.size();
  Location loc = g.getLoc();
  SmallVector<Value> inits(g.getDpsInits());
  Type f32 = rewriter.getF32Type();
  rewriter.setInsertionPoint(g);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0));
  SmallVector<Value> fills;
  for (Value init : inits) {
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, init), f32);
    fills.push_back(
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0));
  }
  Block *body = g.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  // The combiners and widenings, left out of the f32 body.
  llvm::SmallPtrSet<Operation *, 8> dropped;
  for (unsigned i = 0; i < k; ++i) {
    Operation *add = yield.getOperand(i).getDefiningOp();
    BlockArgument out = g.getMatchingBlockArgument(g.getDpsInitOperand(i));
    dropped.insert(add);
    dropped.insert(
        (add->getOperand(0) == out ? add->getOperand(1) : add->getOperand(0))
            .getDefiningOp());
  }
  unsigned numIns = g.getNumDpsInputs();
  auto sum32 = linalg::GenericOp::create(
      rewriter, loc, ValueRange(fills).getTypes(), g.getDpsInputs(), fills,
      g.getIndexingMapsArray(), g.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping map;
        map.map(body->getArguments(), args);
        for (Operation &op : body->without_terminator())
          if (!dropped.contains(&op))
            b.clone(op, map);
        SmallVector<Value> sums;
        for (unsigned i = 0; i < k; ++i)
          sums.push_back(arith::AddFOp::create(b, l, args[numIns + i],
                                               map.lookupOrDefault(terms[i])));
        linalg::YieldOp::create(b, l, sums);
      });
  auto t64 = cast<RankedTensorType>(inits[0].getType());
  int64_t rank = t64.getRank();
  AffineMap id = rewriter.getMultiDimIdentityMap(rank);
  auto widen = linalg::GenericOp::create(
      rewriter, loc, ValueRange(inits).getTypes(), sum32.getResults(), inits,
      SmallVector<AffineMap>(2 * k, id),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange a) {
        SmallVector<Value> outs;
        for (unsigned i = 0; i < k; ++i) {
          Value w = arith::ExtFOp::create(b, l, a[k + i].getType(), a[i]);
          outs.push_back(arith::AddFOp::create(b, l, a[k + i], w));
        }
        linalg::YieldOp::create(b, l, outs);
      });
  rewriter.replaceOp(g, widen.getResults());
  return {sum32, widen};
}

/// Whether the reduction fast path (partial reductions, cascaded sums)
/// takes `op`: one result, or several results over one iteration space
/// (the same indexing map for every init), each an independent reduction
/// with a combiner that has a neutral element (two adds: batch norm's
/// backward sums) and a term read from the inputs. A result that reads
/// another's accumulator (argmax's index follows the max), a combiner
/// without a neutral element or a loop-invariant term (a count) is
/// refused: the op then goes the pointwise way (tiled, correct, slower).
/// Whether `v`, a value of `op`'s body, depends on an input's block
/// argument (else it is the same at every iteration: a count's constant 1).
bool readsInputs(linalg::LinalgOp op, Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value u = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(u)) {
      if (arg.getOwner() == op.getBlock() &&
          arg.getArgNumber() < op.getNumDpsInputs())
        return true;
      continue;
    }
    Operation *def = u.getDefiningOp();
    if (!def || def->getBlock() != op.getBlock() || !seen.insert(def).second)
      continue;
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

bool takesReductionPath(linalg::LinalgOp op) {
  if (op->getNumResults() == 1)
    return true;
  if (op->getNumResults() == 0 ||
      op->getNumResults() != op.getNumDpsInits() || !hasNeutralCombiners(op))
    return false;
  AffineMap first = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getMatchingIndexingMap(&init) != first)
      return false;
    // Used once, by its own combiner (matchReduction), so no other result
    // reads it.
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    if (!acc.hasOneUse())
      return false;
    // The combiner's other operand must vary with the inputs: upstream's
    // vectorizer reduces a loop-invariant term (a count's `acc + 1`, as in
    // cross_entropy's mean over probability targets) once per vector
    // instead of once per lane (the count came out 1 for 5 rows).
    Operation *combiner = *acc.getUsers().begin();
    for (Value operand : combiner->getOperands())
      if (operand != acc && !readsInputs(op, operand))
        return false;
  }
  return true;
}

/// A partial reduction of `op` (its parallel dims already tiled to 1) over
/// its reduced dims: the innermost in steps of `v`, the others of 1, into
/// `v` accumulators merged at the end; then vectorized.
void partialReduce(RewriterBase &rewriter, linalg::LinalgOp op, int64_t v) {
  auto partial = dyn_cast<PartialReductionOpInterface>(op.getOperation());
  if (!partial || !hasNeutralCombiners(op))
    return;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  unsigned n = iters.size();
  SmallVector<OpFoldResult> ts(n, rewriter.getIndexAttr(0));
  for (unsigned d = 0; d < n; ++d)
    if (iters[d] == utils::IteratorType::reduction)
      ts[d] = rewriter.getIndexAttr(1);
  ts[n - 1] = rewriter.getIndexAttr(v);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> red =
      scf::tileReductionUsingScf(rewriter, partial, ts);
  if (failed(red))
    return;
  rewriter.replaceOp(op, red->replacements);
  SmallVector<int64_t> caps(n, 1);
  caps[n - 1] = v;
  for (Value init : red->initialValues)
    if (auto fill = init.getDefiningOp<linalg::LinalgOp>())
      vectorizeTile(rewriter, fill,
                    SmallVector<int64_t>(fill.getNumLoops(), v));
  for (Operation *t : red->tiledOps)
    if (auto l = dyn_cast<linalg::LinalgOp>(t))
      vectorizeTile(rewriter, l, caps);
  for (Operation *m : red->mergeOps)
    if (auto l = dyn_cast<linalg::LinalgOp>(m))
      vectorizeTile(rewriter, l, caps);
}

/// Whether the dims `dims` of tensor `v` are whole in memory: `v` is not a
/// slice, or a slice (of slices ...) with unit strides that takes each of
/// these dims whole (offset 0, static size equal to the source's).
bool slicesWhole(Value v, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return true;
  while (auto s = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (s.getSourceType().getRank() != s.getResultType().getRank())
      return false;
    for (int64_t d : dims) {
      std::optional<int64_t> off = getConstantIntValue(s.getMixedOffsets()[d]);
      std::optional<int64_t> st = getConstantIntValue(s.getMixedStrides()[d]);
      int64_t src = s.getSourceType().getDimSize(d);
      if (!off || *off != 0 || !st || *st != 1 || ShapedType::isDynamic(src) ||
          s.getResultType().getDimSize(d) != src)
        return false;
    }
    v = s.getSource();
  }
  return true;
}

/// Collapses runs of adjacent loops of a linalg.generic that have the same
/// iterator type and stay contiguous in every operand's indexing map (each
/// map has the run as consecutive results, in order, or none of it) into one
/// loop, reshaping the operands with tensor.collapse_shape. A per-channel
/// sum over N, H, W of NCHW then reduces over [N, C, H*W]: the innermost
/// reduced loop is H*W long instead of W (W = 16 made every row a masked
/// 64-lane vector step with 16 lanes active), and an NCHW pointwise op is
/// one long row per slice. Ops with `linalg.index` (their indices would be
/// delinearized) and named ops are left as they are. Returns the collapsed
/// op, or `op`.
linalg::LinalgOp collapseContiguousLoops(RewriterBase &rewriter,
                                         linalg::LinalgOp op) {
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || g.getNumLoops() < 2 || g.hasIndexSemantics())
    return op;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  for (AffineMap m : maps)
    if (!m.isProjectedPermutation())
      return op;
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices run = {0};
  auto flush = [&] {
    if (run.size() > 1)
      groups.push_back(run);
  };
  for (int64_t d = 1, n = iters.size(); d < n; ++d) {
    ReassociationIndices longer = run;
    longer.push_back(d);
    if (iters[d] == iters[d - 1] &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      run = longer;
      continue;
    }
    flush();
    run = {d};
  }
  flush();
  // Keep only runs that stay contiguous in memory: where an operand is a
  // slice (a thread or kernel tile), every dim of the run but its outermost
  // must be taken whole, else bufferization would copy the operand to
  // collapse it.
  // Nor runs of two or more dynamic loops: the collapsed operand's later
  // memref.expand_shape back into several `?` dims (a grouped conv's
  // reshape) crashes MLIR 22's expand-strided-metadata (seen with a grouped
  // conv over an all-`?` input, Execution/CPU/conv_onednn.py, threads=1).
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  llvm::erase_if(groups, [&](const ReassociationIndices &grp) {
    return llvm::count_if(grp, [&](int64_t d) {
             return ShapedType::isDynamic(ranges[d]);
           }) > 1;
  });
  llvm::erase_if(groups, [&](const ReassociationIndices &grp) {
    for (OpOperand &use : g->getOpOperands()) {
      AffineMap m = g.getMatchingIndexingMap(&use);
      SmallVector<int64_t> tdims;
      for (int64_t d : grp)
        if (std::optional<unsigned> r =
                m.getResultPosition(getAffineDimExpr(d, g.getContext())))
          tdims.push_back(*r);
      if (tdims.size() > 1 &&
          !slicesWhole(use.get(), ArrayRef<int64_t>(tdims).drop_front()))
        return true;
    }
    return false;
  });
  if (groups.empty())
    return op;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> c =
      linalg::collapseOpIterationDims(op, groups, rewriter);
  if (failed(c))
    return op;
  rewriter.replaceOp(op, c->results);
  return c->collapsedOp;
}

void registerTile(RewriterBase &rewriter, linalg::LinalgOp op,
                  const kiln::cpu::TileVectorizeOptions &o) {
  unsigned bits = widestElementBits(op);
  if (!bits || op.getNumLoops() == 0)
    return;
  // cross_entropy's online row max and sum of exp: its own vector loops.
  if (succeeded(kiln::cpu::lowerOnlineRowStats(rewriter, op, o.vectorBits)))
    return;
  // layer_norm's row moments: the same, per block of the row.
  if (succeeded(kiln::cpu::lowerRowMoments(rewriter, op, o.vectorBits)))
    return;
  int64_t lanes = std::max<int64_t>(o.vectorBits / bits, 1);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  unsigned n = ranges.size();
  auto cap = [&](int64_t want, int64_t range) {
    return ShapedType::isDynamic(range) ? want : std::min(want, range);
  };

  if (isMatmul(op)) {
    // [b,] m, n, k. Register tile MR x NR, k steps of 1; n loop outside
    // the m loop so that a K x NR panel of B stays in cache.
    unsigned b = n - 3;
    int64_t mr = cap(8, ranges[b]), nr = cap(2 * lanes, ranges[b + 1]);
    // Degenerate (matrix-vector) products stay scalar: the contraction
    // lowering patterns do not terminate on 1-wide tiles.
    if (mr < 2 || nr < 2)
      return;
    SmallVector<int64_t> sizes(n, 1);
    sizes[b] = mr;
    sizes[b + 1] = nr;
    sizes[b + 2] = 1;
    SmallVector<int64_t> interchange;
    for (unsigned i = 0; i < b; ++i)
      interchange.push_back(i);
    interchange.append({b + 1, b, b + 2});
    linalg::LinalgOp tiled = forTile(rewriter, op, sizes, interchange);
    if (!tiled)
      return;
    SmallVector<int64_t> caps(n, 1);
    caps[b] = 8;
    caps[b + 1] = 2 * lanes;
    vectorizeTile(rewriter, tiled, caps, /*contraction=*/true);
    return;
  }

  unsigned numReductions = op.getNumReductionLoops();
  if (numReductions >= 1 && iters[n - 1] == utils::IteratorType::reduction &&
      takesReductionPath(op)) {
    // Innermost dim reduced (rows, full and multi-dim reductions): the
    // parallel dims tiled to 1, then a partial reduction of width V over
    // the innermost dim (the other reduced dims step by 1) into V
    // accumulators that are merged once per output element.
    // Steps of 4 registers of the widest input read along the reduced dims
    // (an f32 sum into f64 accumulators reads as many f32 elements per step
    // as an f32 one).
    int64_t v = 4 * lanesAlong(op, o, lanes, /*inputsOnly=*/true,
                               [&](unsigned d) {
                                 return iters[d] ==
                                        utils::IteratorType::reduction;
                               });
    SmallVector<int64_t> rows(n, 0);
    for (unsigned d = 0; d < n; ++d)
      if (iters[d] == utils::IteratorType::parallel)
        rows[d] = 1;
    linalg::LinalgOp row = forTile(rewriter, op, rows);
    if (!row)
      return;
    SmallVector<int64_t> caps(n, 1);
    if (numReductions == 1 && !ShapedType::isDynamic(ranges[n - 1]) &&
        ranges[n - 1] <= v) {
      caps[n - 1] = v;
      vectorizeTile(rewriter, row, caps);
      return;
    }
    // A sum of f32 terms into f64 accumulators: blocks of kCascadeSteps
    // vector steps summed in f32, the block sums in f64.
    if (auto g = dyn_cast<linalg::GenericOp>(row.getOperation());
        g && !widenedSumTerms(g).empty()) {
      SmallVector<int64_t> blocks(n, 0);
      for (unsigned d = 0; d < n; ++d)
        if (iters[d] == utils::IteratorType::reduction)
          blocks[d] = 1;
      blocks[n - 1] = kCascadeSteps * v;
      if (linalg::LinalgOp block = forTile(rewriter, row, blocks)) {
        auto [sum32, add] = splitWidenedSum(
            rewriter, cast<linalg::GenericOp>(block.getOperation()));
        partialReduce(rewriter, sum32, v);
        vectorizeTile(rewriter, add,
                      SmallVector<int64_t>(add.getNumLoops(), 1));
      }
      return;
    }
    partialReduce(rewriter, row, v);
    return;
  }

  // Pointwise-like: the innermost parallel dim gets 2 registers' worth.
  std::optional<unsigned> inner;
  for (unsigned d = n; d-- > 0;)
    if (iters[d] == utils::IteratorType::parallel) {
      inner = d;
      break;
    }
  SmallVector<int64_t> sizes(n, 1), caps(n, 1);
  if (inner) {
    // Two registers of the widest operand that varies along the inner dim
    // (a per-row f64 statistic read by an f32 op is a broadcast scalar; a
    // column reduction's accumulators follow its input).
    int64_t w = lanesAlong(op, o, lanes,
                           /*inputsOnly=*/op.getNumReductionLoops() > 0,
                           [&](unsigned d) { return d == *inner; });
    sizes[*inner] = cap(2 * w, ranges[*inner]);
    caps[*inner] = 2 * w;
  }
  linalg::LinalgOp tiled = forTile(rewriter, op, sizes);
  if (!tiled)
    return;
  vectorizeTile(rewriter, tiled, caps);
}

} // namespace

void kiln::cpu::tileAndVectorize(func::FuncOp fn,
                                 const TileVectorizeOptions &o) {
  SmallVector<linalg::LinalgOp> ops;
  fn.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    if (auto impl = op->getAttrOfType<StringAttr>(kMatmulImplAttr))
      if (impl.getValue() == "openblas")
        return;
    // A oneDNN conv stays whole: kiln-cpu-conv-to-onednn makes it a call.
    if (auto impl = op->getAttrOfType<StringAttr>(kConvImplAttr))
      if (impl.getValue() == "onednn")
        return;
    // So do the fill + copy that pad its input where the call pads itself
    // (kConvPadAttr), the broadcast of its bias into its output
    // (kConvBiasAttr) and a transpose it reads (kConvViewAttr):
    // kiln-cpu-conv-to-onednn drops them.
    if (op->hasAttr(kConvPadAttr) || op->hasAttr(kConvBiasAttr) ||
        op->hasAttr(kConvViewAttr))
      return;
    // So does the fill of its output (its zero init): the conversion drops
    // a zero fill right before the call and lets oneDNN overwrite instead
    // of accumulating (a tiled fill would cost a pass over the output and
    // a sum post-op, plus a reorder in for a blocked layout).
    if (isa<linalg::FillOp>(op.getOperation()) &&
        llvm::all_of(op->getUsers(), [](Operation *user) {
          auto impl = user->getAttrOfType<StringAttr>(kConvImplAttr);
          return impl && impl.getValue() == "onednn";
        }) &&
        !op->use_empty())
      return;
    ops.push_back(op);
  });
  IRRewriter rewriter(fn.getContext());
  // Iterator types that disagree with the output maps (results over
  // different dims in one generic): split per result, or left scalar.
  SmallVector<linalg::LinalgOp> normalized;
  for (linalg::LinalgOp op : ops)
    llvm::append_range(normalized, normalizeOutputs(rewriter, op));
  for (linalg::LinalgOp op : normalized) {
    if (hasEmptyLoop(op))
      continue;
    linalg::LinalgOp inner = threadTile(rewriter, op, o);
    if (inner && inner->hasAttr(kScalarLoopsAttr))
      continue;
    if (inner)
      inner = collapseContiguousLoops(rewriter, inner);
    registerTile(rewriter, inner, o);
  }
  // vector.mask { transfer } -> masked transfers: one-shot bufferization
  // does not handle masked regions on tensors.
  RewritePatternSet patterns(fn.getContext());
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  (void)applyPatternsGreedily(fn, std::move(patterns));
}

namespace {

/// A memref of i8 with `m`'s shape and layout: the same bytes, since an i1
/// element occupies one byte in Kiln's (and MLIR's LLVM lowering's) memory
/// layout. The cast folds away in reconcile-unrealized-casts, both memref
/// types lowering to the same descriptor.
Value asBytes(OpBuilder &b, Location loc, Value m) {
  auto t = cast<MemRefType>(m.getType());
  auto bytes = MemRefType::get(t.getShape(), b.getI8Type(), t.getLayout(),
                               t.getMemorySpace());
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{bytes},
                                            ValueRange{m})
      .getResult(0);
}

bool isBoolMemRef(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getElementType().isInteger(1);
}

/// The vector of bytes that `vt` (of i1) is stored as.
VectorType bytesOf(VectorType vt) {
  return VectorType::get(vt.getShape(), IntegerType::get(vt.getContext(), 8),
                         vt.getScalableDims());
}

/// vector.transfer_read of i1 from memory -> a read of bytes, != 0.
struct ByteBoolRead : public OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rw) const override {
    if (!isBoolMemRef(op.getBase()))
      return failure();
    Location loc = op.getLoc();
    VectorType bytesType = bytesOf(op.getVectorType());
    Value pad = arith::ExtUIOp::create(rw, loc, rw.getI8Type(),
                                       op.getPadding());
    auto read = vector::TransferReadOp::create(
        rw, loc, bytesType, asBytes(rw, loc, op.getBase()), op.getIndices(),
        op.getPermutationMapAttr(), pad, op.getMask(),
        op.getInBoundsAttr());
    Value zero = arith::ConstantOp::create(
        rw, loc, bytesType, DenseElementsAttr::get(bytesType, rw.getI8IntegerAttr(0)));
    rw.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::ne,
                                         read.getResult(), zero);
    return success();
  }
};

/// vector.transfer_write of i1 to memory -> a write of bytes (0 or 1).
struct ByteBoolWrite : public OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferWriteOp op,
                                PatternRewriter &rw) const override {
    if (!isBoolMemRef(op.getBase()))
      return failure();
    Location loc = op.getLoc();
    VectorType bytesType = bytesOf(op.getVectorType());
    Value bytes = arith::ExtUIOp::create(rw, loc, bytesType, op.getVector());
    rw.replaceOpWithNewOp<vector::TransferWriteOp>(
        op, bytes, asBytes(rw, loc, op.getBase()), op.getIndices(),
        op.getPermutationMapAttr(), op.getMask(), op.getInBoundsAttr());
    return success();
  }
};

} // namespace

void kiln::cpu::populateByteBoolTransferPatterns(RewritePatternSet &patterns) {
  patterns.add<ByteBoolRead, ByteBoolWrite>(patterns.getContext());
}
