//===- Explain.cpp - explain(): report graphs and breaks ------------------===//
//
// Part of Kiln. kiln-explain: what torch._dynamo.explain() reports, per
// kg.program: graph and break counts, op count, break reasons with source
// stacks, and the ops of each graph. The IR is not changed.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "llvm/Support/FileSystem.h"

namespace kiln {
#define GEN_PASS_DEF_KILNEXPLAINPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

static void collectFrames(Location loc, SmallVectorImpl<std::string> &out) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    out.push_back((file.getFilename().getValue() + ":" + Twine(file.getLine()) +
                   ":" + Twine(file.getColumn()))
                      .str());
    return;
  }
  if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    collectFrames(call.getCallee(), out);
    collectFrames(call.getCaller(), out);
    return;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    size_t before = out.size();
    collectFrames(name.getChildLoc(), out);
    if (out.size() == before)
      out.push_back(name.getName().str());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      size_t before = out.size();
      collectFrames(l, out);
      if (out.size() != before)
        return;
    }
  }
}

SmallVector<std::string> kiln::formatLocationStack(Location loc) {
  SmallVector<std::string> frames;
  collectFrames(loc, frames);
  if (frames.empty())
    frames.push_back("<unknown>");
  return frames;
}

ExplainReport kiln::explainProgram(kg::ProgramOp program) {
  ExplainReport report;
  report.program = program.getSymName().str();
  program.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto graph = dyn_cast<kg::GraphOp>(op)) {
      ExplainReport::Graph g;
      g.name = graph.getCallee().str();
      Region *body = &graph.getBody();
      if (graph.isOutlined()) {
        auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            graph, graph.getCalleeAttr());
        body = fn ? &fn.getBody() : nullptr;
      }
      if (body)
        body->walk<WalkOrder::PreOrder>([&](Operation *inner) {
          if (inner->getName().getDialectNamespace() == "kt")
            g.ops.push_back(inner->getName().getStringRef().str());
        });
      report.opCount += g.ops.size();
      report.graphs.push_back(std::move(g));
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  forEachGraphBreak(program, [&](Operation *op, StringRef reason) {
    report.breaks.push_back({reason.str(), formatLocationStack(op->getLoc())});
  });
  return report;
}

void kiln::printExplainReport(const ExplainReport &report,
                              llvm::raw_ostream &os) {
  os << "Program: @" << report.program << "\n";
  os << "Graph Count: " << report.graphs.size() << "\n";
  os << "Graph Break Count: " << report.breaks.size() << "\n";
  os << "Op Count: " << report.opCount << "\n";
  os << "Break Reasons:\n";
  for (auto [i, brk] : llvm::enumerate(report.breaks)) {
    os << "  Break Reason " << i + 1 << ":\n";
    os << "    Reason: " << brk.reason << "\n";
    os << "    User Stack:\n";
    for (const std::string &frame : brk.stack)
      os << "      " << frame << "\n";
  }
  os << "Ops per Graph:\n";
  for (auto [i, g] : llvm::enumerate(report.graphs)) {
    os << "  Graph " << i + 1 << ": @" << g.name << "\n";
    for (const std::string &op : g.ops)
      os << "    " << op << "\n";
  }
}

namespace {
struct ExplainPass : public kiln::impl::KilnExplainPassBase<ExplainPass> {
  using Base::Base;
  void runOnOperation() override {
    markAllAnalysesPreserved();
    std::unique_ptr<llvm::raw_fd_ostream> file;
    llvm::raw_ostream *os = &llvm::outs();
    if (!output.empty() && output != "-") {
      std::error_code ec;
      file = std::make_unique<llvm::raw_fd_ostream>(output, ec,
                                                    llvm::sys::fs::OF_Text);
      if (ec) {
        getOperation().emitError("kiln-explain: cannot open '")
            << output << "': " << ec.message();
        return signalPassFailure();
      }
      os = file.get();
    }
    for (auto program : getOperation().getOps<kg::ProgramOp>())
      printExplainReport(explainProgram(program), *os);
    os->flush();
  }
};
} // namespace
