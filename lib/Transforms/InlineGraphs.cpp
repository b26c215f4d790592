//===- InlineGraphs.cpp - move graph functions back into graphs -----------===//
//
// Part of Kiln. kiln-inline-graphs: the reverse of kiln-outline-graphs.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNINLINEGRAPHSPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

LogicalResult kiln::inlineGraph(kg::GraphOp graph, SymbolTable &symbols) {
  if (!graph.isOutlined())
    return success();
  auto fn = symbols.lookup<func::FuncOp>(graph.getCallee());
  if (!fn)
    return graph.emitOpError("outlined graph '")
           << graph.getCallee() << "' is not a func.func in the module";
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return graph.emitOpError("graph function '")
           << graph.getCallee() << "' must have exactly one block to inline";
  IRMapping map;
  fn.getBody().cloneInto(&graph.getBody(), map);
  Block &block = graph.getBody().front();
  Operation *ret = block.getTerminator();
  OpBuilder b(ret);
  auto yield = kg::YieldOp::create(b, ret->getLoc(), ret->getOperands());
  for (NamedAttribute a : ret->getDiscardableAttrs())
    yield->setAttr(a.getName(), a.getValue());
  ret->erase();
  return success();
}

/// True if `fn` is referenced by anything other than an inline kg.graph (whose
/// callee attribute only names the function it would be outlined to).
static bool hasRealUse(func::FuncOp fn, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(fn, module);
  if (!uses)
    return true; // unknown uses: keep it
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto graph = dyn_cast<kg::GraphOp>(use.getUser());
    if (!graph || graph.isOutlined())
      return true;
  }
  return false;
}

FailureOr<unsigned> kiln::inlineGraphs(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<kg::GraphOp> graphs;
  module.walk([&](kg::GraphOp g) {
    if (g.isOutlined())
      graphs.push_back(g);
  });
  llvm::SetVector<func::FuncOp> functions;
  for (kg::GraphOp g : graphs) {
    if (auto fn = symbols.lookup<func::FuncOp>(g.getCallee()))
      functions.insert(fn);
    if (failed(inlineGraph(g, symbols)))
      return failure();
  }
  for (func::FuncOp fn : functions)
    if (fn.isPrivate() && !hasRealUse(fn, module))
      symbols.erase(fn);
  return graphs.size();
}

namespace {
struct InlineGraphsPass
    : public kiln::impl::KilnInlineGraphsPassBase<InlineGraphsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(inlineGraphs(getOperation())))
      signalPassFailure();
  }
};
} // namespace
