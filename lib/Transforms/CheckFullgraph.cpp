//===- CheckFullgraph.cpp - fullgraph=True: fail on graph breaks ----------===//
//
// Part of Kiln. kiln-check-fullgraph: every kg.break is an error, reported
// at the break's location with its reason.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCHECKFULLGRAPHPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

LogicalResult kiln::checkFullgraph(ModuleOp module) {
  unsigned breaks = 0;
  module.walk([&](kg::BreakOp brk) {
    std::string program = "<no program>";
    if (auto p = brk->getParentOfType<kg::ProgramOp>())
      program = p.getSymName().str();
    brk.emitError("graph break in @") << program << ": " << brk.getReason();
    ++breaks;
  });
  return success(breaks == 0);
}

namespace {
struct CheckFullgraphPass
    : public kiln::impl::KilnCheckFullgraphPassBase<CheckFullgraphPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkFullgraph(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
