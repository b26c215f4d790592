//===- OutlineGraphs.cpp - move graph regions into graph functions --------===//
//
// Part of Kiln. kiln-outline-graphs: each inline kg.graph's region becomes a
// private func.func marked kg.graph_function; the kg.graph calls it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/IR/Builders.h"

namespace kiln {
#define GEN_PASS_DEF_KILNOUTLINEGRAPHSPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

FailureOr<func::FuncOp> kiln::outlineGraph(kg::GraphOp graph,
                                           SymbolTable &symbols) {
  if (graph.isOutlined())
    return graph.emitOpError("is already outlined");
  Operation *table = symbols.getOp();
  Operation *anchor = graph;
  while (anchor && anchor->getParentOp() != table)
    anchor = anchor->getParentOp();
  if (!anchor)
    return graph.emitOpError("is not inside the symbol table's op");

  Builder b(graph.getContext());
  FunctionType type =
      b.getFunctionType(graph.getInputs().getTypes(), graph.getResultTypes());
  func::FuncOp fn =
      func::FuncOp::create(graph.getLoc(), graph.getCallee(), type);
  fn->setAttr(kg::kGraphFunctionAttr, b.getUnitAttr());
  fn.setPrivate();
  fn.getBody().takeBody(graph.getBody());
  Block &block = fn.getBody().front();
  auto yield = cast<kg::YieldOp>(block.getTerminator());
  OpBuilder rb(yield);
  auto ret = func::ReturnOp::create(rb, yield.getLoc(), yield.getOperands());
  for (NamedAttribute a : yield->getDiscardableAttrs())
    ret->setAttr(a.getName(), a.getValue());
  yield.erase();
  StringAttr name = symbols.insert(fn, Block::iterator(anchor));
  graph.setCalleeAttr(FlatSymbolRefAttr::get(name));
  return fn;
}

FailureOr<unsigned> kiln::outlineGraphs(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<kg::GraphOp> graphs;
  module.walk([&](kg::GraphOp g) {
    if (!g.isOutlined())
      graphs.push_back(g);
  });
  for (kg::GraphOp g : graphs)
    if (failed(outlineGraph(g, symbols)))
      return failure();
  return graphs.size();
}

namespace {
struct OutlineGraphsPass
    : public kiln::impl::KilnOutlineGraphsPassBase<OutlineGraphsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(outlineGraphs(getOperation())))
      signalPassFailure();
  }
};
} // namespace
