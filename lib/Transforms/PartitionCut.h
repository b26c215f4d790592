//===- PartitionCut.h - The cut problem of kiln-partition -------*- C++ -*-===//
//
// Part of Kiln. Internal to lib/Transforms: the node-split flow graph of
// AOTAutograd's min-cut partitioner, solved by max-flow (Dinic) and, for
// checking on small graphs, by exhaustive search over the same constraints
// and capacities.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TRANSFORMS_PARTITIONCUT_H
#define KILN_LIB_TRANSFORMS_PARTITIONCUT_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kiln::partition::detail {

/// Capacities: 128-bit so that bytes x distance weighting x tie-break scale
/// never overflow.
using Cap = __int128;
inline constexpr Cap kInf = Cap(1) << 100;

/// A node-split graph: each node `x` is an edge `x_in -> x_out` of capacity
/// `weight[x]` (what saving `x` costs); `source -> x_in` has `sourceCap[x]`
/// (kInf pins `x` to the forward, a small value penalizes recomputing it, 0
/// is no edge); `x_out -> u_in` is kInf for every `u` in `users[x]`;
/// `x_out -> sink` is kInf when `toSink[x]` (the backward uses `x`).
struct CutProblem {
  llvm::SmallVector<Cap> weight, sourceCap;
  llvm::SmallVector<bool> toSink;
  llvm::SmallVector<llvm::SmallVector<unsigned, 4>> users;
  unsigned size() const { return weight.size(); }
};

/// A minimum cut: `value`, and for each node whether `x_in` / `x_out` are on
/// the source side (reachable from the source in the residual graph, i.e.
/// the smallest source side). Node `x` is cut (saved) when `inSource[x] &&
/// !outSource[x]`.
struct CutSolution {
  Cap value = 0;
  llvm::SmallVector<bool> inSource, outSource;
};

/// Max-flow (Dinic) then the source side of the residual graph.
CutSolution solveMinCut(const CutProblem &problem);

/// The optimum of the same problem by enumerating the side of every node
/// not pinned by a kInf source edge (at most `maxFree` of them; none
/// otherwise). `numFree` is set to how many there are.
std::optional<Cap> bruteForceMinCut(const CutProblem &problem,
                                    unsigned maxFree, unsigned &numFree);

std::string capToString(Cap c);

} // namespace kiln::partition::detail

#endif // KILN_LIB_TRANSFORMS_PARTITIONCUT_H
