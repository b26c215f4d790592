//===- SplitGraphs.cpp - disallow_in_graph: split graphs at ops -----------===//
//
// Part of Kiln. kiln-split-graphs: every inline kg.graph holding a
// disallowed op is split at it; the op moves into a kg.break that runs on the
// host, between the graph of the ops before and the graph of the ops after.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Support/OpNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITGRAPHSPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

std::string kiln::makeUniqueName(StringRef base, llvm::StringSet<> &used) {
  if (used.insert(base).second)
    return base.str();
  for (unsigned i = 1;; ++i) {
    std::string name = (base + "_" + Twine(i)).str();
    if (used.insert(name).second)
      return name;
  }
}

llvm::StringSet<> kiln::collectGraphNames(ModuleOp module) {
  llvm::StringSet<> names;
  module.walk([&](Operation *op) {
    if (auto sym =
            op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      names.insert(sym.getValue());
    if (auto graph = dyn_cast<kg::GraphOp>(op))
      names.insert(graph.getCallee());
  });
  return names;
}

LogicalResult kiln::verifyDisallowList(MLIRContext *ctx,
                                       ArrayRef<std::string> names,
                                       Location loc) {
  bool ok = true;
  for (const std::string &name : names) {
    std::optional<RegisteredOperationName> info =
        lookupRegisteredOp(ctx, name);
    if (!info) {
      emitError(loc) << "disallow: '" << name
                     << "' is not a registered op, so it cannot be in a "
                        "graph; disallow_in_graph takes graph ops such as "
                        "kt.abs (to keep a function out of graphs, run it in "
                        "a kg.break: disable)";
      ok = false;
      continue;
    }
    // Host-only ops are the kg ops other than kg.is_compiling (the rule of
    // kg::isAllowedInGraph); terminators are structure, not ops to move.
    bool hostOnly =
        info->getDialectNamespace() == kg::KGDialect::getDialectNamespace() &&
        StringRef(name) != kg::IsCompilingOp::getOperationName();
    if (hostOnly || info->hasTrait<OpTrait::IsTerminator>()) {
      emitError(loc) << "disallow: '" << name
                     << "' is not an op that can appear in a graph ("
                     << (hostOnly ? "a host-only op" : "a terminator")
                     << "); to run code on the host use a kg.break "
                        "(disable) instead";
      ok = false;
    }
  }
  return success(ok);
}

FailureOr<SplitGraphResult>
kiln::splitGraphAt(kg::GraphOp graph,
                   function_ref<bool(Operation *)> isDisallowed,
                   llvm::StringSet<> &usedNames) {
  if (graph.isOutlined())
    return graph.emitOpError("is outlined; kiln-split-graphs splits inline "
                             "graphs only (run it before kiln-outline-graphs)");
  Block &body = graph.getBody().front();
  auto yield = cast<kg::YieldOp>(body.getTerminator());

  // A piece is either a run of ops that stay in a graph or one cut
  // (disallowed) op.
  struct Piece {
    SmallVector<Operation *> ops;
    Operation *cut = nullptr;
  };
  SmallVector<Piece> pieces(1);
  bool anyCut = false;
  for (Operation &op : body.without_terminator()) {
    WalkResult nested = op.walk([&](Operation *inner) {
      if (inner != &op && isDisallowed(inner)) {
        inner->emitError("disallowed op '")
            << inner->getName() << "' is nested in a region of '"
            << op.getName()
            << "'; kiln-split-graphs splits graphs at top-level ops only";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return failure();
    if (isDisallowed(&op)) {
      anyCut = true;
      pieces.push_back({{}, &op});
      pieces.emplace_back();
    } else {
      pieces.back().ops.push_back(&op);
    }
  }
  SplitGraphResult result;
  if (!anyCut) {
    result.graphs.push_back(graph);
    return result;
  }

  DenseMap<Operation *, unsigned> pieceOf;
  for (auto [i, piece] : llvm::enumerate(pieces)) {
    for (Operation *op : piece.ops)
      pieceOf[op] = i;
    if (piece.cut)
      pieceOf[piece.cut] = i;
  }
  pieceOf[yield] = pieces.size();

  MLIRContext *ctx = graph.getContext();
  IRMapping hostMap; // graph-body value -> value on the host side
  for (auto [arg, input] : llvm::zip(body.getArguments(), graph.getInputs()))
    hostMap.map(arg, input);
  OpBuilder b(graph);
  bool first = true;
  for (unsigned idx = 0, e = pieces.size(); idx < e; ++idx) {
    Piece &piece = pieces[idx];
    if (Operation *op = piece.cut) {
      std::string reason =
          ("disallowed op " + op->getName().getStringRef()).str();
      auto brk = kg::BreakOp::create(b, op->getLoc(), op->getResultTypes(),
                                     b.getStringAttr(reason));
      Block *block = new Block();
      brk.getBody().push_back(block);
      OpBuilder inner = OpBuilder::atBlockEnd(block);
      Operation *clone = inner.clone(*op, hostMap);
      kg::YieldOp::create(inner, op->getLoc(), clone->getResults());
      for (auto [r, nr] : llvm::zip(op->getResults(), brk.getResults()))
        hostMap.map(r, nr);
      result.breaks.push_back(brk);
      continue;
    }
    if (piece.ops.empty())
      continue;

    // Inputs: values used in the piece and defined before it, in order of
    // first use. Outputs: results used after it.
    llvm::SetVector<Value> inputs;
    for (Operation *op : piece.ops)
      op->walk([&](Operation *user) {
        for (Value v : user->getOperands()) {
          if (auto arg = dyn_cast<BlockArgument>(v)) {
            if (arg.getOwner() == &body)
              inputs.insert(v);
            continue; // an argument of a nested block of this piece
          }
          Operation *def = body.findAncestorOpInBlock(*v.getDefiningOp());
          if (def && pieceOf.lookup(def) != idx)
            inputs.insert(v);
        }
      });
    SmallVector<Value> outputs;
    for (Operation *op : piece.ops)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *user) {
              Operation *top = body.findAncestorOpInBlock(*user);
              return top && pieceOf.lookup(top) > idx;
            }))
          outputs.push_back(r);

    std::string name = first ? graph.getCallee().str()
                             : makeUniqueName(graph.getCallee(), usedNames);
    first = false;
    SmallVector<Value> hostInputs;
    for (Value v : inputs)
      hostInputs.push_back(hostMap.lookup(v));
    SmallVector<Type> resultTypes;
    for (Value v : outputs)
      resultTypes.push_back(v.getType());
    auto piecegraph =
        kg::GraphOp::create(b, graph.getLoc(), resultTypes,
                            FlatSymbolRefAttr::get(ctx, name), hostInputs);
    for (NamedAttribute a : graph->getDiscardableAttrs())
      piecegraph->setAttr(a.getName(), a.getValue());
    Block *block = new Block();
    piecegraph.getBody().push_back(block);
    IRMapping graphMap;
    for (Value v : inputs)
      graphMap.map(v, block->addArgument(v.getType(), v.getLoc()));
    OpBuilder gb = OpBuilder::atBlockEnd(block);
    for (Operation *op : piece.ops)
      gb.clone(*op, graphMap);
    SmallVector<Value> yielded;
    for (Value v : outputs)
      yielded.push_back(graphMap.lookup(v));
    kg::YieldOp::create(gb, yield.getLoc(), yielded);
    for (auto [o, r] : llvm::zip(outputs, piecegraph.getResults()))
      hostMap.map(o, r);
    result.graphs.push_back(piecegraph);
  }

  SmallVector<Value> replacements;
  for (Value v : yield.getOperands())
    replacements.push_back(hostMap.lookup(v));
  graph->replaceAllUsesWith(replacements);
  graph.erase();
  return result;
}

FailureOr<SplitGraphResult>
kiln::splitGraphAt(kg::GraphOp graph,
                   function_ref<bool(Operation *)> isDisallowed) {
  llvm::StringSet<> used;
  if (auto module = graph->getParentOfType<ModuleOp>())
    used = collectGraphNames(module);
  return splitGraphAt(graph, isDisallowed, used);
}

FailureOr<unsigned> kiln::splitGraphs(ModuleOp module,
                                      ArrayRef<std::string> disallow) {
  if (failed(
          verifyDisallowList(module.getContext(), disallow, module.getLoc())))
    return failure();
  llvm::StringSet<> names;
  for (const std::string &n : disallow)
    names.insert(n);
  auto isDisallowed = [&](Operation *op) {
    return names.contains(op->getName().getStringRef());
  };
  if (names.empty())
    return 0u;

  bool ok = true;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(kg::kGraphFunctionAttr))
      continue;
    fn.walk([&](Operation *op) {
      if (!isDisallowed(op))
        return;
      op->emitError("disallowed op '")
          << op->getName() << "' is in the graph function @" << fn.getSymName()
          << "; kiln-split-graphs splits inline graphs only: run it before "
             "kiln-outline-graphs (or after kiln-inline-graphs)";
      ok = false;
    });
  }

  SmallVector<kg::GraphOp> graphs;
  module.walk([&](kg::GraphOp g) {
    if (!g.isOutlined())
      graphs.push_back(g);
  });
  llvm::StringSet<> used = collectGraphNames(module);
  unsigned breaks = 0;
  for (kg::GraphOp g : graphs) {
    FailureOr<SplitGraphResult> r = splitGraphAt(g, isDisallowed, used);
    if (failed(r))
      ok = false;
    else
      breaks += r->breaks.size();
  }
  if (!ok)
    return failure();
  return breaks;
}

namespace {
struct SplitGraphsPass
    : public kiln::impl::KilnSplitGraphsPassBase<SplitGraphsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::string> names(disallow.begin(), disallow.end());
    if (failed(splitGraphs(getOperation(), names)))
      signalPassFailure();
  }
};
} // namespace
