//===- Reductions.cpp - Row reductions as block-per-row GPU kernels -------===//
//
// Part of Kiln. See kiln/Conversion/NVPTX/NVPTXCodegen.h (mapRowReductions).
//
// A bufferized linalg op whose innermost loop is a reduction, read
// contiguously along it, becomes one kernel in which each block owns a row
// (one point of the parallel dims, grid-stride over rows) and its threads
// stride over the row's reduced elements, each keeping a partial per output;
// `gpu.all_reduce` (warp shuffles and shared memory, lowered by
// convert-gpu-to-nvvm) combines the partials and thread 0 folds the total
// into the output. The payload (a fused prologue such as exp(x - max)) runs
// per element in the threads.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;

namespace {

using gpu::AllReduceOperation;

/// The gpu.all_reduce kind of a combining op, if it is one.
std::optional<AllReduceOperation> reductionKind(Operation *op) {
  using R = std::optional<AllReduceOperation>;
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return R(AllReduceOperation::ADD); })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return R(AllReduceOperation::MUL); })
      .Case<arith::MaximumFOp>([](auto) { return R(AllReduceOperation::MAXIMUMF); })
      .Case<arith::MinimumFOp>([](auto) { return R(AllReduceOperation::MINIMUMF); })
      .Case<arith::MaxNumFOp>([](auto) { return R(AllReduceOperation::MAXNUMF); })
      .Case<arith::MinNumFOp>([](auto) { return R(AllReduceOperation::MINNUMF); })
      .Case<arith::MaxSIOp>([](auto) { return R(AllReduceOperation::MAXSI); })
      .Case<arith::MinSIOp>([](auto) { return R(AllReduceOperation::MINSI); })
      .Case<arith::MaxUIOp>([](auto) { return R(AllReduceOperation::MAXUI); })
      .Case<arith::MinUIOp>([](auto) { return R(AllReduceOperation::MINUI); })
      .Case<arith::AndIOp>([](auto) { return R(AllReduceOperation::AND); })
      .Case<arith::OrIOp>([](auto) { return R(AllReduceOperation::OR); })
      .Case<arith::XOrIOp>([](auto) { return R(AllReduceOperation::XOR); })
      .Default([](Operation *) { return R(); });
}

/// The identity of `kind` on `type` (what a thread without elements
/// contributes): combine(identity, x) == x for every x, NaN included.
TypedAttr identity(AllReduceOperation kind, Type type) {
  if (auto ft = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    switch (kind) {
    case AllReduceOperation::ADD:
      return FloatAttr::get(ft, llvm::APFloat::getZero(sem, /*Negative=*/true));
    case AllReduceOperation::MUL:
      return FloatAttr::get(ft, 1.0);
    case AllReduceOperation::MAXIMUMF:
    case AllReduceOperation::MAXNUMF:
      return FloatAttr::get(ft, llvm::APFloat::getInf(sem, /*Negative=*/true));
    case AllReduceOperation::MINIMUMF:
    case AllReduceOperation::MINNUMF:
      return FloatAttr::get(ft, llvm::APFloat::getInf(sem));
    default:
      return {};
    }
  }
  auto it = cast<IntegerType>(type);
  unsigned w = it.getWidth();
  switch (kind) {
  case AllReduceOperation::ADD:
  case AllReduceOperation::OR:
  case AllReduceOperation::XOR:
  case AllReduceOperation::MAXUI:
    return IntegerAttr::get(it, llvm::APInt::getZero(w));
  case AllReduceOperation::MUL:
    return IntegerAttr::get(it, llvm::APInt(w, 1));
  case AllReduceOperation::AND:
  case AllReduceOperation::MINUI:
    return IntegerAttr::get(it, llvm::APInt::getAllOnes(w));
  case AllReduceOperation::MAXSI:
    return IntegerAttr::get(it, llvm::APInt::getSignedMinValue(w));
  case AllReduceOperation::MINSI:
    return IntegerAttr::get(it, llvm::APInt::getSignedMaxValue(w));
  default:
    return {};
  }
}

/// One output of a row reduction: yield = combine(x, out) (either order).
struct Output {
  Operation *combine;
  BlockArgument acc; ///< the output's block argument
  Value x;           ///< the per-element value (depends on no output)
  AllReduceOperation kind;
  TypedAttr init;
};

/// Whether `op` can be a row-reduction kernel; fills `outputs`.
bool matchRowReduction(linalg::LinalgOp op, SmallVectorImpl<Output> &outputs) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op->getNumRegions() != 1 || op.getBlock() == nullptr)
    return false;
  unsigned nLoops = op.getNumLoops();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  if (iters.back() != utils::IteratorType::reduction)
    return false;
  // Coalesced: every input that varies along reduced dims is contiguous
  // along the innermost loop (consecutive threads, consecutive elements).
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    bool usesReduced = false;
    for (unsigned d = 0; d < nLoops; ++d)
      if (iters[d] == utils::IteratorType::reduction &&
          map.isFunctionOfDim(d))
        usesReduced = true;
    if (!usesReduced)
      continue;
    auto last = map.getNumResults() == 0
                    ? nullptr
                    : dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != nLoops - 1)
      return false;
    if (!isa<MemRefType>(in->get().getType()))
      return false;
  }
  // Outputs: indexed by the parallel dims only; not also inputs.
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (OpOperand &out : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&out);
    for (unsigned d = 0; d < nLoops; ++d)
      if (iters[d] == utils::IteratorType::reduction && map.isFunctionOfDim(d))
        return false;
    for (OpOperand *in : op.getDpsInputOperands())
      if (in->get() == out.get())
        return false;
    BlockArgument acc = op.getMatchingBlockArgument(&out);
    Value y = yield.getOperand(out.getOperandNumber() - op.getNumDpsInputs());
    Operation *combine = y.getDefiningOp();
    if (!combine || combine->getBlock() != body || !acc.hasOneUse() ||
        *acc.getUsers().begin() != combine || combine->getNumOperands() != 2)
      return false;
    std::optional<AllReduceOperation> kind = reductionKind(combine);
    if (!kind)
      return false;
    Value x = combine->getOperand(0) == acc ? combine->getOperand(1)
                                            : combine->getOperand(0);
    if (x == acc || !y.hasOneUse())
      return false;
    Type t = y.getType();
    if (!t.isF32() && !t.isF64() && !t.isInteger(32) && !t.isInteger(64))
      return false; // gpu.shuffle lowers 32- and 64-bit values
    TypedAttr init = identity(*kind, t);
    if (!init)
      return false;
    outputs.push_back({combine, acc, x, *kind, init});
  }
  if (outputs.empty())
    return false;
  // No per-element value may depend on an output (argmax-style pairs).
  for (Output &o : outputs) {
    SmallVector<Value> work{o.x};
    llvm::SmallPtrSet<Value, 16> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == body &&
            arg.getArgNumber() >= op.getNumDpsInputs())
          return false;
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def->getBlock() != body)
        continue;
      if (def->getNumRegions() != 0)
        return false;
      for (Value operand : def->getOperands())
        work.push_back(operand);
    }
  }
  return true;
}

/// Index values of `map` at `ivs` (a dim result is the iv itself).
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange ivs) {
  SmallVector<Value> idx;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      idx.push_back(ivs[d.getPosition()]);
      continue;
    }
    idx.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), ivs));
  }
  return idx;
}

/// Splits `linear` (innermost fastest) over `sizes`, writing the indices
/// into `ivs` at `dims`.
void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<Value> sizes,
                 SmallVectorImpl<Value> &ivs) {
  Value rest = linear;
  for (int64_t i = dims.size() - 1; i >= 0; --i) {
    if (i == 0) {
      ivs[dims[i]] = rest;
      break;
    }
    ivs[dims[i]] = arith::RemSIOp::create(b, loc, rest, sizes[i]);
    rest = arith::DivSIOp::create(b, loc, rest, sizes[i]);
  }
}

void rewriteRowReduction(linalg::LinalgOp op, ArrayRef<Output> outputs,
                         int64_t blockSize, int64_t maxBlocks) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<unsigned> rowDims, colDims;
  SmallVector<Value> rowSizes, colSizes;
  Value rows = arith::ConstantIndexOp::create(b, loc, 1);
  Value cols = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [d, range] : llvm::enumerate(ranges)) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, range.size);
    if (iters[d] == utils::IteratorType::reduction) {
      colDims.push_back(d);
      colSizes.push_back(size);
      cols = arith::MulIOp::create(b, loc, cols, size);
    } else {
      rowDims.push_back(d);
      rowSizes.push_back(size);
      rows = arith::MulIOp::create(b, loc, rows, size);
    }
  }
  // Threads: the block size, or fewer whole warps for short rows.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value warp = arith::ConstantIndexOp::create(b, loc, 32);
  Value bs = arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(
                                                       blockSize, 32));
  Value warps = arith::CeilDivSIOp::create(b, loc, cols, warp);
  Value threads = arith::MulIOp::create(b, loc, warps, warp);
  threads = arith::MaxSIOp::create(b, loc, threads, warp);
  threads = arith::MinSIOp::create(b, loc, threads, bs);
  Value grid = arith::MinSIOp::create(
      b, loc, rows, arith::ConstantIndexOp::create(b, loc, maxBlocks));
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, rows, zero);
  auto ifOp = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  OpBuilder ib = ifOp.getThenBodyBuilder();
  OpBuilder kb(op.getContext());
  gpu::LaunchOp launch = kiln::nvptx::createLaunch(ib, loc, grid, threads, kb);
  Value bid = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  Value nthreads = launch.getBlockSize().x, nblocks = launch.getGridSize().x;

  auto rowLoop = scf::ForOp::create(kb, loc, bid, rows, nblocks);
  OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
  SmallVector<Value> ivs(op.getNumLoops());
  delinearize(rb, loc, rowLoop.getInductionVar(), rowDims, rowSizes, ivs);
  SmallVector<Value> inits;
  for (const Output &o : outputs)
    inits.push_back(arith::ConstantOp::create(rb, loc, o.init));
  Block *body = op.getBlock();
  auto colLoop = scf::ForOp::create(
      rb, loc, tid, cols, nthreads, inits,
      [&](OpBuilder &cb, Location cloc, Value col, ValueRange partials) {
        SmallVector<Value> all(ivs);
        delinearize(cb, cloc, col, colDims, colSizes, all);
        IRMapping map;
        for (OpOperand *in : op.getDpsInputOperands()) {
          BlockArgument arg = op.getMatchingBlockArgument(in);
          if (arg.use_empty())
            continue;
          Value v = in->get();
          if (isa<MemRefType>(v.getType()))
            v = memref::LoadOp::create(
                cb, cloc, v,
                applyMap(cb, cloc, op.getMatchingIndexingMap(in), all));
          map.map(arg, v);
        }
        SmallVector<Value> next;
        for (Operation &inner : body->without_terminator()) {
          if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
            map.map(index.getResult(), all[index.getDim()]);
            continue;
          }
          auto it = llvm::find_if(outputs, [&](const Output &o) {
            return o.combine == &inner;
          });
          if (it != outputs.end())
            continue;
          cb.clone(inner, map);
        }
        for (auto [o, partial] : llvm::zip(outputs, partials)) {
          map.map(o.acc, partial);
          next.push_back(cb.clone(*o.combine, map)->getResult(0));
        }
        scf::YieldOp::create(cb, cloc, next);
      });
  SmallVector<Value> totals;
  for (auto [o, partial] : llvm::zip(outputs, colLoop.getResults()))
    totals.push_back(gpu::AllReduceOp::create(
                             rb, loc, partial,
                             gpu::AllReduceOperationAttr::get(
                                 rb.getContext(), o.kind),
                             /*uniform=*/true)
                         .getResult());
  Value first =
      arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::eq, tid, zero);
  auto store = scf::IfOp::create(rb, loc, first, /*withElseRegion=*/false);
  OpBuilder sb = store.getThenBodyBuilder();
  for (auto [o, total] : llvm::zip(outputs, totals)) {
    OpOperand *out = op.getDpsInitOperand(o.acc.getArgNumber() -
                                          op.getNumDpsInputs());
    SmallVector<Value> idx =
        applyMap(sb, loc, op.getMatchingIndexingMap(out), ivs);
    Value old = memref::LoadOp::create(sb, loc, out->get(), idx);
    IRMapping map;
    map.map(o.acc, old);
    map.map(o.x, total);
    Value v = sb.clone(*o.combine, map)->getResult(0);
    memref::StoreOp::create(sb, loc, v, out->get(), idx);
  }
  // The all_reduce's shared buffer is reused by the next row: every thread
  // has read this row's total before any writes the next.
  gpu::BarrierOp::create(rb, loc);
  op->erase();
}

/// gpu.all_reduce and gpu.barrier declare no memory effects upstream, and
/// the ownership-based deallocation pass (which runs after the kernels are
/// formed) refuses ops whose effects are unknown. Both are collectives that
/// order the block's memory accesses: modelled as reading and writing the
/// default resource, so no pass drops, merges or moves them either.
template <typename OpT>
struct CollectiveEffects
    : public MemoryEffectOpInterface::ExternalModel<CollectiveEffects<OpT>,
                                                    OpT> {
  void getEffects(
      Operation *op,
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
          &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

void attachCollectiveEffects(MLIRContext *ctx, gpu::GPUDialect *) {
  auto attach = [&](StringRef name, auto model) {
    std::optional<RegisteredOperationName> op =
        RegisteredOperationName::lookup(name, ctx);
    if (op && !op->hasInterface<MemoryEffectOpInterface>())
      model(ctx);
  };
  attach(gpu::AllReduceOp::getOperationName(), [](MLIRContext *c) {
    gpu::AllReduceOp::attachInterface<CollectiveEffects<gpu::AllReduceOp>>(*c);
  });
  attach(gpu::BarrierOp::getOperationName(), [](MLIRContext *c) {
    gpu::BarrierOp::attachInterface<CollectiveEffects<gpu::BarrierOp>>(*c);
  });
}

} // namespace

void kiln::nvptx::registerCollectiveEffects(DialectRegistry &registry) {
  registry.addExtension(attachCollectiveEffects);
}

unsigned kiln::nvptx::mapRowReductions(func::FuncOp fn, int64_t blockSize,
                                       int64_t maxBlocks,
                                       int64_t minReduced) {
  SmallVector<std::pair<linalg::LinalgOp, SmallVector<Output>>> found;
  fn.walk([&](linalg::LinalgOp op) {
    if (!kiln::nvptx::onHostLevel(op))
      return;
    SmallVector<Output> outputs;
    if (!matchRowReduction(op, outputs))
      return;
    // Short static rows stay one thread per output (a block per row of a
    // few elements idles most of its threads).
    int64_t reduced = 1;
    bool dynamic = false;
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    for (auto [d, n] : llvm::enumerate(op.getStaticLoopRanges())) {
      if (iters[d] != utils::IteratorType::reduction)
        continue;
      if (ShapedType::isDynamic(n))
        dynamic = true;
      else
        reduced *= n;
    }
    if (!dynamic && reduced < minReduced)
      return;
    found.push_back({op, std::move(outputs)});
  });
  for (auto &[op, outputs] : found)
    rewriteRowReduction(op, outputs, blockSize, maxBlocks);
  return found.size();
}
