//===- PartitionCut.cpp - Max-flow / min-cut for kiln-partition -----------===//
//
// Part of Kiln. Dinic's max-flow on the node-split graph of PartitionCut.h,
// the source side of the residual graph, and an exhaustive search used to
// check the cut on small graphs.
//
//===----------------------------------------------------------------------===//

#include "PartitionCut.h"

#include <algorithm>
#include <deque>

using namespace kiln::partition::detail;

namespace {

/// Dinic's algorithm on an adjacency list of paired edges.
class FlowGraph {
public:
  explicit FlowGraph(unsigned n) : adj(n) {}

  void addEdge(unsigned u, unsigned v, Cap c) {
    if (c <= 0)
      return;
    adj[u].push_back(edges.size());
    edges.push_back({v, c});
    adj[v].push_back(edges.size());
    edges.push_back({u, 0});
  }

  Cap maxFlow(unsigned s, unsigned t) {
    Cap flow = 0;
    while (bfs(s, t)) {
      it.assign(adj.size(), 0);
      while (Cap f = dfs(s, t, kInf * 4))
        flow += f;
    }
    return flow;
  }

  /// Vertices reachable from `s` through edges with residual capacity.
  llvm::SmallVector<bool> reachable(unsigned s) const {
    llvm::SmallVector<bool> seen(adj.size(), false);
    std::deque<unsigned> q{s};
    seen[s] = true;
    while (!q.empty()) {
      unsigned u = q.front();
      q.pop_front();
      for (unsigned e : adj[u])
        if (edges[e].cap > 0 && !seen[edges[e].to]) {
          seen[edges[e].to] = true;
          q.push_back(edges[e].to);
        }
    }
    return seen;
  }

private:
  struct Edge {
    unsigned to;
    Cap cap;
  };

  bool bfs(unsigned s, unsigned t) {
    level.assign(adj.size(), -1);
    std::deque<unsigned> q{s};
    level[s] = 0;
    while (!q.empty()) {
      unsigned u = q.front();
      q.pop_front();
      for (unsigned e : adj[u])
        if (edges[e].cap > 0 && level[edges[e].to] < 0) {
          level[edges[e].to] = level[u] + 1;
          q.push_back(edges[e].to);
        }
    }
    return level[t] >= 0;
  }

  // Iterative-enough recursion: the depth is the length of a path in a DAG
  // of at most 2 * nodes + 2 vertices, bounded by the joint's op count.
  Cap dfs(unsigned u, unsigned t, Cap pushed) {
    if (u == t)
      return pushed;
    for (unsigned &i = it[u]; i < adj[u].size(); ++i) {
      Edge &e = edges[adj[u][i]];
      if (e.cap <= 0 || level[e.to] != level[u] + 1)
        continue;
      if (Cap f = dfs(e.to, t, std::min(pushed, e.cap))) {
        e.cap -= f;
        edges[adj[u][i] ^ 1].cap += f;
        return f;
      }
    }
    return 0;
  }

  std::vector<Edge> edges;
  std::vector<std::vector<unsigned>> adj;
  std::vector<int> level;
  std::vector<unsigned> it;
};

} // namespace

CutSolution kiln::partition::detail::solveMinCut(const CutProblem &p) {
  unsigned n = p.size();
  const unsigned source = 2 * n, sink = 2 * n + 1;
  auto in = [](unsigned x) { return 2 * x; };
  auto out = [](unsigned x) { return 2 * x + 1; };
  FlowGraph g(2 * n + 2);
  for (unsigned x = 0; x < n; ++x) {
    g.addEdge(in(x), out(x), p.weight[x]);
    g.addEdge(source, in(x), p.sourceCap[x]);
    if (p.toSink[x])
      g.addEdge(out(x), sink, kInf);
    for (unsigned u : p.users[x])
      g.addEdge(out(x), in(u), kInf);
  }
  CutSolution sol;
  sol.value = g.maxFlow(source, sink);
  llvm::SmallVector<bool> seen = g.reachable(source);
  for (unsigned x = 0; x < n; ++x) {
    sol.inSource.push_back(seen[in(x)]);
    sol.outSource.push_back(seen[out(x)]);
  }
  return sol;
}

std::optional<Cap>
kiln::partition::detail::bruteForceMinCut(const CutProblem &p,
                                          unsigned maxFree,
                                          unsigned &numFree) {
  unsigned n = p.size();
  // Nodes no path from the source reaches are on the sink side in some
  // optimum (putting them there costs nothing and frees their users), so
  // only the others are enumerated; pinned nodes are on the source side.
  llvm::SmallVector<bool> fromSource(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned x = 0; x < n; ++x) {
      if (!fromSource[x] && p.sourceCap[x] > 0)
        fromSource[x] = changed = true;
      if (fromSource[x])
        for (unsigned u : p.users[x])
          if (!fromSource[u])
            fromSource[u] = changed = true;
    }
  }
  llvm::SmallVector<unsigned> free;
  llvm::SmallVector<bool> inS(n, true);
  for (unsigned x = 0; x < n; ++x) {
    if (!fromSource[x])
      inS[x] = false;
    else if (p.sourceCap[x] < kInf)
      free.push_back(x);
  }
  numFree = free.size();
  if (numFree > maxFree || numFree >= 31)
    return std::nullopt;
  // Given which x_in are on the source side, the best x_out side is forced:
  // the sink side when the backward or a sink-side user reads x (then x is
  // saved: weight[x]), else the source side (free). A sink-side x_in costs
  // its source edge.
  std::optional<Cap> best;
  for (uint64_t mask = 0, e = uint64_t(1) << numFree; mask < e; ++mask) {
    for (unsigned k = 0; k < numFree; ++k)
      inS[free[k]] = !((mask >> k) & 1);
    Cap cost = 0;
    for (unsigned x = 0; x < n && cost < kInf; ++x) {
      if (!inS[x]) {
        cost += p.sourceCap[x];
        continue;
      }
      bool readBySinkSide =
          p.toSink[x] ||
          llvm::any_of(p.users[x], [&](unsigned u) { return !inS[u]; });
      if (readBySinkSide)
        cost += p.weight[x];
    }
    if (cost >= kInf)
      continue;
    if (!best || cost < *best)
      best = cost;
  }
  return best;
}

std::string kiln::partition::detail::capToString(Cap c) {
  if (c >= kInf)
    return "inf";
  if (c == 0)
    return "0";
  bool neg = c < 0;
  if (neg)
    c = -c;
  std::string s;
  while (c > 0) {
    s.push_back(char('0' + int(c % 10)));
    c /= 10;
  }
  if (neg)
    s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}
