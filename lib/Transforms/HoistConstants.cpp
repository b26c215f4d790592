//===- HoistConstants.cpp - work on constant arguments, once per epoch ----===//
//
// Part of Kiln. kiln-hoist-constants: what a graph function computes from
// the kg.program's constant arguments alone (the session option
// constant_args: PyTorch's freezing, parameters the caller promises not to
// change between calls) moves into a graph of its own, marked
// kg.constant_graph, whose results the runtime keeps (Session.cpp: computed
// on the first call and again only after the constant memory changed). The
// typical case is inference batch norm folded into a convolution
// (kiln-fold-conv-bn): w * gamma / sqrt(var + eps) and the folded bias are
// computed once, and the convolution then reads weights that stay at one
// address, which libkiln_onednn packs once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNHOISTCONSTANTSPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// Elements of a statically shaped tensor type, else -1.
static int64_t staticElements(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return -1;
  return t.getNumElements();
}

/// Whether `op` may run once for all calls: a kt op of value semantics
/// (pure, no regions) on tensors, whose results are no larger than its
/// largest operand (a broadcast of a constant stays in the calling graph,
/// where it fuses, instead of being kept in full).
static bool hoistable(Operation *op) {
  if (!isa<kt::KTDialect>(op->getDialect()) || op->getNumRegions() ||
      !isMemoryEffectFree(op) || op->getNumResults() == 0)
    return false;
  int64_t largest = 0;
  for (Value v : op->getOperands()) {
    int64_t n = staticElements(v.getType());
    if (n < 0)
      return false;
    largest = std::max(largest, n);
  }
  for (Value v : op->getResults()) {
    int64_t n = staticElements(v.getType());
    if (n < 0 || n > largest)
      return false;
  }
  return true;
}

/// Operands of `op` that are literals: results of operand-less kt ops
/// (kt.full, kt.constant), cloned into the constant graph where used.
static bool isLiteral(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         isa<kt::KTDialect>(def->getDialect()) && isMemoryEffectFree(def);
}

FailureOr<unsigned> kiln::hoistConstantGraphs(kg::ProgramOp program,
                                              ArrayRef<unsigned> constantArgs,
                                              SymbolTable &symbols) {
  Block &body = program.getBody().front();
  llvm::SmallDenseSet<Value> constantValues;
  for (unsigned i : constantArgs)
    if (i < body.getNumArguments() &&
        !isa<kt::RefType>(body.getArgument(i).getType()))
      constantValues.insert(body.getArgument(i));
  if (constantValues.empty())
    return 0u;

  // Graph functions called from exactly one place.
  llvm::StringMap<unsigned> uses;
  symbols.getOp()->walk([&](kg::GraphOp g) {
    if (g.isOutlined())
      ++uses[g.getCallee()];
  });

  unsigned hoisted = 0;
  SmallVector<kg::GraphOp> graphs;
  for (Operation &op : body)
    if (auto g = dyn_cast<kg::GraphOp>(op))
      if (g.isOutlined() && uses[g.getCallee()] == 1)
        graphs.push_back(g);
  for (kg::GraphOp graph : graphs) {
    auto fn = symbols.lookup<func::FuncOp>(graph.getCallee());
    if (!fn || fn.isExternal() || !fn.getBody().hasOneBlock())
      continue;
    Block &block = fn.getBody().front();
    // Values computed from constant arguments alone, in block order.
    llvm::SmallDenseSet<Value> constant;
    SmallVector<BlockArgument> constantInputs;
    for (auto [i, input] : llvm::enumerate(graph.getInputs()))
      if (constantValues.contains(input)) {
        constant.insert(block.getArgument(i));
        constantInputs.push_back(block.getArgument(i));
      }
    if (constantInputs.empty())
      continue;
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator()) {
      if (!hoistable(&op))
        continue;
      bool any = false, all = true;
      for (Value v : op.getOperands()) {
        if (constant.contains(v))
          any = true;
        else if (!isLiteral(v))
          all = false;
      }
      if (!any || !all)
        continue;
      ops.push_back(&op);
      for (Value r : op.getResults())
        constant.insert(r);
    }
    // What the rest of the graph reads: the constant graph's results.
    llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
    llvm::SetVector<Value> boundary;
    for (Operation *op : ops)
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          if (!inside.contains(user))
            boundary.insert(r);
    if (boundary.empty())
      continue;

    // The constant graph function: its inputs, the hoisted ops (and the
    // literals they read), the boundary values.
    OpBuilder b(fn);
    SmallVector<Type> inputTypes, resultTypes;
    for (BlockArgument a : constantInputs)
      inputTypes.push_back(a.getType());
    for (Value v : boundary)
      resultTypes.push_back(v.getType());
    // Made detached, then named uniquely where it goes (as outlineGraph).
    auto constFn = func::FuncOp::create(
        fn.getLoc(), (fn.getSymName() + "_constant").str(),
        b.getFunctionType(inputTypes, resultTypes));
    constFn->setAttr(kg::kGraphFunctionAttr, b.getUnitAttr());
    constFn.setPrivate();
    symbols.insert(constFn, Block::iterator(fn));
    Block *cb = constFn.addEntryBlock();
    IRMapping map;
    for (auto [a, ca] : llvm::zip(constantInputs, cb->getArguments()))
      map.map(a, ca);
    OpBuilder cbuild = OpBuilder::atBlockEnd(cb);
    for (Operation *op : ops) {
      for (Value v : op->getOperands())
        if (!map.contains(v))
          cbuild.clone(*v.getDefiningOp(), map); // a literal
      cbuild.clone(*op, map);
    }
    SmallVector<Value> results;
    for (Value v : boundary)
      results.push_back(map.lookup(v));
    func::ReturnOp::create(cbuild, fn.getLoc(), results);

    // The graph function reads the boundary values as new arguments.
    SmallVector<Type> newInputs(fn.getArgumentTypes());
    for (Value v : boundary) {
      BlockArgument a = block.addArgument(v.getType(), v.getLoc());
      v.replaceAllUsesWith(a);
      newInputs.push_back(v.getType());
    }
    fn.setFunctionType(b.getFunctionType(newInputs, fn.getResultTypes()));
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty())
        op->erase();
    for (Operation &op : llvm::make_early_inc_range(block))
      if (op.getNumResults() == 1 && op.use_empty() &&
          isLiteral(op.getResult(0)))
        op.erase();

    // The program: the constant graph right before the graph.
    OpBuilder pb(graph);
    SmallVector<Value> constOperands;
    for (BlockArgument a : constantInputs)
      constOperands.push_back(graph.getInputs()[a.getArgNumber()]);
    auto constCall =
        kg::GraphOp::create(pb, graph.getLoc(), resultTypes,
                            constFn.getSymName(), constOperands);
    constCall->setAttr(kConstantGraphAttr, pb.getUnitAttr());
    SmallVector<Value> operands(graph.getInputs());
    llvm::append_range(operands, constCall.getResults());
    graph.getInputsMutable().assign(operands);
    ++hoisted;
  }
  return hoisted;
}

namespace {
struct HoistConstantsPass
    : public kiln::impl::KilnHoistConstantsPassBase<HoistConstantsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<unsigned> indices(args.begin(), args.end());
    SymbolTable symbols(module);
    for (auto program : llvm::to_vector(module.getOps<kg::ProgramOp>()))
      if (failed(hoistConstantGraphs(program, indices, symbols)))
        return signalPassFailure();
  }
};
} // namespace
