//===- MapToGPU.cpp - Host compute into gpu.launch, buffers to the device -===//
//
// Part of Kiln. See kiln/Conversion/NVPTX/NVPTXCodegen.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"
#include "Launch.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using kiln::nvptx::createLaunch;

namespace {

bool insideKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<scf::ParallelOp>();
}

/// scf.parallel -> a grid-stride kernel over its linearized iterations.
LogicalResult mapParallel(scf::ParallelOp loop, int64_t blockSize,
                          int64_t maxBlocks) {
  if (loop.getNumResults() != 0)
    return loop.emitError("kiln-nvptx: a parallel loop with reductions "
                          "(scf.reduce operands) is not supported yet");
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> counts;
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value n = arith::CeilDivSIOp::create(b, loc, span, step);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    n = arith::MaxSIOp::create(b, loc, n, zero);
    counts.push_back(n);
    total = arith::MulIOp::create(b, loc, total, n);
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value bs = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value maxGrid = arith::ConstantIndexOp::create(b, loc, maxBlocks);
  Value grid = arith::CeilDivSIOp::create(b, loc, total, bs);
  grid = arith::MinSIOp::create(b, loc, grid, maxGrid);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, total,
                                    zero);
  auto ifOp = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  OpBuilder ib = ifOp.getThenBodyBuilder();
  OpBuilder kb(loop.getContext());
  gpu::LaunchOp launch = createLaunch(ib, loc, grid, bs, kb);
  // The grid-stride loop: linear = bid * bs + tid, step gridDim * bs.
  Value bid = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  Value start = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, bid, bs), tid);
  Value stride =
      arith::MulIOp::create(kb, loc, launch.getGridSize().x, bs);
  auto strideLoop = scf::ForOp::create(kb, loc, start, total, stride);
  OpBuilder lb = OpBuilder::atBlockBegin(strideLoop.getBody());
  // Delinearize, the innermost dim fastest.
  Value rest = strideLoop.getInductionVar();
  SmallVector<Value> ivs(counts.size());
  for (int64_t d = counts.size() - 1; d >= 0; --d) {
    Value idx = d == 0 ? rest
                       : arith::RemSIOp::create(lb, loc, rest, counts[d])
                             .getResult();
    if (d > 0)
      rest = arith::DivSIOp::create(lb, loc, rest, counts[d]);
    Value scaled = arith::MulIOp::create(lb, loc, idx, loop.getStep()[d]);
    ivs[d] = arith::AddIOp::create(lb, loc, loop.getLowerBound()[d], scaled);
  }
  IRMapping map;
  map.map(loop.getInductionVars(), ivs);
  for (Operation &op : loop.getBody()->without_terminator())
    lb.clone(op, map);
  loop.erase();
  return success();
}

/// Replaces `launch` (a kernel nested in code that is moving into a
/// one-thread kernel: a kernel cannot launch kernels) by loops over its
/// blocks and threads running its body, in order. Kiln's kernels use no
/// shared memory or barriers, so this computes the same.
void serializeLaunch(gpu::LaunchOp launch) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  IRMapping map;
  gpu::KernelDim3 gridIds = launch.getBlockIds(),
                  threadIds = launch.getThreadIds(),
                  gridSize = launch.getGridSize(),
                  blockSize = launch.getBlockSize();
  gpu::KernelDim3 gridOps = launch.getGridSizeOperandValues(),
                  blockOps = launch.getBlockSizeOperandValues();
  map.map(gridSize.x, gridOps.x);
  map.map(gridSize.y, gridOps.y);
  map.map(gridSize.z, gridOps.z);
  map.map(blockSize.x, blockOps.x);
  map.map(blockSize.y, blockOps.y);
  map.map(blockSize.z, blockOps.z);
  // One loop per dim: blocks z, y, x, then threads z, y, x.
  Value bounds[6] = {gridOps.z,  gridOps.y,  gridOps.x,
                     blockOps.z, blockOps.y, blockOps.x};
  Value ids[6] = {gridIds.z,   gridIds.y,   gridIds.x,
                  threadIds.z, threadIds.y, threadIds.x};
  for (int i = 0; i < 6; ++i) {
    auto loop = scf::ForOp::create(b, loc, zero, bounds[i], one);
    map.map(ids[i], loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  for (Operation &op : launch.getBody().front().without_terminator())
    b.clone(op, map);
  launch.erase();
}

/// Whether `op` (or an op inside it, outside kernels) reads or writes
/// memref data on the host. (A host loop around kernels, e.g. over the
/// outer reduction dim of a linalg op with its parallel dim inside, stays
/// on the host and launches the kernels.)
bool touchesMemory(Operation *op) {
  WalkResult r = op->walk<WalkOrder::PreOrder>([](Operation *inner) {
    if (isa<gpu::LaunchOp>(inner))
      return WalkResult::skip();
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
            memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// A call of one of the runtime's special functions (kiln_cpu_special_*:
/// pure functions of their operands).
bool isSpecialCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("kiln_cpu_special_");
}

/// Whether `op` or an op inside it uses a value that an op of `run` (or
/// an op nested in one) defines.
bool usesRun(Operation *op, ArrayRef<Operation *> run) {
  WalkResult r = op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && llvm::any_of(run, [&](Operation *r) {
            return r == def || r->isProperAncestor(def);
          }))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// A copy of `src` into `dst` (same shape) as an scf.parallel of loads and
/// stores at `b` (a 0-d buffer: one iteration), i.e. a kernel once mapped.
scf::ParallelOp copyLoop(OpBuilder &b, Location loc, Value src, Value dst) {
  auto type = cast<MemRefType>(src.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  bool scalar = type.getRank() == 0;
  SmallVector<Value> ubs;
  for (int64_t d = 0; d < type.getRank(); ++d)
    ubs.push_back(memref::DimOp::create(b, loc, src, d));
  if (scalar)
    ubs.push_back(one);
  SmallVector<Value> lbs(ubs.size(), zero), steps(ubs.size(), one);
  return scf::ParallelOp::create(
      b, loc, lbs, ubs, steps,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        ValueRange idx = scalar ? ValueRange() : ivs;
        Value v = memref::LoadOp::create(nb, nloc, src, idx);
        memref::StoreOp::create(nb, nloc, v, dst, idx);
      });
}

/// A copy of `src` into `dst` (same shape) as a nest of scf.for loops of
/// loads and stores at `b`: a copy inside a kernel, run by one thread (a
/// thread's private buffer, e.g. the column a scatter updates). Upstream's
/// lowering of such a memref.copy (a non-identity layout) is a call of the
/// host runtime's memrefCopy, which kernels do not have.
void serialCopy(OpBuilder &b, Location loc, Value src, Value dst) {
  auto type = cast<MemRefType>(src.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> ubs;
  for (int64_t d = 0; d < type.getRank(); ++d)
    ubs.push_back(memref::DimOp::create(b, loc, src, d));
  SmallVector<Value> lbs(ubs.size(), zero), steps(ubs.size(), one);
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                       Value v = memref::LoadOp::create(nb, nloc, src, ivs);
                       memref::StoreOp::create(nb, nloc, v, dst, ivs);
                     });
}

/// Whether `v` is computed (through ops without regions) from a
/// memref.load.
bool dependsOnLoad(Value v) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<memref::LoadOp>(def))
      return true;
    if (def->getNumRegions() == 0)
      work.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

/// A host scf.if that yields buffers and tests a value read from device
/// memory (a scatter with one index position: the range test of the index
/// picks `self` or the updated copy) cannot stay on the host. Each result
/// gets a buffer allocated before the if, each branch copies what it
/// yields into it (serial loops: the if becomes a one-thread kernel with
/// the loads before it), allocations inside move before the if, and the
/// if yields nothing. Only static identity-layout results and branches
/// without kernels or parallel loops. Returns how many ifs.
unsigned bufferChoicesToCopies(func::FuncOp fn) {
  SmallVector<scf::IfOp> ifs;
  fn.walk([&](scf::IfOp ifOp) {
    if (insideKernel(ifOp) || ifOp->getNumResults() == 0 ||
        !dependsOnLoad(ifOp.getCondition()))
      return;
    if (!llvm::all_of(ifOp->getResultTypes(), [](Type t) {
          auto m = dyn_cast<MemRefType>(t);
          return m && m.hasStaticShape() && m.getLayout().isIdentity();
        }))
      return;
    WalkResult inner = ifOp->walk([&](Operation *op) {
      if (isa<scf::ParallelOp, gpu::LaunchOp>(op) ||
          (isa<memref::AllocOp>(op) && op->getNumOperands() != 0) ||
          (op != ifOp.getOperation() && isa<scf::IfOp>(op) &&
           op->getNumResults() != 0 &&
           llvm::any_of(op->getResultTypes(), llvm::IsaPred<MemRefType>)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (!inner.wasInterrupted())
      ifs.push_back(ifOp);
  });
  for (scf::IfOp ifOp : ifs) {
    Location loc = ifOp.getLoc();
    OpBuilder b(ifOp);
    SmallVector<Value> bufs;
    for (Type t : ifOp->getResultTypes())
      bufs.push_back(memref::AllocOp::create(b, loc, cast<MemRefType>(t)));
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::CopyOp> copies;
    ifOp->walk([&](Operation *op) {
      if (auto a = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(a);
      else if (auto c = dyn_cast<memref::CopyOp>(op))
        copies.push_back(c);
    });
    for (memref::AllocOp a : allocs)
      a->moveBefore(ifOp);
    for (memref::CopyOp c : copies) {
      OpBuilder cb(c);
      serialCopy(cb, c.getLoc(), c.getSource(), c.getTarget());
      c.erase();
    }
    bool hasElse = !ifOp.getElseRegion().empty();
    auto newIf = scf::IfOp::create(b, loc, TypeRange(), ifOp.getCondition(),
                                   hasElse);
    for (auto [from, to] : llvm::zip(ifOp->getRegions(), newIf->getRegions())) {
      if (from.empty())
        continue;
      to.takeBody(from);
      auto yield = cast<scf::YieldOp>(to.front().getTerminator());
      OpBuilder yb(yield);
      for (auto [v, buf] : llvm::zip(yield.getOperands(), bufs))
        serialCopy(yb, loc, v, buf);
      scf::YieldOp::create(yb, loc);
      yield.erase();
    }
    ifOp->replaceAllUsesWith(bufs);
    ifOp.erase();
  }
  return ifs.size();
}

} // namespace

FailureOr<kiln::nvptx::MapStats>
kiln::nvptx::mapToGPU(func::FuncOp fn, int64_t blockSize, int64_t maxBlocks) {
  MapStats stats;
  // Buffers chosen by a device value: copies into buffers of their own.
  bufferChoicesToCopies(fn);
  // 0. Host copies (bufferization's, e.g. of an argument into a result)
  // as parallel loops of loads and stores: a kernel, not a host memcpy.
  // Copies inside a parallel loop (one iteration's private buffer) become
  // serial loops in that iteration's thread.
  SmallVector<memref::CopyOp> copies;
  // (A copy between identity layouts in a kernel stays: it lowers to a
  // memcpy intrinsic, which kernels have.)
  auto identity = [](Value v) {
    return cast<MemRefType>(v.getType()).getLayout().isIdentity();
  };
  fn.walk([&](memref::CopyOp copy) {
    if (!insideKernel(copy) ||
        !identity(copy.getSource()) || !identity(copy.getTarget()))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    if (insideKernel(copy))
      serialCopy(b, copy.getLoc(), copy.getSource(), copy.getTarget());
    else
      copyLoop(b, copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
  }
  // Unused calls of the runtime's special functions (pure functions of
  // their operands; a 0-d kt.special whose result nothing reads) go.
  SmallVector<Operation *> deadCalls;
  fn.walk([&](func::CallOp call) {
    if (isSpecialCall(call) && call->use_empty())
      deadCalls.push_back(call);
  });
  // (And the loads and pure ops only they used.)
  while (!deadCalls.empty()) {
    Operation *dead = deadCalls.pop_back_val();
    SmallVector<Value> operands(dead->getOperands());
    dead->erase();
    for (Value v : operands) {
      Operation *def = v.getDefiningOp();
      if (def && def->use_empty() && def->getNumRegions() == 0 &&
          (isa<memref::LoadOp>(def) || isMemoryEffectFree(def)) &&
          !llvm::is_contained(deadCalls, def))
        deadCalls.push_back(def);
    }
  }
  // 1. Parallel loops.
  SmallVector<scf::ParallelOp> loops;
  fn.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>() &&
        !loop->getParentOfType<gpu::LaunchOp>())
      loops.push_back(loop);
  });
  for (scf::ParallelOp loop : loops) {
    if (failed(mapParallel(loop, blockSize, maxBlocks)))
      return failure();
    ++stats.parallelLoops;
  }
  // 1b. Host values only kernels use (a loaded seed or scalar, and the
  // pure ops on it) are computed in each kernel that uses them instead:
  // the host never reads device memory. Last op first, so chains sink.
  {
    SmallVector<Operation *> host;
    fn.walk([&](Operation *op) {
      if (!op->getParentOfType<gpu::LaunchOp>() && !isa<gpu::LaunchOp>(op))
        host.push_back(op);
    });
    for (Operation *op : llvm::reverse(host)) {
      bool load = isa<memref::LoadOp>(op);
      if ((!load && !(op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
                      !op->hasTrait<OpTrait::IsTerminator>())) ||
          op->getNumResults() == 0 || op->use_empty())
        continue;
      SmallVector<gpu::LaunchOp> users;
      bool allInKernels = true, hostUse = false;
      for (Operation *user : op->getUsers()) {
        auto launch = user->getParentOfType<gpu::LaunchOp>();
        if (launch && launch == op->getParentOfType<gpu::LaunchOp>()) {
          allInKernels = false;
          users.clear();
          break;
        }
        if (!launch) {
          allInKernels = false;
          hostUse = true;
          continue;
        }
        if (!llvm::is_contained(users, launch))
          users.push_back(launch);
      }
      // A load that the host also uses (a seed that kernels and a 0-d
      // random op's host code read) is loaded in each kernel too: the
      // host's own use then stays with its run (a one-thread kernel) and
      // the load is not a host value the kernels need (before gpu28 "the
      // host uses a value this op computes from device memory" for a 0-d
      // kt.rand next to other random ops of the same seed).
      // The host's uses get a load of their own just before the first of
      // them, so that it joins their run. Only loads of the function's
      // arguments (read-only inputs: no store in between to move across).
      if (load && hostUse && !users.empty() &&
          isa<BlockArgument>(cast<memref::LoadOp>(op).getMemRef()) &&
          cast<BlockArgument>(cast<memref::LoadOp>(op).getMemRef())
                  .getOwner() == &fn.getBody().front()) {
        Block *block = op->getBlock();
        Operation *first = nullptr;
        bool sameBlock = true;
        for (Operation *user : op->getUsers()) {
          if (user->getParentOfType<gpu::LaunchOp>())
            continue;
          Operation *top = block->findAncestorOpInBlock(*user);
          if (!top) {
            sameBlock = false;
            break;
          }
          if (!first || top->isBeforeInBlock(first))
            first = top;
        }
        if (sameBlock && first) {
          OpBuilder hb(first);
          Operation *copy = hb.clone(*op);
          op->getResult(0).replaceUsesWithIf(
              copy->getResult(0), [&](OpOperand &use) {
                return !use.getOwner()->getParentOfType<gpu::LaunchOp>();
              });
          allInKernels = true;
        }
      }
      // Pure ops are only sunk when they feed a load's chain or are cheap
      // constants; a load always is.
      if (!allInKernels || (!load && !isa<arith::ConstantOp>(op) &&
                            !llvm::any_of(op->getOperands(), [](Value v) {
                              return v.getDefiningOp<memref::LoadOp>() ||
                                     v.getDefiningOp() == nullptr;
                            })))
        continue;
      for (gpu::LaunchOp launch : users) {
        OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
        Operation *copy = kb.clone(*op);
        for (auto [from, to] : llvm::zip(op->getResults(), copy->getResults()))
          from.replaceUsesWithIf(to, [&](OpOperand &use) {
            return launch->isProperAncestor(use.getOwner());
          });
      }
      if (op->use_empty())
        op->erase();
    }
  }
  // 2. Other host ops that touch memory (loops of linalg ops without
  // parallel dims, the loads and stores of 0-d ops): each run of
  // consecutive such ops, with the pure ops between them, runs in a
  // one-thread kernel. scf.if regions (runtime checks, shape dispatch) stay
  // on the host and are visited.
  // (A call of the runtime's special functions computes a value from its
  // operands: the run takes it into its kernel, where it calls the device build.)
  auto pure = [](Operation *op) {
    if (isSpecialCall(op))
      return true;
    return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
           !op->hasTrait<OpTrait::IsTerminator>();
  };
  SmallVector<SmallVector<Operation *>> runs;
  std::function<void(Block &)> visit = [&](Block &block) {
    SmallVector<Operation *> run;
    auto flush = [&] {
      // Trailing pure ops are not part of the run.
      while (!run.empty() && !touchesMemory(run.back()) &&
             !isa<scf::IfOp>(run.back()))
        run.pop_back();
      if (!run.empty())
        runs.push_back(run);
      run.clear();
    };
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *opp : ops) {
      Operation &op = *opp;
      if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
        // An scf.if without kernels inside that reads device memory or
        // tests a value the run computes (a 0-d loss's target range check)
        // joins the run: its run-time error call becomes a write of the
        // kernel's error record (kernelErrorsToRecord). Other ones (shape
        // checks on sizes, dispatch around kernels) stay on the host.
        // (Nor allocations or calls other than the run-time error and the
        // special functions: a kernel allocates and calls nothing else.)
        bool hostOnly =
            ifOp->walk([](Operation *op) {
                  auto call = dyn_cast<func::CallOp>(op);
                  if (isa<gpu::LaunchOp, memref::AllocOp, memref::AllocaOp,
                          memref::DeallocOp>(op) ||
                      (call && !isSpecialCall(call) &&
                       call.getCallee() != kiln::kRuntimeErrorFn))
                    return WalkResult::interrupt();
                  return WalkResult::advance();
                })
                .wasInterrupted();
        if (!hostOnly && (touchesMemory(ifOp) || usesRun(ifOp, run))) {
          run.push_back(&op);
          continue;
        }
        flush();
        for (Region &r : ifOp->getRegions())
          for (Block &b : r)
            visit(b);
        continue;
      }
      // A host buffer allocated between ops of a run (the result of a
      // mean: the loss's division writes it) moves before the run when
      // its sizes do not come from the run: it would otherwise end the
      // run and leave the loads before it on the host (before gpu28:
      // "the host uses a value this op computes from device memory" for
      // every nll_loss / cross_entropy with reduction=mean).
      if (!run.empty() && isa<memref::AllocOp, memref::AllocaOp>(op) &&
          llvm::none_of(op.getOperands(), [&](Value v) {
            Operation *def = v.getDefiningOp();
            return def && llvm::any_of(run, [&](Operation *r) {
                     return r == def || r->isProperAncestor(def);
                   });
          })) {
        op.moveBefore(run.front());
        continue;
      }
      bool memory = !isa<gpu::LaunchOp>(op) && touchesMemory(&op) &&
                    !isa<memref::AllocOp, memref::AllocaOp,
                         memref::DeallocOp>(op);
      if (memory || (!run.empty() && pure(&op)))
        run.push_back(&op);
      else
        flush();
    }
    flush();
  };
  for (Block &block : fn.getBody())
    visit(block);
  for (SmallVector<Operation *> &run : runs) {
    llvm::SmallPtrSet<Operation *, 8> inRun(run.begin(), run.end());
    auto usedOutside = [&](Operation *op) {
      return llvm::any_of(op->getUsers(), [&](Operation *user) {
        Operation *top = run.front()->getBlock()->findAncestorOpInBlock(*user);
        return !top || !inRun.contains(top);
      });
    };
    llvm::SmallPtrSet<Operation *, 8> escapes; // (before anything moves)
    for (Operation *op : run) {
      if (!usedOutside(op))
        continue;
      if (touchesMemory(op))
        return op->emitError("kiln-nvptx: the host uses a value this op "
                             "computes from device memory; not supported");
      escapes.insert(op);
    }
    // An op that stays on the host keeps its operands there: those the run
    // computes stay too (and get kernel copies), transitively. (Before fz27
    // they moved into the kernel and the host op used values defined inside
    // it: "operand #0 does not dominate this use", a var's element count
    // with block-reduce=false; kiln-fuzz-pipeline.)
    SmallVector<Operation *> worklist(escapes.begin(), escapes.end());
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !inRun.contains(def) || escapes.contains(def))
          continue;
        if (touchesMemory(def))
          return def->emitError("kiln-nvptx: the host uses a value this op "
                                "computes from device memory; not supported");
        escapes.insert(def);
        worklist.push_back(def);
      }
    }
    // Kernels inside the run (a host loop around a kernel, e.g. a scan
    // along one dim) run in this kernel's thread.
    for (Operation *op : run) {
      SmallVector<gpu::LaunchOp> nested;
      op->walk([&](gpu::LaunchOp l) { nested.push_back(l); });
      for (gpu::LaunchOp l : nested)
        serializeLaunch(l);
    }
    Operation *first = run.front();
    Block *hostBlock = first->getBlock(); // (ops move out of it below)
    OpBuilder b(first);
    Value one = arith::ConstantIndexOp::create(b, first->getLoc(), 1);
    OpBuilder kb(first->getContext());
    gpu::LaunchOp launch = createLaunch(b, first->getLoc(), one, one, kb);
    Operation *end = launch.getBody().front().getTerminator();
    IRMapping toKernel; // host values that stay -> their kernel copies
    for (Operation *op : run) {
      if (escapes.contains(op)) {
        // A pure op the host also uses: a copy for the kernel (of its
        // operands' kernel copies).
        OpBuilder eb(end);
        Operation *copy = eb.clone(*op, toKernel);
        toKernel.map(op->getResults(), copy->getResults());
        for (auto [from, to] :
             llvm::zip(op->getResults(), copy->getResults()))
          from.replaceUsesWithIf(to, [&](OpOperand &use) {
            if (launch->isProperAncestor(use.getOwner()))
              return true;
            // A use in the run, also inside a run op's regions (a host
            // loop that reads through a view: before fz27 only uses by the
            // run ops themselves were replaced, and a load nested in an
            // scf.for moved into the kernel kept the host's view, defined
            // after the launch: "operand #0 does not dominate this use").
            // Ops that stay on the host keep the host's value.
            Operation *top = hostBlock->findAncestorOpInBlock(*use.getOwner());
            return top && top != op && inRun.contains(top) &&
                   !escapes.contains(top);
          });
        continue;
      }
      op->moveBefore(end);
    }
    ++stats.serialRegions;
  }
  // Run-time checks inside kernels write a device error record that the
  // host checks before returning (kernelErrorsToRecord).
  stats.kernelChecks = kiln::nvptx::kernelErrorsToRecord(fn);
  // Special functions call their device build (or libdevice's).
  stats.deviceCalls = kiln::nvptx::specialCallsToDevice(
      fn, !kiln::nvptx::specialDeviceLibrary().empty());
  // Kernels cannot call other host functions.
  WalkResult calls = fn.walk([&](func::CallOp call) {
    if (!call->getParentOfType<gpu::LaunchOp>() ||
        call.getCallee().starts_with("__nv_") ||
        call.getCallee().starts_with("kiln_gpu_special_"))
      return WalkResult::advance();
    InFlightDiagnostic diag =
        call.emitError("kiln-nvptx: a kernel calls the host function @")
        << call.getCallee() << "; not supported";
    if (call.getCallee().starts_with("kiln_cpu_special_"))
      diag << " (this build has no device build of the runtime's special "
              "functions, kiln_special_device.bc, and CUDA's libdevice has no "
              "such function)";
    return WalkResult::interrupt();
  });
  if (calls.wasInterrupted())
    return failure();
  // 3. Buffers into device memory.
  SmallVector<memref::AllocOp> allocs;
  SmallVector<memref::GetGlobalOp> globals;
  fn.walk([&](Operation *op) {
    if (insideKernel(op))
      return;
    if (auto a = dyn_cast<memref::AllocOp>(op))
      allocs.push_back(a);
    else if (auto g = dyn_cast<memref::GetGlobalOp>(op))
      globals.push_back(g);
  });
  for (memref::AllocOp a : allocs) {
    OpBuilder b(a);
    auto d = gpu::AllocOp::create(b, a.getLoc(), a.getType(), Type(),
                                  ValueRange(), a.getDynamicSizes(),
                                  a.getSymbolOperands());
    a.getResult().replaceAllUsesWith(d.getMemref());
    a.erase();
    ++stats.allocs;
  }
  for (memref::GetGlobalOp g : globals) {
    OpBuilder b(g);
    b.setInsertionPointAfter(g);
    auto type = cast<MemRefType>(g.getType());
    auto d = gpu::AllocOp::create(b, g.getLoc(), type, Type(), ValueRange(),
                                  ValueRange(), ValueRange());
    g.getResult().replaceAllUsesWith(d.getMemref());
    gpu::MemcpyOp::create(b, g.getLoc(), Type(), ValueRange(), d.getMemref(),
                          g.getResult());
    ++stats.globals;
  }
  return stats;
}

FailureOr<unsigned> kiln::nvptx::clonesToGPU(func::FuncOp fn,
                                             int64_t blockSize,
                                             int64_t maxBlocks) {
  SmallVector<bufferization::CloneOp> clones;
  fn.walk([&](bufferization::CloneOp c) {
    if (!insideKernel(c))
      clones.push_back(c);
  });
  for (bufferization::CloneOp c : clones) {
    OpBuilder b(c);
    Location loc = c.getLoc();
    Value src = c.getInput();
    auto type = cast<MemRefType>(c.getType());
    if (!type.getLayout().isIdentity())
      return c.emitError("kiln-nvptx: a clone into a non-identity layout "
                         "is not supported");
    SmallVector<Value> dynamic;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamic.push_back(memref::DimOp::create(b, loc, src, d));
    auto alloc = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                      dynamic, ValueRange());
    Value dst = alloc.getMemref();
    // The copy as a parallel loop, then a kernel like every other one.
    scf::ParallelOp loop = copyLoop(b, loc, src, dst);
    if (failed(mapParallel(loop, blockSize, maxBlocks)))
      return failure();
    c.getResult().replaceAllUsesWith(dst);
    c.erase();
  }
  return clones.size();
}

unsigned kiln::nvptx::deallocsToGPU(ModuleOp module) {
  unsigned n = 0;
  SmallVector<memref::DeallocOp> deallocs;
  module.walk([&](memref::DeallocOp d) {
    if (!d->getParentOfType<gpu::GPUModuleOp>())
      deallocs.push_back(d);
  });
  for (memref::DeallocOp d : deallocs) {
    Value v = d.getMemref();
    while (true) {
      if (auto meta = v.getDefiningOp<memref::ExtractStridedMetadataOp>())
        v = meta.getSource();
      else if (auto view = v.getDefiningOp<ViewLikeOpInterface>())
        v = view.getViewSource();
      else
        break;
    }
    if (v.getDefiningOp<memref::AllocOp>() ||
        v.getDefiningOp<memref::AllocaOp>())
      continue;
    OpBuilder b(d);
    gpu::DeallocOp::create(b, d.getLoc(), Type(), ValueRange(), d.getMemref());
    d.erase();
    ++n;
  }
  return n;
}
