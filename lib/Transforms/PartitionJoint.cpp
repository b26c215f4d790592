//===- PartitionJoint.cpp - Joint function -> fwd + bwd -------------------===//
//
// Part of Kiln. The library behind `kiln-partition` (see Partition.h and
// docs/partition.md): classifies the ops of a joint function (backward ops
// read a cotangent; forward ops read only primals), decides which forward
// values the backward receives ("saved") under a policy, and extracts the
// forward and backward functions.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Partition.h"

#include "PartitionCut.h"

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Dialect/KT/IR/KTBuilder.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::partition;
using namespace kiln::partition::detail;

std::optional<Policy> partition::parsePolicy(StringRef name) {
  if (name == "mincut")
    return Policy::MinCut;
  if (name == "save-all")
    return Policy::SaveAll;
  if (name == "recompute-all")
    return Policy::RecomputeAll;
  return std::nullopt;
}

StringRef partition::stringifyPolicy(Policy policy) {
  switch (policy) {
  case Policy::MinCut:
    return "mincut";
  case Policy::SaveAll:
    return "save-all";
  case Policy::RecomputeAll:
    return "recompute-all";
  }
  llvm_unreachable("unknown policy");
}

int64_t partition::getTypeBytes(Type type, int64_t dynamicDimSize,
                                bool *dynamic) {
  auto elementBytes = [](Type t) -> int64_t {
    if (t.isIndex())
      return 8;
    if (t.isIntOrFloat())
      return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
    if (auto c = dyn_cast<ComplexType>(t))
      return 2 * std::max<int64_t>(
                     1, (c.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    return 8;
  };
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return elementBytes(type);
  int64_t n = elementBytes(shaped.getElementType());
  if (!shaped.hasRank()) {
    if (dynamic)
      *dynamic = true;
    return n * dynamicDimSize;
  }
  for (int64_t d : shaped.getShape()) {
    if (ShapedType::isDynamic(d)) {
      if (dynamic)
        *dynamic = true;
      d = dynamicDimSize;
    }
    n *= d;
  }
  return n;
}

FailureOr<JointInfo> partition::getJointInfo(func::FuncOp joint) {
  auto dict = joint->getAttrOfType<DictionaryAttr>(autodiff::kJointAttr);
  if (!dict)
    return joint.emitError("kiln-partition: @")
           << joint.getSymName()
           << " is not a joint function (no `kg.joint` dictionary attribute; "
              "build it with kiln-autodiff)";
  auto np = dict.getAs<IntegerAttr>("num_primals");
  auto no = dict.getAs<IntegerAttr>("num_outputs");
  auto src = dict.getAs<FlatSymbolRefAttr>("source");
  if (!np || !no || !src)
    return joint.emitError(
        "kiln-partition: `kg.joint` needs integer `num_primals`, integer "
        "`num_outputs` and a symbol `source`");
  JointInfo info;
  int64_t nArgs = joint.getNumArguments(), nRes = joint.getNumResults();
  if (np.getInt() < 0 || np.getInt() > nArgs)
    return joint.emitError("kiln-partition: `kg.joint` has num_primals = ")
           << np.getInt() << " but the function has " << nArgs
           << " arguments";
  if (no.getInt() < 0 || no.getInt() > nRes)
    return joint.emitError("kiln-partition: `kg.joint` has num_outputs = ")
           << no.getInt() << " but the function has " << nRes << " results";
  info.numPrimals = np.getInt();
  info.numOutputs = no.getInt();
  info.numCotangents = nArgs - info.numPrimals;
  info.numGradients = nRes - info.numOutputs;
  info.source = src;
  // `kg.written` (read under passPrimals) marks a primal as a unit attribute.
  for (unsigned i = 0, e = joint.getNumArguments(); i < e; ++i) {
    Attribute w = joint.getArgAttr(i, kWrittenAttr);
    if (!w)
      continue;
    if (!isa<UnitAttr>(w))
      return joint.emitError("kiln-partition: argument #")
             << i << ": `" << kWrittenAttr << "` must be a unit attribute, got "
             << w;
    if (i >= info.numPrimals)
      return joint.emitError("kiln-partition: argument #")
             << i << " is a cotangent: only a primal can be `" << kWrittenAttr
             << "`";
  }
  if (joint.isExternal() || !joint.getBody().hasOneBlock() ||
      !isa<func::ReturnOp>(joint.getBody().front().getTerminator()))
    return joint.emitError("kiln-partition: expected a joint function with "
                           "one block ending in func.return");
  return info;
}

namespace {

/// Bytes of all results of `op` (or of the value of a primal).
int64_t bytesOf(TypeRange types, int64_t dyn, bool *dynamic = nullptr) {
  int64_t n = 0;
  for (Type t : types)
    n += getTypeBytes(t, dyn, dynamic);
  return n;
}

/// Values `op` reads: its operands and the values its regions capture.
SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> vals(op->getOperands());
  if (op->getNumRegions())
    op->walk([&](Operation *nested) {
      if (nested == op)
        return;
      for (Value v : nested->getOperands())
        if (!op->isAncestor(v.getParentBlock()->getParentOp()))
          vals.push_back(v);
    });
  return vals;
}

bool isHeavy(Operation *op) {
  // kt.batch_norm_train: its statistics are reductions over the whole
  // activation (functorch's partitioner does not recompute
  // native_batch_norm either); splitBatchNormNormalization leaves its
  // normalization to pointwise ops the cut may still recompute.
  if (isa<kt::ScaledDotProductAttentionOp, kt::BatchNormTrainOp>(op))
    return true;
  if (auto k = dyn_cast<kt::OpKindInterface>(op))
    return k.getOpKind() == kt::OpKind::Contraction;
  return false;
}

bool isRandom(Operation *op) {
  return isa<kt::RandOp, kt::RandnOp, kt::DropoutOp>(op);
}

/// Ops that must never be cloned into the backward: ops with regions (side
/// effects are rejected up front).
bool isUnsafeToRecompute(Operation *op) {
  return op->getNumRegions() != 0 || !isMemoryEffectFree(op);
}

/// AOTAutograd's `is_fusible` for one op: everything cheap and pure.
bool isFusible(Operation *op) {
  return !isHeavy(op) && !isUnsafeToRecompute(op) && op->getNumResults() > 0 &&
         !isa<func::ReturnOp>(op);
}

/// A rough cost (multiply-adds) of computing a heavy op again; the knapsack
/// of the memory budget keeps the costliest values per byte saved.
double recomputeCost(Operation *op, int64_t dyn) {
  auto dim = [&](Value v, int64_t i) -> double {
    auto t = dyn_cast<ShapedType>(v.getType());
    if (!t || !t.hasRank() || t.getRank() == 0)
      return 1;
    if (i < 0)
      i += t.getRank();
    if (i < 0 || i >= t.getRank())
      return 1;
    int64_t d = t.getDimSize(i);
    return ShapedType::isDynamic(d) ? dyn : d;
  };
  auto numel = [&](Value v) -> double {
    auto t = dyn_cast<ShapedType>(v.getType());
    if (!t || !t.hasRank())
      return 1;
    double n = 1;
    for (int64_t d : t.getShape())
      n *= ShapedType::isDynamic(d) ? dyn : d;
    return n;
  };
  if (op->getNumResults() == 0)
    return 1;
  double out = numel(op->getResult(0));
  if (isa<kt::MatmulOp, kt::LinearOp>(op))
    return out * dim(op->getOperand(0), -1);
  if (auto c = dyn_cast<kt::Conv2dOp>(op))
    return out * numel(op->getOperand(1)) /
           std::max(1.0, dim(op->getOperand(1), 0));
  if (isa<kt::ConvTranspose2dOp>(op)) // per input element: C_out/G kH kW
    return numel(op->getOperand(0)) * numel(op->getOperand(1)) /
           std::max(1.0, dim(op->getOperand(1), 0));
  if (isa<kt::ScaledDotProductAttentionOp>(op))
    return 2 * numel(op->getOperand(0)) * dim(op->getOperand(1), -2);
  return out;
}

/// The ops of a joint function, classified, and the weights of the cut.
struct Analysis {
  mutable func::FuncOp joint;
  JointInfo info;
  const PartitionOptions &opts;
  Block *body = nullptr;
  mutable func::ReturnOp ret;

  /// Nodes: the primals (node i = argument i), then the forward ops.
  SmallVector<Operation *> nodeOp; // null for primals
  DenseMap<Operation *, unsigned> opNode;
  /// Ops reading a cotangent (directly or through other such ops).
  DenseSet<Operation *> bwdOps;
  SmallVector<bool> requiredFw, heavy, random, unsafe, toSink;
  SmallVector<SmallVector<unsigned, 4>> users;
  SmallVector<int64_t> bytes, weight;

  Analysis(func::FuncOp joint, JointInfo info, const PartitionOptions &opts)
      : joint(joint), info(info), opts(opts) {}

  unsigned size() const { return nodeOp.size(); }
  bool isPrimal(unsigned x) const { return nodeOp[x] == nullptr; }
  /// A node computing only non-tensor values (a `tensor.dim` size, a
  /// scalar) that may be recomputed: never saved, as AOTAutograd passes
  /// sizes apart from the saved tensors; the backward recomputes it from
  /// what is saved (the CPU backend passes only tensors between functions).
  bool isRecomputableScalar(unsigned x) const {
    return !isPrimal(x) && !unsafe[x] && !random[x] &&
           nodeOp[x]->getNumResults() > 0 &&
           llvm::none_of(nodeOp[x]->getResultTypes(),
                         [](Type t) { return isa<ShapedType>(t); });
  }

  /// The node defining `v`, or none for a cotangent / backward value.
  std::optional<unsigned> nodeOf(Value v) const {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == body && arg.getArgNumber() < info.numPrimals)
        return arg.getArgNumber();
      return std::nullopt;
    }
    auto it = opNode.find(v.getDefiningOp());
    if (it == opNode.end())
      return std::nullopt;
    return it->second;
  }

  LogicalResult run();
  CutProblem buildProblem(Policy policy,
                          const DenseSet<unsigned> &unbannedHeavy) const;
};

LogicalResult Analysis::run() {
  body = &joint.getBody().front();
  ret = cast<func::ReturnOp>(body->getTerminator());
  for (unsigned i = 0; i < info.numPrimals; ++i)
    nodeOp.push_back(nullptr);
  auto isCotangent = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body &&
           arg.getArgNumber() >= info.numPrimals;
  };
  for (Operation &op : body->without_terminator()) {
    // Ops are cloned into one function or both, or dropped when nothing
    // reads them: only side-effect-free ops keep their meaning.
    if (!isMemoryEffectFree(&op))
      return op.emitError("kiln-partition: '")
             << op.getName()
             << "' may have side effects; a joint function to partition "
                "must be side-effect free";
    bool bwd = llvm::any_of(readValues(&op), [&](Value v) {
      return isCotangent(v) || bwdOps.contains(v.getDefiningOp());
    });
    if (bwd) {
      bwdOps.insert(&op);
      continue;
    }
    opNode[&op] = nodeOp.size();
    nodeOp.push_back(&op);
  }
  unsigned n = size();
  requiredFw.assign(n, false);
  heavy.assign(n, false);
  random.assign(n, false);
  unsafe.assign(n, false);
  toSink.assign(n, false);
  users.assign(n, {});
  bytes.assign(n, 0);
  weight.assign(n, 0);

  // Forward-required: what the outputs need (AOTAutograd's forward-only
  // graph), plus every primal.
  SmallVector<Value> work;
  for (unsigned i = 0; i < info.numOutputs; ++i) {
    Value v = ret.getOperand(i);
    if (isCotangent(v) || bwdOps.contains(v.getDefiningOp()))
      return joint.emitError("kiln-partition: output #")
             << i << " depends on a cotangent; not a joint function";
    work.push_back(v);
  }
  for (unsigned i = 0; i < info.numPrimals; ++i)
    requiredFw[i] = true;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    std::optional<unsigned> x = nodeOf(v);
    if (!x || (requiredFw[*x] && !isPrimal(*x)))
      continue;
    requiredFw[*x] = true;
    if (!isPrimal(*x))
      for (Value o : readValues(nodeOp[*x]))
        work.push_back(o);
  }

  // Users, backward uses, and per-node facts.
  SmallVector<SmallVector<Operation *, 4>> allUsers(n);
  for (Operation &op : body->without_terminator()) {
    std::optional<unsigned> self;
    if (auto it = opNode.find(&op); it != opNode.end())
      self = it->second;
    llvm::SmallSetVector<unsigned, 4> read;
    for (Value v : readValues(&op))
      if (std::optional<unsigned> x = nodeOf(v))
        read.insert(*x);
    for (unsigned x : read) {
      allUsers[x].push_back(&op);
      if (self)
        users[x].push_back(*self);
      else
        toSink[x] = true;
    }
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    std::optional<unsigned> x = nodeOf(v);
    if (!x)
      continue;
    allUsers[*x].push_back(ret);
    if (i >= info.numOutputs)
      toSink[*x] = true; // a gradient the backward returns
  }
  for (unsigned x = 0; x < n; ++x) {
    if (isPrimal(x)) {
      bytes[x] = getTypeBytes(body->getArgument(x).getType(),
                              opts.dynamicDimSize);
      continue;
    }
    Operation *op = nodeOp[x];
    bytes[x] = bytesOf(op->getResultTypes(), opts.dynamicDimSize);
    heavy[x] = isHeavy(op);
    random[x] = isRandom(op);
    unsafe[x] = isUnsafeToRecompute(op);
  }

  // Distance from the backward (AOTAutograd's dist_from_bw): 0 off the
  // forward-required set, else 1 + the least distance of a user (a user
  // outside it, the return included, counts 0).
  SmallVector<int64_t> dist(n, 0);
  for (unsigned x = n; x-- > 0;) {
    if (!requiredFw[x])
      continue;
    int64_t d = 1000000000;
    for (Operation *u : allUsers[x]) {
      auto it = opNode.find(u);
      int64_t du = (it != opNode.end() && requiredFw[it->second])
                       ? dist[it->second]
                       : 0;
      d = std::min(d, du + 1);
    }
    dist[x] = d;
  }
  // The weight of saving a node: its bytes scaled by 1.1^clamp(dist, 1,
  // 100), doubled when nothing would materialize it otherwise (every user
  // is fusible with it), as AOTAutograd's get_node_weight.
  for (unsigned x = 0; x < n; ++x) {
    double w = double(bytes[x]) *
               std::pow(1.1, double(std::max<int64_t>(
                                 std::min<int64_t>(dist[x], 100), 1)));
    bool materialized =
        isPrimal(x) || !isFusible(nodeOp[x]) ||
        llvm::any_of(allUsers[x], [](Operation *u) { return !isFusible(u); });
    weight[x] = int64_t(w) * (materialized ? 1 : 2);
  }
  return success();
}

CutProblem Analysis::buildProblem(Policy policy,
                                  const DenseSet<unsigned> &unbanned) const {
  unsigned n = size();
  CutProblem p;
  // Tie-break: one unit per recomputed forward-required node, below the
  // resolution of the scaled weights (n units < one scaled byte).
  Cap scale = Cap(n) + 1;
  for (unsigned x = 0; x < n; ++x) {
    // As AOTAutograd: only forward-required ops are banned from
    // recomputation (a random op only the backward reads, e.g. the mask of a
    // dropout gradient, runs once, in the backward). Ops with effects or
    // regions are never cloned twice.
    bool pinned = isPrimal(x) || unsafe[x] || (random[x] && requiredFw[x]) ||
                  (policy == Policy::MinCut && heavy[x] && requiredFw[x] &&
                   !unbanned.contains(x));
    Cap w = Cap(weight[x]) * scale;
    if ((policy == Policy::RecomputeAll && !pinned) || isRecomputableScalar(x))
      w = kInf;
    p.weight.push_back(w);
    p.sourceCap.push_back(pinned ? kInf : (requiredFw[x] ? Cap(1) : Cap(0)));
    p.toSink.push_back(toSink[x]);
    p.users.push_back(users[x]);
  }
  return p;
}

/// Which values cross from the forward to the backward, and the ops of each.
struct Plan {
  SmallVector<Value> saved;
  llvm::SetVector<Operation *> fwdOps, bwdOps; // unordered
  int64_t savedBytes = 0, activationBytes = 0;
  unsigned numSavedPrimals = 0;
  bool dynamic = false;
};

/// The plan when the backward may read the values of the nodes in
/// `savable` (and must recompute every other forward value it needs).
FailureOr<Plan> makePlan(const Analysis &a, ArrayRef<bool> savable) {
  Plan plan;
  llvm::SmallSetVector<Value, 16> saved;
  DenseSet<Operation *> bwd;
  DenseSet<Value> seen;
  SmallVector<Value> work;
  for (unsigned i = a.info.numOutputs; i < a.ret.getNumOperands(); ++i)
    work.push_back(a.ret.getOperand(i));
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    std::optional<unsigned> x = a.nodeOf(v);
    if (x && savable[*x] && !a.isRecomputableScalar(*x)) {
      saved.insert(v);
      continue;
    }
    if (x && a.isPrimal(*x))
      return a.joint.emitError(
                 "kiln-partition: internal error: the backward needs primal #")
             << *x << " but it is not saved";
    Operation *op = v.getDefiningOp();
    if (!op) // a cotangent
      continue;
    if (bwd.insert(op).second)
      for (Value o : readValues(op))
        work.push_back(o);
  }
  // Saved values in a deterministic order: primals, then op results in
  // program order.
  SmallVector<Value> sorted(saved.begin(), saved.end());
  auto key = [&](Value v) -> std::pair<unsigned, unsigned> {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return {arg.getArgNumber(), 0};
    return {a.info.numPrimals + *a.nodeOf(v),
            cast<OpResult>(v).getResultNumber()};
  };
  llvm::sort(sorted, [&](Value l, Value r) { return key(l) < key(r); });
  plan.saved = sorted;

  // Forward ops: what the outputs and the saved values need.
  work.clear();
  seen.clear();
  for (unsigned i = 0; i < a.info.numOutputs; ++i)
    work.push_back(a.ret.getOperand(i));
  llvm::append_range(work, plan.saved);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *op = v.getDefiningOp();
    if (!op)
      continue;
    if (plan.fwdOps.insert(op))
      for (Value o : readValues(op))
        work.push_back(o);
  }
  for (Operation &op : a.body->without_terminator())
    if (bwd.contains(&op))
      plan.bwdOps.insert(&op);
  for (Value v : plan.saved) {
    int64_t b = getTypeBytes(v.getType(), a.opts.dynamicDimSize,
                             &plan.dynamic);
    plan.savedBytes += b;
    if (isa<BlockArgument>(v))
      ++plan.numSavedPrimals;
    else
      plan.activationBytes += b;
  }
  return plan;
}

/// The plan of a min-cut solution: the cut nodes are savable.
FailureOr<Plan> planFromCut(const Analysis &a, const CutSolution &sol) {
  if (sol.value >= kInf)
    return a.joint.emitError("kiln-partition: internal error: no finite cut");
  SmallVector<bool> savable(a.size());
  for (unsigned x = 0; x < a.size(); ++x)
    savable[x] = sol.inSource[x] && !sol.outSource[x];
  return makePlan(a, savable);
}

/// Builds the forward and backward functions of `plan`.
LogicalResult build(const Analysis &a, const Plan &plan, PartitionResult &r) {
  func::FuncOp joint = a.joint;
  MLIRContext *ctx = joint.getContext();
  Block *body = a.body;
  std::string base = a.info.source.getValue().str();
  std::string fwdName = base + "_fwd", bwdName = base + "_bwd";
  Operation *symTable = SymbolTable::getNearestSymbolTable(joint);
  for (StringRef name : {StringRef(fwdName), StringRef(bwdName)})
    if (symTable && SymbolTable::lookupSymbolIn(symTable, name))
      return joint.emitError("kiln-partition: cannot create @")
             << name << ": the symbol already exists";

  // The backward's saved arguments: with passPrimals, first the saved
  // primals the caller passes (not forward results), then the values the
  // forward returns after its outputs; otherwise all of plan.saved, returned.
  SmallVector<Value> passed, returned;
  SmallVector<int64_t> passedArgs;
  for (Value v : plan.saved) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (a.opts.passPrimals && arg &&
        !joint.getArgAttr(arg.getArgNumber(), kWrittenAttr)) {
      passed.push_back(v);
      passedArgs.push_back(arg.getArgNumber());
    } else {
      returned.push_back(v);
    }
  }
  SmallVector<Value> bwdSaved(passed);
  llvm::append_range(bwdSaved, returned);

  SmallVector<Type> fwdArgs, fwdRes, bwdArgs, bwdRes;
  for (unsigned i = 0; i < a.info.numPrimals; ++i)
    fwdArgs.push_back(body->getArgument(i).getType());
  for (unsigned i = 0; i < a.info.numOutputs; ++i)
    fwdRes.push_back(a.ret.getOperand(i).getType());
  for (Value v : returned)
    fwdRes.push_back(v.getType());
  for (Value v : bwdSaved)
    bwdArgs.push_back(v.getType());
  for (unsigned i = a.info.numPrimals; i < body->getNumArguments(); ++i)
    bwdArgs.push_back(body->getArgument(i).getType());
  for (unsigned i = a.info.numOutputs; i < a.ret.getNumOperands(); ++i)
    bwdRes.push_back(a.ret.getOperand(i).getType());

  OpBuilder b(ctx);
  b.setInsertionPointAfter(joint);
  auto fwd = func::FuncOp::create(b, joint.getLoc(), fwdName,
                                  FunctionType::get(ctx, fwdArgs, fwdRes));
  fwd.setVisibility(joint.getVisibility());
  for (unsigned i = 0; i < a.info.numPrimals; ++i)
    if (DictionaryAttr d = joint.getArgAttrDict(i))
      fwd.setArgAttrs(i, d);
  fwd->setAttr(kNumOutputsAttr, b.getI64IntegerAttr(a.info.numOutputs));
  fwd->setAttr(kNumSavedAttr, b.getI64IntegerAttr(returned.size()));
  if (a.opts.passPrimals)
    fwd->setAttr(kSavedPrimalsAttr, b.getDenseI64ArrayAttr(passedArgs));
  {
    Block *fb = fwd.addEntryBlock();
    OpBuilder fbB = OpBuilder::atBlockEnd(fb);
    IRMapping map;
    for (unsigned i = 0; i < a.info.numPrimals; ++i)
      map.map(body->getArgument(i), fb->getArgument(i));
    for (Operation &op : body->without_terminator())
      if (plan.fwdOps.contains(&op))
        fbB.clone(op, map);
    SmallVector<Value> rets;
    for (unsigned i = 0; i < a.info.numOutputs; ++i)
      rets.push_back(map.lookup(a.ret.getOperand(i)));
    for (Value v : returned)
      rets.push_back(map.lookup(v));
    func::ReturnOp::create(fbB, a.ret.getLoc(), rets);
  }

  b.setInsertionPointAfter(fwd);
  auto bwd = func::FuncOp::create(b, joint.getLoc(), bwdName,
                                  FunctionType::get(ctx, bwdArgs, bwdRes));
  bwd.setVisibility(joint.getVisibility());
  bwd->setAttr(kNumSavedAttr, b.getI64IntegerAttr(bwdSaved.size()));
  {
    Block *bb = bwd.addEntryBlock();
    OpBuilder bbB = OpBuilder::atBlockEnd(bb);
    IRMapping map;
    unsigned k = 0;
    for (Value v : bwdSaved)
      map.map(v, bb->getArgument(k++));
    for (unsigned i = a.info.numPrimals; i < body->getNumArguments(); ++i)
      map.map(body->getArgument(i), bb->getArgument(k++));
    for (Operation &op : body->without_terminator())
      if (plan.bwdOps.contains(&op))
        bbB.clone(op, map);
    SmallVector<Value> rets;
    for (unsigned i = a.info.numOutputs; i < a.ret.getNumOperands(); ++i)
      rets.push_back(map.lookup(a.ret.getOperand(i)));
    func::ReturnOp::create(bbB, a.ret.getLoc(), rets);
  }

  r.fwd = fwd;
  r.bwd = bwd;
  r.numSaved = plan.saved.size();
  r.numSavedPrimals = plan.numSavedPrimals;
  r.numPassedPrimals = passed.size();
  r.savedBytes = plan.savedBytes;
  r.savedActivationBytes = plan.activationBytes;
  r.dynamic = plan.dynamic;
  for (Operation &op : body->without_terminator())
    if (plan.bwdOps.contains(&op) && plan.fwdOps.contains(&op))
      r.recomputedOps.push_back(op.getName().getStringRef().str());
  return success();
}

/// The memory-budget variant of mincut (0 < F < 1): see PartitionOptions.
FailureOr<std::pair<Plan, CutProblem>>
planWithBudget(const Analysis &a, double budget, const Plan &minCutPlan,
               const CutProblem &minCutProblem) {
  DenseSet<unsigned> none;
  CutProblem rcProblem = a.buildProblem(Policy::RecomputeAll, none);
  FailureOr<Plan> rc = planFromCut(a, solveMinCut(rcProblem));
  if (failed(rc))
    return failure();
  int64_t hi = minCutPlan.savedBytes, lo = rc->savedBytes;
  if (lo >= hi)
    return std::make_pair(minCutPlan, minCutProblem);
  int64_t limit = lo + int64_t(std::floor(budget * double(hi - lo)));

  // The compute-heavy forward values the min-cut keeps from recomputation.
  SmallVector<unsigned> items;
  for (unsigned x = 0; x < a.size(); ++x)
    if (a.heavy[x] && a.requiredFw[x] && !a.random[x] && !a.unsafe[x])
      items.push_back(x);
  // 0/1 knapsack: keep banned the items of most recompute cost whose bytes
  // fit in `limit - lo` (bytes quantized to at most 4096 units).
  auto knapsack = [&](ArrayRef<unsigned> cand) {
    int64_t cap = limit - lo;
    SmallVector<unsigned> keep;
    if (cap <= 0 || cand.empty())
      return keep;
    int64_t unit = std::max<int64_t>(1, (cap + 4095) / 4096);
    int64_t units = cap / unit;
    unsigned m = cand.size();
    std::vector<std::vector<double>> dp(m + 1,
                                        std::vector<double>(units + 1, 0));
    for (unsigned i = 1; i <= m; ++i) {
      unsigned x = cand[i - 1];
      int64_t wi = (a.bytes[x] + unit - 1) / unit;
      double ci = recomputeCost(a.nodeOp[x], a.opts.dynamicDimSize);
      for (int64_t c = 0; c <= units; ++c) {
        dp[i][c] = dp[i - 1][c];
        if (wi <= c)
          dp[i][c] = std::max(dp[i][c], dp[i - 1][c - wi] + ci);
      }
    }
    for (int64_t c = units, i = m; i > 0; --i)
      if (dp[i][c] != dp[i - 1][c]) {
        keep.push_back(cand[i - 1]);
        c -= (a.bytes[cand[i - 1]] + unit - 1) / unit;
      }
    return keep;
  };
  SmallVector<unsigned> keep = knapsack(items);
  while (true) {
    DenseSet<unsigned> unbanned(items.begin(), items.end());
    for (unsigned x : keep)
      unbanned.erase(x);
    CutProblem p = a.buildProblem(Policy::MinCut, unbanned);
    FailureOr<Plan> plan = planFromCut(a, solveMinCut(p));
    if (failed(plan))
      return failure();
    if (plan->savedBytes <= limit)
      return std::make_pair(*plan, p);
    if (keep.empty())
      break;
    // Over the limit: give up the kept item of least cost per byte.
    auto worst = llvm::min_element(keep, [&](unsigned l, unsigned r) {
      return recomputeCost(a.nodeOp[l], a.opts.dynamicDimSize) /
                 double(std::max<int64_t>(1, a.bytes[l])) <
             recomputeCost(a.nodeOp[r], a.opts.dynamicDimSize) /
                 double(std::max<int64_t>(1, a.bytes[r]));
    });
    keep.erase(worst);
  }
  return std::make_pair(*rc, rcProblem);
}

} // namespace

unsigned partition::splitBatchNormNormalization(func::FuncOp fn) {
  unsigned n = 0;
  fn.walk([&](kt::BatchNormTrainOp op) {
    Value y = op.getResult();
    auto xt = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto st = dyn_cast<RankedTensorType>(op.getSaveMean().getType());
    // Same element type as the statistics (f32, f64): the pointwise ops
    // round as the op's own normalization does; half inputs compute theirs
    // in f32 and stay whole.
    if (y.use_empty() || !xt || !st || xt.getRank() < 2 ||
        ShapedType::isDynamic(xt.getDimSize(1)) ||
        xt.getElementType() != st.getElementType())
      return;
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    kt::KTBuilder e(b, op.getLoc());
    // [C] -> [C, 1, ...]: broadcasts against [N, C, ...].
    SmallVector<int64_t> view(xt.getRank() - 1, 1);
    view[0] = xt.getDimSize(1);
    auto channel = [&](Value v) { return e.reshape(v, view); };
    // The lowering's order: ((x - mean) * invstd) * weight + bias.
    Value v = e.mul(e.sub(op.getInput(), channel(op.getSaveMean())),
                    channel(op.getSaveInvstd()));
    if (Value w = op.getWeight())
      v = e.mul(v, channel(w));
    if (Value bias = op.getBias())
      v = e.add(v, channel(bias));
    // Broadcasting [N, C, ...] with [C, 1, ...] gives x's type, i.e. y's.
    assert(v.getType() == y.getType() && "normalization changed the type");
    y.replaceAllUsesWith(v);
    ++n;
  });
  return n;
}

FailureOr<PartitionResult>
partition::partitionJoint(func::FuncOp joint, const PartitionOptions &opts) {
  if (!(opts.memoryBudget >= 0.0 && opts.memoryBudget <= 1.0))
    return joint.emitError("kiln-partition: memory budget ")
           << opts.memoryBudget << " is outside [0, 1]";
  if (opts.memoryBudget != 1.0 && opts.policy != Policy::MinCut)
    return joint.emitError("kiln-partition: memory-budget applies to "
                           "policy=mincut only, not ")
           << stringifyPolicy(opts.policy);
  if (opts.dynamicDimSize < 1)
    return joint.emitError("kiln-partition: dynamic-dim-size must be >= 1");
  FailureOr<JointInfo> info = getJointInfo(joint);
  if (failed(info))
    return failure();
  if (opts.policy == Policy::MinCut)
    splitBatchNormNormalization(joint);
  if (opts.cse) {
    // As AOTAutograd (fx_graph_cse before the min-cut): a backward op the
    // rules emitted again (e.g. the same kt.mul twice, or kt.exp of a
    // primal already computed by the forward) becomes one value.
    IRRewriter rewriter(joint.getContext());
    DominanceInfo dom(joint);
    eliminateCommonSubExpressions(rewriter, dom, joint);
  }
  Analysis a(joint, *info, opts);
  if (failed(a.run()))
    return failure();

  PartitionResult r;
  r.policy = opts.policy;
  r.memoryBudget = opts.memoryBudget;
  r.dynamicDimSize = opts.dynamicDimSize;
  Policy policy = opts.policy;
  if (policy == Policy::MinCut && opts.memoryBudget == 0.0)
    policy = Policy::RecomputeAll;

  std::optional<Plan> plan;
  std::optional<CutProblem> problem;
  if (policy == Policy::SaveAll) {
    FailureOr<Plan> p = makePlan(a, a.requiredFw);
    if (failed(p))
      return failure();
    plan = *p;
  } else {
    DenseSet<unsigned> none;
    problem = a.buildProblem(policy, none);
    CutSolution sol = solveMinCut(*problem);
    r.cutValue = capToString(sol.value);
    FailureOr<Plan> p = planFromCut(a, sol);
    if (failed(p))
      return failure();
    plan = *p;
    // The cut minimizes weighted bytes (distance and materialization
    // factors), so in rare graphs its real bytes could exceed save-all's;
    // then save-all's split is the better one (fewer bytes, nothing
    // recomputed) and is used instead.
    if (policy == Policy::MinCut) {
      FailureOr<Plan> all = makePlan(a, a.requiredFw);
      if (failed(all))
        return failure();
      if (all->savedBytes < plan->savedBytes) {
        plan = *all;
        r.usedSaveAll = true;
      }
    }
    if (policy == Policy::MinCut && opts.memoryBudget < 1.0) {
      auto pb = planWithBudget(a, opts.memoryBudget, *plan, *problem);
      if (failed(pb))
        return failure();
      r.usedSaveAll = r.usedSaveAll && pb->first.saved == plan->saved;
      plan = pb->first;
      problem = pb->second;
      r.cutValue = capToString(solveMinCut(*problem).value);
    }
  }

  if (opts.verifyOptimal && problem) {
    unsigned numFree = 0;
    std::optional<Cap> best =
        bruteForceMinCut(*problem, opts.verifyOptimalMaxNodes, numFree);
    r.numFreeNodes = numFree;
    if (best) {
      r.bruteForceValue = capToString(*best);
      if (*r.bruteForceValue != *r.cutValue)
        return joint.emitError("kiln-partition: the min-cut value ")
               << *r.cutValue << " differs from the exhaustive optimum "
               << *r.bruteForceValue << " over " << numFree << " nodes";
    }
  }

  if (failed(build(a, *plan, r)))
    return failure();
  if (!opts.keepJoint)
    joint.erase();
  return r;
}

std::string partition::formatReport(const PartitionResult &r) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "policy=" << stringifyPolicy(r.policy);
  if (r.policy == Policy::MinCut && r.memoryBudget < 1.0)
    os << " budget=" << llvm::format("%g", r.memoryBudget);
  os << " saved " << r.numSaved << " values (" << r.savedBytes << " bytes, "
     << r.savedActivationBytes << " of activations)";
  if (r.dynamic)
    os << " counting each ? dim as " << r.dynamicDimSize;
  if (r.numPassedPrimals)
    os << " (" << r.numPassedPrimals
       << " primals passed by the caller, not returned)";
  if (r.usedSaveAll)
    os << " (save-all's split: the min-cut's saved more bytes)";
  os << ", recomputed " << r.recomputedOps.size() << " ops";
  if (!r.recomputedOps.empty()) {
    os << ": ";
    llvm::interleaveComma(r.recomputedOps, os);
  }
  return s;
}
