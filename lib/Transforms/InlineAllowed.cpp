//===- InlineAllowed.cpp - allow_in_graph: trace through calls ------------===//
//
// Part of Kiln. kiln-inline-allowed: calls inside graphs to functions marked
// kg.allow_in_graph stay opaque at capture level; this pass traces through
// them (what AOT Autograd does), keeping the call stack in CallSiteLocs.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNINLINEALLOWEDPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// Deepest chain of allowed functions calling allowed functions that is
/// traced through; deeper means recursion.
static constexpr unsigned kMaxInlineDepth = 32;

FailureOr<SmallVector<Operation *>> kiln::inlineCall(func::CallOp call,
                                                     SymbolTable &symbols) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!callee)
    return call.emitError("callee @")
           << call.getCallee() << " is not a func.func in the module";
  if (callee.isExternal())
    return call.emitError("cannot trace through @")
           << call.getCallee() << ": it is a declaration without a body";
  if (!callee.getBody().hasOneBlock())
    return call.emitError("cannot trace through @")
           << call.getCallee() << ": its body has "
           << callee.getBody().getBlocks().size()
           << " blocks; only single-block functions are inlined";
  Block &block = callee.getBody().front();
  IRMapping map;
  for (auto [arg, operand] :
       llvm::zip(block.getArguments(), call.getOperands()))
    map.map(arg, operand);
  OpBuilder b(call);
  Location callLoc = call.getLoc();
  SmallVector<Operation *> cloned;
  for (Operation &op : block.without_terminator()) {
    Operation *clone = b.clone(op, map);
    clone->walk([&](Operation *inner) {
      inner->setLoc(CallSiteLoc::get(inner->getLoc(), callLoc));
    });
    cloned.push_back(clone);
  }
  SmallVector<Value> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(v));
  call->replaceAllUsesWith(results);
  call.erase();
  return cloned;
}

/// True if `op` is inside a graph: an inline kg.graph region or a graph
/// function.
static bool isInGraph(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (isa<kg::GraphOp>(p))
      return true;
    if (auto fn = dyn_cast<func::FuncOp>(p))
      return fn->hasAttr(kg::kGraphFunctionAttr);
    if (isa<kg::ProgramOp>(p))
      return false;
  }
  return false;
}

FailureOr<unsigned> kiln::inlineAllowedCalls(ModuleOp module) {
  SymbolTable symbols(module);
  auto allowedCallee = [&](func::CallOp call) -> func::FuncOp {
    auto fn = symbols.lookup<func::FuncOp>(call.getCallee());
    return fn && fn->hasAttr(kAllowInGraphAttr) ? fn : func::FuncOp();
  };
  SmallVector<std::pair<func::CallOp, unsigned>> worklist;
  module.walk([&](func::CallOp call) {
    if (isInGraph(call) && allowedCallee(call))
      worklist.push_back({call, 0});
  });
  // Process in program order.
  std::reverse(worklist.begin(), worklist.end());

  llvm::SetVector<func::FuncOp> inlined;
  unsigned count = 0;
  bool ok = true;
  while (!worklist.empty()) {
    func::CallOp call = worklist.back().first;
    unsigned depth = worklist.back().second;
    worklist.pop_back();
    func::FuncOp fn = allowedCallee(call);
    if (depth >= kMaxInlineDepth) {
      call.emitError("allow_in_graph calls through @")
          << fn.getSymName() << " nest deeper than " << kMaxInlineDepth
          << " (a recursive function cannot be traced into a graph)";
      ok = false;
      continue;
    }
    Operation *hostOp = nullptr;
    fn.walk([&](Operation *op) {
      if (!hostOp && !kg::isAllowedInGraph(op))
        hostOp = op;
    });
    if (hostOp) {
      InFlightDiagnostic diag = call.emitError("allow_in_graph function @")
                                << fn.getSymName() << " holds the host op '"
                                << hostOp->getName()
                                << "', which cannot be traced into a graph";
      diag.attachNote(hostOp->getLoc()) << "host op here";
      ok = false;
      continue;
    }
    FailureOr<SmallVector<Operation *>> cloned = inlineCall(call, symbols);
    if (failed(cloned)) {
      ok = false;
      continue;
    }
    inlined.insert(fn);
    ++count;
    SmallVector<std::pair<func::CallOp, unsigned>> nested;
    for (Operation *op : *cloned)
      op->walk([&](func::CallOp c) {
        if (allowedCallee(c))
          nested.push_back({c, depth + 1});
      });
    worklist.append(nested.rbegin(), nested.rend());
  }
  if (!ok)
    return failure();
  for (func::FuncOp fn : inlined)
    if (fn.isPrivate() && SymbolTable::symbolKnownUseEmpty(fn, module))
      symbols.erase(fn);
  return count;
}

namespace {
struct InlineAllowedPass
    : public kiln::impl::KilnInlineAllowedPassBase<InlineAllowedPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(inlineAllowedCalls(getOperation())))
      signalPassFailure();
  }
};
} // namespace
