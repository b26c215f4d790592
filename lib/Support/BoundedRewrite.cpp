//===- BoundedRewrite.cpp - Greedy rewriting with a cap that reports ------===//
//
// Part of Kiln. See kiln/Support/BoundedRewrite.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/BoundedRewrite.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace mlir;

namespace {

/// Counts the successful rewrites of each pattern (by debug name) and
/// forwards every notification to the listener the caller configured.
struct CountingListener : public RewriterBase::ForwardingListener {
  CountingListener(OpBuilder::Listener *next)
      : RewriterBase::ForwardingListener(next) {}

  void notifyPatternBegin(const Pattern &pattern, Operation *op) override {
    current = pattern.getDebugName();
    if (current.empty())
      current = pattern.getRootKind() ? pattern.getRootKind()->getStringRef()
                                      : StringRef("<unnamed pattern>");
    ForwardingListener::notifyPatternBegin(pattern, op);
  }
  void notifyPatternEnd(const Pattern &pattern, LogicalResult status) override {
    if (succeeded(status)) {
      ++counts[current];
      ++total;
    }
    ForwardingListener::notifyPatternEnd(pattern, status);
  }

  StringRef current;
  llvm::StringMap<int64_t> counts;
  int64_t total = 0;
};

/// A listener that forwards nothing (ForwardingListener needs a target).
struct NullListener : public RewriterBase::Listener {};

LogicalResult apply(llvm::function_ref<LogicalResult(GreedyRewriteConfig)> run,
                    GreedyRewriteConfig config, Operation *reportOn,
                    StringRef what) {
  NullListener null;
  OpBuilder::Listener *next = config.getListener();
  CountingListener counter(next ? next : &null);
  config.setListener(&counter);
  if (succeeded(run(config)))
    return success();
  SmallVector<std::pair<int64_t, StringRef>> top;
  for (auto &e : counter.counts)
    top.push_back({e.second, e.first()});
  std::sort(top.begin(), top.end(), [](auto &a, auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // At the op's location, without the op itself (Operation::emitWarning
  // would attach the whole, by now bloated, region as a note).
  InFlightDiagnostic d = emitWarning(reportOn->getLoc())
                         << what << ": " << kiln::kNotConvergedMessage
                         << " after " << counter.total << " rewrites";
  if (!top.empty()) {
    d << " (most applied:";
    for (size_t i = 0; i < std::min<size_t>(top.size(), 3); ++i)
      d << (i ? ", " : " ") << top[i].second << " (" << top[i].first << ")";
    d << ")";
  }
  d << "; the result is correct but compiling took longer than it should: "
       "please report it";
  return failure();
}

} // namespace

LogicalResult kiln::applyPatternsBounded(
    Region &region, const FrozenRewritePatternSet &patterns,
    GreedyRewriteConfig config, Operation *reportOn, StringRef what) {
  return apply(
      [&](GreedyRewriteConfig c) {
        return applyPatternsGreedily(region, patterns, c);
      },
      config, reportOn, what);
}

LogicalResult kiln::applyPatternsBounded(
    Operation *op, const FrozenRewritePatternSet &patterns,
    GreedyRewriteConfig config, StringRef what) {
  return apply(
      [&](GreedyRewriteConfig c) {
        return applyPatternsGreedily(op, patterns, c);
      },
      config, op, what);
}
