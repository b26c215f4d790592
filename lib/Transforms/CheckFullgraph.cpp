//===- CheckFullgraph.cpp - fullgraph=True: fail on graph breaks ----------===//
//
// Part of Kiln. kiln-check-fullgraph: every kg.break is an error, reported
// at the break's location with its reason.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCHECKFULLGRAPHPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// True when `v` decides host control flow: it is (or feeds, through host
/// arith ops) the condition of an scf.if, an scf.while or a cf branch.
static bool decidesControlFlow(Value v, unsigned depth = 0) {
  if (depth > 8)
    return false;
  for (Operation *user : v.getUsers()) {
    if (auto ifOp = dyn_cast<scf::IfOp>(user))
      if (ifOp.getCondition() == v)
        return true;
    if (isa<scf::ConditionOp, cf::CondBranchOp>(user))
      return true;
    if (isa_and_nonnull<arith::ArithDialect>(user->getDialect()))
      for (Value r : user->getResults())
        if (decidesControlFlow(r, depth + 1))
          return true;
  }
  return false;
}

void kiln::forEachGraphBreak(Operation *root,
                             function_ref<void(Operation *, StringRef)> fn) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<kg::GraphOp>(op))
      return WalkResult::skip(); // graphs hold no breaks
    if (auto brk = dyn_cast<kg::BreakOp>(op))
      fn(op, brk.getReason());
    else if (auto toHost = dyn_cast<kg::ToHostOp>(op))
      fn(op, decidesControlFlow(toHost.getResult()) ? "generic_jump"
                                                    : "Tensor.item()");
    return WalkResult::advance();
  });
}

LogicalResult kiln::checkFullgraph(ModuleOp module) {
  unsigned breaks = 0;
  forEachGraphBreak(module, [&](Operation *op, StringRef reason) {
    std::string program = "<no program>";
    if (auto p = op->getParentOfType<kg::ProgramOp>())
      program = p.getSymName().str();
    op->emitError("graph break in @") << program << ": " << reason;
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
