//===- FusionPlanner.cpp - Grouping kt ops into kernels --------------------===//
//
// Part of Kiln. The planner of kiln-fuse, after Inductor's scheduler:
//
// * every top-level op of the block starts as its own group (a kernel);
// * candidate pairs are groups linked by a value (producer -> consumer) or
//   reading a common value (horizontal);
// * a pair is legal when the roles and iteration domains line up (below), the
//   merged group stays under the size cap, and no path leads from one group
//   through a third group back into the other (that would make a cycle);
// * the score of a pair is the bytes it saves: cost(A) + cost(B) -
//   cost(A u B), where the cost of a group is the bytes of the distinct values
//   it reads from outside plus the bytes of the values it writes (those used
//   outside it);
// * the best legal pair is merged, and the search repeats until no pair
//   saves bytes. Scores are kept in a max-heap and recomputed only for the
//   pairs of the merged group, so planning costs about one scoring per
//   pair, not one per pair per merge (the whole graph was rescanned per
//   merge: quadratic in the ops). Horizontal partners through a value read
//   by many groups are the 8 nearest readers on each side.
//
// Roles and domains (what "the iteration domains line up" means):
// * pointwise (kind pointwise, and batch_norm's inference form): domain =
//   its result shape. Two pointwise groups merge when the shapes are equal.
// * reduction (sum ... argmin; softmax, log_softmax, layer_norm): domain =
//   (shape of the reduced operand, reduced dims). A pointwise group joins
//   when its shape is the full shape, the kept shape, or the shape without
//   the reduced dims (prologue / epilogue over the same rows); two
//   reduction groups join when the domains are equal (softmax written out
//   as amax, sub, exp, sum, div is one group).
// * contraction (matmul, linear, conv2d): domain = its result shape; only
//   pointwise groups join: an epilogue of the result shape (bias,
//   activation, residual add), or a prologue feeding operand 0 only. At most
//   one contraction per group.
// * everything else (shape, creation, pooling, losses, attention, non-kt
//   ops) stays alone; cross_entropy alone is still a group (a kernel of
//   per-row loops, as softmax).
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Fusion.h"

#include "kiln/Dialect/KT/IR/KTFusionOps.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <queue>

using namespace mlir;
using namespace kiln;
using namespace kiln::fusion;

namespace {

enum class Role { None, Pointwise, Reduction, Contraction };

/// A shape with `?` dims as ShapedType::kDynamic; equal when equal dim by dim
/// (a `?` matches only a `?`: the same op chain carries the same `?`).
using Shape = SmallVector<int64_t>;

Shape shapeOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return Shape(t.getShape());
  return {};
}

/// What the planner knows of one op.
struct OpInfo {
  Role role = Role::None;
  Shape full;                  // domain shape
  SmallVector<bool> reduced;   // reduced dims (reduction role)
  bool multiLoopComposite = false;
};

SmallVector<bool> reducedDims(Operation *op, int64_t rank) {
  SmallVector<bool> r(rank, false);
  Attribute dim = op->getAttr("dim");
  auto mark = [&](int64_t d) {
    if (d < 0)
      d += rank;
    if (d >= 0 && d < rank)
      r[d] = true;
  };
  if (!dim) {
    r.assign(rank, true);
  } else if (auto list = dyn_cast<ArrayAttr>(dim)) {
    if (list.empty())
      r.assign(rank, true); // PyTorch: dim=[] reduces everything
    for (Attribute a : list)
      if (auto i = dyn_cast<IntegerAttr>(a))
        mark(i.getInt());
  } else if (auto i = dyn_cast<IntegerAttr>(dim)) {
    mark(i.getInt());
  }
  return r;
}

OpInfo classify(Operation *op, const FuseOptions &options) {
  OpInfo info;
  if (!isa_and_nonnull<kt::KTDialect>(op->getDialect()) ||
      op->getNumResults() != 1 || isa<kt::FusionOp, kt::YieldOp>(op) ||
      !isMemoryEffectFree(op) || !op->getRegions().empty())
    return info;
  // Value semantics only: every operand and the result a ranked tensor.
  auto ranked = [](Type t) { return isa<RankedTensorType>(t); };
  if (!llvm::all_of(op->getOperandTypes(), ranked) ||
      !ranked(op->getResult(0).getType()))
    return info;
  Value result = op->getResult(0);
  auto kind = cast<kt::OpKindInterface>(op).getOpKind();
  if (kind == kt::OpKind::Pointwise || isa<kt::BatchNormOp>(op)) {
    info.role = Role::Pointwise;
    info.full = shapeOf(result);
    return info;
  }
  if (isa<kt::MatmulOp, kt::LinearOp, kt::Conv2dOp>(op)) {
    if (!options.contractions)
      return info;
    info.role = Role::Contraction;
    info.full = shapeOf(result);
    return info;
  }
  if (op->getNumOperands() == 0)
    return info;
  // cross_entropy lowers to per-row loops (max, sum of exp, the loss) that
  // kernel formation puts in one kernel over blocks of rows: a group of its
  // own, joined by nothing (its result is a loss, not rows).
  if (isa<kt::CrossEntropyOp>(op)) {
    info.multiLoopComposite = true;
    return info;
  }
  Value self = op->getOperand(0);
  int64_t rank = shapeOf(self).size();
  // Pooling, the cumulative scans and argsort carry the reduction trait but
  // keep no reduced dims (they are not reductions of the fusion kind): alone.
  if ((kind == kt::OpKind::Reduction &&
       !isa<kt::MaxPool2dOp, kt::AvgPool2dOp, kt::CumsumOp, kt::CumprodOp,
            kt::LogcumsumexpOp, kt::ArgsortOp>(op)) ||
      isa<kt::SoftmaxOp, kt::LogSoftmaxOp>(op)) {
    info.role = Role::Reduction;
    info.full = shapeOf(self);
    info.reduced = reducedDims(op, rank);
    info.multiLoopComposite = isa<kt::SoftmaxOp, kt::LogSoftmaxOp>(op);
    return info;
  }
  if (auto ln = dyn_cast<kt::LayerNormOp>(op)) {
    info.role = Role::Reduction;
    info.full = shapeOf(self);
    info.reduced.assign(rank, false);
    int64_t n = ln.getNormalizedShape().size();
    for (int64_t d = std::max<int64_t>(0, rank - n); d < rank; ++d)
      info.reduced[d] = true;
    info.multiLoopComposite = true;
    return info;
  }
  return info;
}

Shape keptShape(const Shape &full, ArrayRef<bool> reduced) {
  Shape s;
  for (auto [d, r] : llvm::zip(full, reduced))
    s.push_back(r ? 1 : d);
  return s;
}
Shape droppedShape(const Shape &full, ArrayRef<bool> reduced) {
  Shape s;
  for (auto [d, r] : llvm::zip(full, reduced))
    if (!r)
      s.push_back(d);
  return s;
}

struct Group {
  SmallVector<Operation *> ops; // block order
  Role role = Role::None;
  Shape full;
  SmallVector<bool> reduced;
  Operation *contraction = nullptr;
  bool alive = true;
};

class Planner {
public:
  Planner(Block &block, const FuseOptions &options)
      : block(block), options(options) {}

  FusionStats run(StringRef prefix);

private:
  Operation *ancestor(Operation *user) {
    return block.findAncestorOpInBlock(*user);
  }
  bool isKernel(Operation *op) {
    return isa_and_nonnull<kt::KTDialect>(op->getDialect()) &&
           !isa<kt::ConstantOp>(op);
  }
  /// Bytes read from outside + bytes written for a set of ops.
  std::pair<int64_t, int64_t> cost(ArrayRef<Operation *> ops);
  int64_t cost2(ArrayRef<Operation *> ops) {
    auto [r, w] = cost(ops);
    return r + w;
  }
  /// The role and domain of A u B, or failure when they do not line up.
  bool compatible(Group &a, Group &b, Group &merged);
  bool createsCycle(unsigned a, unsigned b, uint64_t &visits);
  void merge(unsigned a, unsigned b, Group &merged);

  Block &block;
  const FuseOptions &options;
  std::vector<Group> groups;
  DenseMap<Operation *, unsigned> groupOf;
  /// Index of each top-level op in the block.
  DenseMap<Operation *, unsigned> position;
};

std::pair<int64_t, int64_t> Planner::cost(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SetVector<Value> reads;
  int64_t written = 0;
  for (Operation *op : ops) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || !members.contains(def))
        reads.insert(v);
    }
    for (Value r : op->getResults()) {
      bool outside = llvm::any_of(r.getUsers(), [&](Operation *u) {
        Operation *a = ancestor(u);
        return !a || !members.contains(a);
      });
      if (outside)
        written += estimateBytes(r, options);
    }
  }
  int64_t read = 0;
  for (Value v : reads)
    read += estimateBytes(v, options);
  return {read, written};
}

bool Planner::compatible(Group &a, Group &b, Group &m) {
  if (a.role == Role::None || b.role == Role::None)
    return false;
  if (a.ops.size() + b.ops.size() > options.maxGroupSize)
    return false;
  if (a.role == Role::Contraction && b.role == Role::Contraction)
    return false;
  // Order so that `a` has the "stronger" role.
  Group *x = &a, *y = &b;
  if (static_cast<int>(y->role) > static_cast<int>(x->role))
    std::swap(x, y);
  m.role = x->role;
  m.full = x->full;
  m.reduced = x->reduced;
  m.contraction = x->contraction;
  switch (x->role) {
  case Role::Pointwise:
    return x->full == y->full;
  case Role::Reduction:
    if (y->role == Role::Reduction)
      return x->full == y->full && x->reduced == y->reduced;
    return y->full == x->full || y->full == keptShape(x->full, x->reduced) ||
           y->full == droppedShape(x->full, x->reduced);
  case Role::Contraction: {
    if (y->role != Role::Pointwise)
      return false;
    if (y->full == x->full)
      return true; // epilogue, or a sibling over the same domain
    // A prologue: y only feeds operand 0 of the contraction, and reads
    // nothing x writes.
    llvm::SmallPtrSet<Operation *, 16> ys(y->ops.begin(), y->ops.end());
    llvm::SmallPtrSet<Operation *, 16> xs(x->ops.begin(), x->ops.end());
    bool any = false;
    for (Operation *op : y->ops)
      for (Value r : op->getResults())
        for (OpOperand &use : r.getUses()) {
          Operation *u = ancestor(use.getOwner());
          if (!u || !xs.contains(u))
            continue;
          if (u != x->contraction || use.getOperandNumber() != 0)
            return false;
          any = true;
        }
    for (Operation *op : x->ops)
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          if (Operation *u = ancestor(user); u && ys.contains(u))
            return false;
    return any;
  }
  case Role::None:
    return false;
  }
  return false;
}

bool Planner::createsCycle(unsigned a, unsigned b, uint64_t &visits) {
  // Is there a path a -> c -> ... -> b (or b -> ... -> a) through a group c
  // other than a and b? Then the merged group would both feed and read c.
  auto reaches = [&](unsigned from, unsigned to) {
    SmallVector<unsigned> stack;
    DenseSet<unsigned> seen;
    auto pushSuccessors = [&](unsigned g, bool direct) {
      for (Operation *op : groups[g].ops)
        for (Value r : op->getResults())
          for (Operation *user : r.getUsers()) {
            Operation *u = ancestor(user);
            if (!u || !groupOf.count(u))
              continue;
            unsigned s = groupOf[u];
            if (s == from || (direct && s == to))
              continue;
            if (seen.insert(s).second)
              stack.push_back(s);
          }
    };
    pushSuccessors(from, /*direct=*/true);
    while (!stack.empty()) {
      unsigned g = stack.pop_back_val();
      ++visits;
      if (g == to)
        return true;
      pushSuccessors(g, /*direct=*/false);
    }
    return false;
  };
  return reaches(a, b) || reaches(b, a);
}

void Planner::merge(unsigned a, unsigned b, Group &m) {
  m.ops = groups[a].ops;
  m.ops.append(groups[b].ops.begin(), groups[b].ops.end());
  llvm::sort(m.ops, [&](Operation *l, Operation *r) {
    return position.lookup(l) < position.lookup(r);
  });
  for (Operation *op : groups[b].ops)
    groupOf[op] = a;
  groups[b].alive = false;
  groups[b].ops.clear();
  groups[a] = std::move(m);
}

std::string kernelName(ArrayRef<Operation *> ops, unsigned index,
                       StringRef prefix) {
  std::string name = (prefix + "fused").str();
  llvm::SmallVector<StringRef> seen;
  for (Operation *op : ops) {
    StringRef n = op->getName().stripDialect();
    if (llvm::is_contained(seen, n) || isa<kt::ConstantOp>(op))
      continue;
    seen.push_back(n);
    if (seen.size() > 5)
      break;
    name += "_" + n.str();
  }
  if (seen.size() > 5)
    name += "_etc";
  return name + "_" + std::to_string(index);
}

/// `ops` (block order) without the ops that repeat an earlier one of them
/// (same op, operands, attributes and types): those are erased and their
/// uses take the earlier op's results. Without this a group holding two
/// equal ops (`x.int()` written twice) yields two results that the lowering
/// folds into one value: the kernel returns one buffer twice, and an op that
/// writes into one of its operands in place (kt.scatter, kt.slice_scatter)
/// then changes the other result too.
SmallVector<Operation *> withoutRepeats(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> kept;
  for (Operation *op : ops) {
    Operation *same = nullptr;
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op))
      for (Operation *k : kept)
        if (OperationEquivalence::isEquivalentTo(
                k, op, OperationEquivalence::exactValueMatch,
                /*markEquivalent=*/nullptr,
                OperationEquivalence::IgnoreLocations)) {
          same = k;
          break;
        }
    if (!same) {
      kept.push_back(op);
      continue;
    }
    op->replaceAllUsesWith(same);
    op->erase();
  }
  return kept;
}

/// Wraps `allOps` (block order) in a kt.fusion after the last of them
/// (repeated ops merged first).
void materialize(Block &block, ArrayRef<Operation *> allOps, StringRef name) {
  SmallVector<Operation *> ops = withoutRepeats(allOps);
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  auto outside = [&](Operation *user) {
    Operation *a = block.findAncestorOpInBlock(*user);
    return !a || !members.contains(a);
  };
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  SmallVector<Location> locs;
  for (Operation *op : ops) {
    locs.push_back(op->getLoc());
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || !members.contains(def))
        inputs.insert(v);
    }
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), outside))
        outputs.push_back(r);
  }
  if (outputs.empty())
    return; // dead group: leave it to DCE
  MLIRContext *ctx = block.getParentOp()->getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(ops.back());
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto fusion = kt::FusionOp::create(b, FusedLoc::get(ctx, locs), resultTypes,
                                     b.getStringAttr(name),
                                     inputs.getArrayRef());
  Block *body = new Block();
  fusion.getBody().push_back(body);
  IRMapping map;
  for (Value v : inputs)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  for (Operation *op : ops)
    inner.clone(*op, map);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(map.lookup(v));
  kt::YieldOp::create(inner, fusion.getLoc(), yielded);
  for (auto [v, r] : llvm::zip(outputs, fusion.getResults()))
    v.replaceUsesWithIf(r, [&](OpOperand &use) {
      return use.getOwner() != fusion.getOperation() &&
             !fusion->isAncestor(use.getOwner()) && outside(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

FusionStats Planner::run(StringRef prefix) {
  FusionStats stats;
  // Ops with side effects (kt ref ops before functionalization): grouping
  // moves ops, so a block holding one is left alone (counted, not fused).
  bool effects = llvm::any_of(block.without_terminator(), [](Operation &op) {
    return !isMemoryEffectFree(&op);
  });
  for (Operation &op : block.without_terminator()) {
    Group g;
    g.ops.push_back(&op);
    OpInfo info = classify(&op, options);
    g.role = info.role;
    g.full = info.full;
    g.reduced = info.reduced;
    if (info.role == Role::Contraction)
      g.contraction = &op;
    groupOf[&op] = groups.size();
    position[&op] = groups.size();
    groups.push_back(std::move(g));
    if (isKernel(&op)) {
      ++stats.kernelsBefore;
      stats.bytesBefore += cost2({&op});
    }
  }

  // Greedy merging by bytes saved. A pair's score depends only on its two
  // groups (what each reads, and which of its values are used outside it),
  // so scores are computed once per pair and again only for the pairs of a
  // group that a merge changed: a max-heap of (score, pair, versions), with
  // stale entries dropped when popped. Whether a pair would make a cycle is
  // checked when it is popped; a pair that would stays so until one of its
  // groups changes (paths between groups are never removed by a merge).
  // Ties go to the pair with the smaller group indices (block order).
  struct Candidate {
    int64_t score;
    unsigned a, b, versionA, versionB;
    bool operator<(const Candidate &o) const {
      if (score != o.score)
        return score < o.score;
      if (a != o.a)
        return a > o.a;
      return b > o.b;
    }
  };
  std::vector<unsigned> version(groups.size(), 0);
  std::vector<int64_t> groupCost(groups.size(), -1);
  auto costOf = [&](unsigned g) {
    if (groupCost[g] < 0)
      groupCost[g] = cost2(groups[g].ops);
    return groupCost[g];
  };
  std::priority_queue<Candidate> heap;
  auto score = [&](unsigned a, unsigned b) {
    if (a == b || !groups[a].alive || !groups[b].alive)
      return;
    if (a > b)
      std::swap(a, b);
    Group m;
    if (!compatible(groups[a], groups[b], m))
      return;
    SmallVector<Operation *> all(groups[a].ops);
    all.append(groups[b].ops.begin(), groups[b].ops.end());
    ++stats.pairsScored;
    int64_t s = costOf(a) + costOf(b) - cost2(all);
    if (s > 0)
      heap.push({s, a, b, version[a], version[b]});
  };
  // The groups `g` may pair with: its consumers, its producers, and the
  // other readers of its operands (horizontal). Readers of a value with
  // many readers (a weight read by every layer) are limited to the
  // kHorizontal nearest ones on each side in block order: a group far away
  // in the chain is almost never legal (a path through the groups between
  // them), and every pair would be checked.
  constexpr unsigned kHorizontal = 8;
  auto neighbors = [&](unsigned g) {
    llvm::SetVector<unsigned> out;
    auto add = [&](Operation *user) {
      if (Operation *u = ancestor(user)) {
        auto it = groupOf.find(u);
        if (it != groupOf.end() && it->second != g)
          out.insert(it->second);
      }
    };
    for (Operation *op : groups[g].ops) {
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          add(user);
      for (Value v : op->getOperands()) {
        if (Operation *def = v.getDefiningOp())
          add(def);
        SmallVector<Operation *> readers;
        for (Operation *user : v.getUsers())
          if (Operation *u = ancestor(user))
            readers.push_back(u);
        if (readers.size() <= 2 * kHorizontal + 1) {
          for (Operation *u : readers)
            add(u);
          continue;
        }
        llvm::sort(readers, [&](Operation *l, Operation *r) {
          return position.lookup(l) < position.lookup(r);
        });
        readers.erase(std::unique(readers.begin(), readers.end()),
                      readers.end());
        auto self = llvm::lower_bound(readers, op, [&](Operation *l,
                                                       Operation *r) {
          return position.lookup(l) < position.lookup(r);
        });
        size_t at = self - readers.begin();
        size_t lo = at > kHorizontal ? at - kHorizontal : 0;
        size_t hi = std::min(readers.size(), at + kHorizontal + 1);
        for (size_t i = lo; i < hi; ++i)
          add(readers[i]);
      }
    }
    return out;
  };
  if (!effects) {
    for (unsigned g = 0; g < groups.size(); ++g) {
      if (groups[g].role == Role::None)
        continue;
      for (unsigned n : neighbors(g))
        if (n > g || groups[n].role == Role::None)
          score(g, n);
    }
  }
  while (!effects && !heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    if (!groups[c.a].alive || !groups[c.b].alive ||
        version[c.a] != c.versionA || version[c.b] != c.versionB)
      continue;
    ++stats.cycleChecks;
    if (createsCycle(c.a, c.b, stats.cycleVisits))
      continue;
    Group m;
    if (!compatible(groups[c.a], groups[c.b], m))
      continue;
    merge(c.a, c.b, m);
    ++version[c.a];
    groupCost[c.a] = -1;
    for (unsigned n : neighbors(c.a))
      score(c.a, n);
  }

  // Report (before materializing, while the ops are in place).
  unsigned index = 0;
  SmallVector<std::pair<SmallVector<Operation *>, std::string>> toWrap;
  for (Operation &op : block.without_terminator()) {
    Group &g = groups[groupOf[&op]];
    if (g.ops.front() != &op)
      continue; // report each group once, at its first op
    bool kernel = llvm::any_of(g.ops, [&](Operation *o) { return isKernel(o); });
    if (!kernel)
      continue;
    bool wrap = g.ops.size() >= 2 ||
                (g.ops.size() == 1 && classify(g.ops[0], options).multiLoopComposite);
    KernelInfo k;
    auto [r, w] = cost(g.ops);
    k.bytesRead = r;
    k.bytesWritten = w;
    for (Operation *o : g.ops)
      k.ops.push_back(o->getName().getStringRef().str());
    if (wrap) {
      k.name = kernelName(g.ops, index++, prefix);
      toWrap.push_back({g.ops, k.name});
    } else {
      k.name = g.ops.front()->getName().getStringRef().str();
    }
    ++stats.kernelsAfter;
    stats.bytesAfter += r + w;
    stats.kernels.push_back(std::move(k));
  }
  for (auto &[ops, name] : toWrap)
    materialize(block, ops, name);
  if (!toWrap.empty())
    sortTopologically(&block);
  return stats;
}

} // namespace

int64_t kiln::fusion::estimateBytes(Value v, const FuseOptions &options) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return 0;
  int64_t n = 1;
  for (int64_t d : t.getShape()) {
    int64_t size = ShapedType::isDynamic(d) ? options.assumedDimSize : d;
    if (llvm::MulOverflow(n, size, n) || n > kMaxEstimatedBytes)
      return kMaxEstimatedBytes;
  }
  Type e = t.getElementType();
  int64_t bits = e.isIntOrFloat() ? e.getIntOrFloatBitWidth() : 64;
  int64_t bytes;
  if (llvm::MulOverflow(n, std::max<int64_t>(1, bits / 8), bytes) ||
      bytes > kMaxEstimatedBytes)
    return kMaxEstimatedBytes;
  return bytes;
}

FusionStats kiln::fusion::fuseBlock(Block &block, const FuseOptions &options,
                                    StringRef namePrefix) {
  return Planner(block, options).run(namePrefix);
}

void kiln::fusion::printFusionReport(llvm::raw_ostream &os,
                                     StringRef function,
                                     const FusionStats &stats) {
  os << "kiln-fuse @" << function << ": kernels " << stats.kernelsBefore
     << " -> " << stats.kernelsAfter << ", bytes moved " << stats.bytesBefore
     << " -> " << stats.bytesAfter;
  if (stats.bytesBefore > 0)
    os << " ("
       << llvm::format("%.1f", 100.0 * (stats.bytesBefore - stats.bytesAfter) /
                                   stats.bytesBefore)
       << "% saved)";
  os << "; planning: " << stats.pairsScored << " pairs scored, "
     << stats.cycleChecks << " cycle checks visiting " << stats.cycleVisits
     << " groups\n";
  for (const KernelInfo &k : stats.kernels) {
    os << "  " << k.name << ": " << k.ops.size() << " op"
       << (k.ops.size() == 1 ? "" : "s") << ", reads " << k.bytesRead
       << " B, writes " << k.bytesWritten << " B\n";
  }
}
