//===- Aliasing.cpp - Ref arguments that share memory ---------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Aliasing.h"

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Runtime/Session.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using kiln::interp::Tensor;

namespace kiln::runtime {

bool ArgAliasing::any() const {
  for (unsigned i = 0, e = leader.size(); i < e; ++i)
    if (leader[i] != i)
      return true;
  return false;
}

bool ArgAliasing::isLeader(unsigned i) const {
  for (unsigned j = i + 1, e = leader.size(); j < e; ++j)
    if (leader[j] == i)
      return true;
  return false;
}

bool ArgAliasing::partialGroup(unsigned i) const {
  unsigned l = leader[i];
  for (unsigned j = l, e = leader.size(); j < e; ++j)
    if (leader[j] == l && !identical[j])
      return true;
  return false;
}

namespace {

/// The bytes a tensor view can touch: [lo, hi), from its data pointer,
/// element size, shape and (possibly negative) strides.
struct Extent {
  __int128 lo = 0, hi = 0;
  unsigned arg = 0;
};

bool extentOf(const ArgView &v, unsigned arg, Extent &out) {
  if (!v.isTensor || !v.data)
    return false;
  for (int64_t s : v.shape)
    if (s == 0)
      return false;
  __int128 elem = interp::dtypeSize(v.dtype);
  __int128 lo = 0, hi = 0;
  for (unsigned d = 0; d < v.shape.size(); ++d) {
    __int128 span = (__int128)(v.shape[d] - 1) * v.stride(d);
    (span < 0 ? lo : hi) += span;
  }
  __int128 base = (__int128)reinterpret_cast<uintptr_t>(v.data);
  out.lo = base + lo * elem;
  out.hi = base + hi * elem + elem;
  out.arg = arg;
  return true;
}

/// Same memory, dtype, shape and strides (strides of size-1 dims aside).
bool sameView(const ArgView &a, const ArgView &b) {
  if (a.data != b.data || a.dtype != b.dtype || a.shape != b.shape)
    return false;
  for (unsigned d = 0; d < a.shape.size(); ++d)
    if (a.shape[d] > 1 && a.stride(d) != b.stride(d))
      return false;
  return true;
}

} // namespace

LogicalResult analyzeAliasing(ArrayRef<ArgView> args, ArrayRef<bool> isRef,
                              ArrayRef<std::string> names, ArgAliasing &out,
                              std::string &error) {
  unsigned n = args.size();
  out.leader.resize(n);
  out.identical.assign(n, true);
  for (unsigned i = 0; i < n; ++i)
    out.leader[i] = i;

  SmallVector<Extent, 8> extents;
  for (unsigned i = 0; i < n; ++i) {
    Extent e;
    if (extentOf(args[i], i, e))
      extents.push_back(e);
  }
  if (extents.size() < 2)
    return success();
  llvm::sort(extents, [](const Extent &a, const Extent &b) {
    return a.lo < b.lo || (a.lo == b.lo && a.arg < b.arg);
  });
  auto name = [&](unsigned i) {
    return "'" + (i < names.size() ? names[i] : "arg" + std::to_string(i)) +
           "'";
  };

  // Sweep: intervals sorted by start; a group ends where the next interval
  // starts at or after the furthest end so far.
  for (size_t start = 0; start < extents.size();) {
    size_t end = start + 1;
    __int128 hi = extents[start].hi;
    while (end < extents.size() && extents[end].lo < hi) {
      hi = std::max(hi, extents[end].hi);
      ++end;
    }
    if (end - start > 1) {
      unsigned lead = extents[start].arg;
      for (size_t k = start; k < end; ++k)
        lead = std::min(lead, extents[k].arg);
      // A plain tensor overlapping a ref: the program reads it as a value
      // that the ref's writes would change.
      const Extent *ref = nullptr, *plain = nullptr;
      for (size_t k = start; k < end; ++k)
        (isRef[extents[k].arg] ? ref : plain) = &extents[k];
      if (plain) {
        if (ref) {
          error = "argument " + name(plain->arg) +
                  " shares memory with ref argument " + name(ref->arg) +
                  ", which the program may write: the program takes " +
                  name(plain->arg) +
                  " as a value (pass a copy, or declare it a !kt.ref too)";
          return failure();
        }
        // Plain tensors that share memory are read-only values: nothing to
        // do for them.
        start = end;
        continue;
      }
      const ArgView &l = args[lead];
      size_t elem = interp::dtypeSize(l.dtype);
      for (size_t k = start; k < end; ++k) {
        unsigned a = extents[k].arg;
        out.leader[a] = lead;
        out.identical[a] = sameView(args[a], l);
        if (out.identical[a])
          continue;
        if (args[a].dtype != l.dtype) {
          error = "ref arguments " + name(lead) + " and " + name(a) +
                  " share memory but have different dtypes (" +
                  interp::dtypeName(l.dtype).str() + " and " +
                  interp::dtypeName(args[a].dtype).str() + ")";
          return failure();
        }
        auto pa = reinterpret_cast<uintptr_t>(args[a].data);
        auto pl = reinterpret_cast<uintptr_t>(l.data);
        if ((pa > pl ? pa - pl : pl - pa) % elem != 0) {
          error = "ref arguments " + name(lead) + " and " + name(a) +
                  " share memory but are not aligned to whole elements of "
                  "each other";
          return failure();
        }
      }
    }
    start = end;
  }
  return success();
}

std::string describeAliasingChange(const ArgAliasing &compiled,
                                   const ArgAliasing &now,
                                   ArrayRef<std::string> names) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto name = [&](unsigned i) {
    return "'" + (i < names.size() ? names[i] : "arg" + std::to_string(i)) +
           "'";
  };
  auto state = [](const ArgAliasing &a, unsigned i, unsigned other) {
    if (a.leader[i] != a.leader[other])
      return "distinct tensors";
    return a.identical[i] && a.identical[other] ? "the same tensor"
                                                : "overlapping views";
  };
  unsigned n = std::min(compiled.leader.size(), now.leader.size());
  for (unsigned i = 0; i < n; ++i) {
    if (compiled.leader[i] == now.leader[i] &&
        compiled.identical[i] == now.identical[i])
      continue;
    // Name the pair that changed: i and the leader it has now, or had.
    unsigned other = now.leader[i] != i ? now.leader[i] : compiled.leader[i];
    if (other == i)
      continue; // i leads in both; a later member tells the change
    os << "ref arguments " << name(other) << " and " << name(i)
       << " aliasing mismatch. expected " << state(compiled, i, other)
       << ", actual " << state(now, i, other);
    return s;
  }
  return s;
}

/// Whether `strides` lay out `shape` contiguously in row-major order (size-1
/// dims may have any stride).
static bool isRowMajor(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  int64_t expected = 1;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] == 1)
      continue;
    if (strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

/// Copies the contents of `t` (a tensor, or a ref through its layout) into the
/// caller's memory that `view` describes (its strides respected). Both
/// row-major contiguous (a parameter an optimizer step updates): one memcpy;
/// otherwise element by element, with the strides computed once (the loop
/// asked ArgView::stride, which derives a contiguous view's strides from its
/// shape, for every element and dim: ~25 ms for 1M floats, load 5).
static void writeBackView(const Tensor &t, const ArgView &view) {
  size_t elem = interp::dtypeSize(view.dtype);
  int64_t n = t.numel();
  if (n == 0 || !view.data)
    return;
  auto *dst = static_cast<uint8_t *>(const_cast<void *>(view.data));
  auto *src = static_cast<const uint8_t *>(t.data());
  unsigned rank = view.shape.size();
  SmallVector<int64_t> dstStrides, srcStrides(rank, 0);
  for (unsigned d = 0; d < rank; ++d)
    dstStrides.push_back(view.stride(d));
  // A ref is read through its layout (no copy of its contents); a tensor is
  // row-major.
  int64_t base = t.isRef() ? t.refOffset() : 0;
  if (t.isRef()) {
    for (unsigned d = 0; d < rank; ++d)
      srcStrides[d] = t.refStrides()[d];
  } else {
    int64_t s = 1;
    for (int64_t d = (int64_t)rank - 1; d >= 0; --d) {
      srcStrides[d] = s;
      s *= view.shape[d];
    }
  }
  if (isRowMajor(view.shape, dstStrides) &&
      isRowMajor(view.shape, srcStrides)) {
    std::memmove(dst, src + base * (int64_t)elem, n * elem);
    return;
  }
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, from = base;
    for (unsigned d = 0; d < rank; ++d) {
      off += idx[d] * dstStrides[d];
      from += idx[d] * srcStrides[d];
    }
    // Signed byte offsets: strides may be negative.
    std::memcpy(dst + off * (int64_t)elem, src + from * (int64_t)elem, elem);
    for (int64_t d = (int64_t)rank - 1; d >= 0; --d) {
      if (++idx[d] < view.shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// Whether `v` is a non-empty tensor whose elements are contiguous in
/// row-major order (size-1 dims may have any stride).
static bool isContiguousView(const ArgView &v) {
  if (!v.isTensor || !v.data)
    return false;
  int64_t expected = 1;
  for (int64_t d = (int64_t)v.shape.size() - 1; d >= 0; --d) {
    if (v.shape[d] == 0)
      return false;
    if (v.shape[d] != 1 && v.stride(d) != expected)
      return false;
    expected *= v.shape[d];
  }
  return true;
}

bool canBorrowRef(const ArgView &view) { return isContiguousView(view); }

FailureOr<SmallVector<Tensor>>
bindArguments(ArrayRef<ArgView> args, const ArgAliasing &aliasing,
              ArrayRef<bool> isRef, StringRef program,
              SmallVectorImpl<bool> &borrowed, std::string &error,
              bool borrowRefs) {
  unsigned n = args.size();
  SmallVector<Tensor> tensors(n);
  borrowed.assign(n, false);
  auto fail = [&](unsigned i, const Twine &what, llvm::Error e) {
    error = ("argument #" + Twine(i) + " of @" + program + what + ": " +
             llvm::toString(std::move(e)))
                .str();
    return failure();
  };
  for (unsigned i = 0; i < n; ++i) {
    unsigned lead = aliasing.leader[i];
    if (lead != i && aliasing.identical[i] && !aliasing.partialGroup(i)) {
      // The leader came first (lower index): share its tensor (and, for a
      // ref, whether it is the caller's memory).
      tensors[i] = tensors[lead];
      bool ref = i >= isRef.size() || isRef[i];
      if (ref)
        borrowed[i] = borrowed[lead];
      continue;
    }
    if (!aliasing.aliased(i) || !aliasing.partialGroup(i)) {
      // A ref argument written in place: a ref over the caller's memory
      // when row-major (the program's writes are the caller's; no copy in,
      // no write-back). Its group, if any, holds only identical views
      // (partial groups take the shared-buffer path below).
      bool ref = i >= isRef.size() || isRef[i];
      if (ref && borrowRefs && canBorrowRef(args[i])) {
        tensors[i] = Tensor::makeRef(
            Tensor::adopt(args[i].dtype, args[i].shape,
                          const_cast<void *>(args[i].data), [] {}));
        borrowed[i] = true;
        continue;
      }
      // A value argument: read, never written, by the program. Borrowed
      // when contiguous (the caller keeps it alive for the call).
      if (i < isRef.size() && !isRef[i] && isContiguousView(args[i])) {
        tensors[i] = Tensor::adopt(args[i].dtype, args[i].shape,
                                   const_cast<void *>(args[i].data), [] {});
        borrowed[i] = true;
        continue;
      }
      llvm::Expected<Tensor> t = tensorFromView(args[i]);
      if (!t)
        return fail(i, "", t.takeError());
      tensors[i] = std::move(*t);
      continue;
    }
    if (lead != i)
      continue; // made with its leader below
    // A group with partial overlaps: one buffer spanning the group's memory,
    // each member a ref view into it.
    size_t elem = interp::dtypeSize(args[i].dtype);
    SmallVector<Extent> members;
    __int128 lo = 0, hi = 0;
    for (unsigned j = i; j < n; ++j) {
      if (aliasing.leader[j] != i)
        continue;
      Extent e;
      if (!extentOf(args[j], j, e))
        continue;
      if (members.empty() || e.lo < lo)
        lo = e.lo;
      if (members.empty() || e.hi > hi)
        hi = e.hi;
      members.push_back(e);
    }
    int64_t count = (int64_t)((hi - lo) / elem);
    llvm::Expected<Tensor> created = Tensor::create(args[i].dtype, {count});
    if (!created)
      return fail(i, " (the buffer of the arguments sharing its memory)",
                  created.takeError());
    Tensor &base = *created;
    std::memcpy(base.mutableData(),
                reinterpret_cast<const void *>((uintptr_t)lo), count * elem);
    for (const Extent &e : members) {
      const ArgView &v = args[e.arg];
      // The view's first element relative to the span, in elements.
      int64_t offset =
          (int64_t)(((__int128)reinterpret_cast<uintptr_t>(v.data) - lo) /
                    (__int128)elem);
      SmallVector<int64_t> strides;
      for (unsigned d = 0; d < v.shape.size(); ++d)
        strides.push_back(v.stride(d));
      tensors[e.arg] = base.refView(v.shape, offset, strides);
    }
  }
  return tensors;
}

LogicalResult detachFromBorrowed(MutableArrayRef<Tensor> results,
                                 ArrayRef<Tensor> args,
                                 ArrayRef<bool> borrowed, std::string &error) {
  for (auto [r, t] : llvm::enumerate(results)) {
    if (t.isNull())
      continue;
    bool shares = false;
    for (auto [a, b] : llvm::zip(args, borrowed))
      shares |= b && t.sharesStorage(a);
    if (!shares)
      continue;
    llvm::Expected<Tensor> copy = t.clone();
    if (!copy) {
      error = "result #" + std::to_string(r) + ": " +
              llvm::toString(copy.takeError());
      return failure();
    }
    t = std::move(*copy);
  }
  return success();
}

void writeBackRefs(ArrayRef<Tensor> tensors, ArrayRef<ArgView> args,
                   ArrayRef<bool> isRef, ArrayRef<bool> borrowed) {
  for (unsigned i = 0, e = args.size(); i < e; ++i)
    if (i < isRef.size() && isRef[i] && args[i].isTensor &&
        !(i < borrowed.size() && borrowed[i]))
      writeBackView(tensors[i], args[i]);
}

LogicalResult specializeForAliasing(kg::ProgramOp program,
                                    const ArgAliasing &aliasing,
                                    std::string &error) {
  if (!aliasing.any())
    return success();
  Block &body = program.getBody().front();
  auto isGuard = [](Operation *op) {
    return isa<kg::GuardTensorOp, kg::GuardValueOp, kg::GuardIdentityOp,
               kg::GuardShapeRelationOp, kg::GuardBackendOp>(op);
  };
  for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
    unsigned lead = aliasing.leader[i];
    if (lead == i || !aliasing.identical[i])
      continue;
    BlockArgument dup = body.getArgument(i), rep = body.getArgument(lead);
    if (dup.getType() != rep.getType()) {
      error = "internal error: aliased arguments '" +
              program.getArgSourceName(lead) + "' and '" +
              program.getArgSourceName(i) + "' were specialized to " +
              "different types";
      return failure();
    }
    dup.replaceUsesWithIf(rep, [&](OpOperand &use) {
      return !isGuard(use.getOwner());
    });
  }
  // Partial overlaps: fine while each graph sees at most one member of a
  // group (the graphs run one after another on the shared buffer); a graph
  // taking two would be compiled as if they were distinct.
  std::string msg;
  program.walk([&](kg::GraphOp graph) {
    if (!msg.empty())
      return;
    SmallVector<unsigned> seen;
    for (Value v : graph->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &body)
        continue;
      unsigned a = arg.getArgNumber();
      if (!aliasing.aliased(a) || !aliasing.partialGroup(a))
        continue;
      for (unsigned s : seen)
        if (s != a && aliasing.leader[s] == aliasing.leader[a]) {
          msg = "ref arguments '" + program.getArgSourceName(s) + "' and '" +
                program.getArgSourceName(a) +
                "' overlap in memory without being the same tensor, and "
                "both are passed to graph @" + graph.getCallee().str() +
                ": Kiln compiles a graph for ref arguments that are the "
                "same tensor or disjoint (pass a copy of one of them)";
          return;
        }
      seen.push_back(a);
    }
  });
  if (!msg.empty()) {
    error = msg;
    return failure();
  }
  return success();
}

} // namespace kiln::runtime
