//===- Aliasing.h - Ref arguments that share memory -------------*- C++ -*-===//
//
// Part of Kiln. A caller may pass the same memory for several `!kt.ref`
// arguments of a program (one tensor twice, as tied weights are, or two views
// of one buffer). PyTorch's semantics are that a write through one is seen
// through the others. The runtime:
//
// * finds which ref arguments of a call share memory (`analyzeAliasing`):
//   groups of arguments whose memory overlaps, each either *identical* (the
//   same data pointer, dtype, shape and strides) or *partial* (overlapping
//   views of one buffer);
// * makes the grouping part of an entry's guards (a call aliased
//   differently misses and recompiles, as TorchDynamo guards on duplicate
//   inputs);
// * runs a group on one buffer (`bindArguments`), so every write reaches
//   every alias, and writes each member back into the caller's memory (a
//   row-major ref that overlaps nothing else, or only itself, is run in the
//   caller's memory directly: no copy, no write-back);
// * compiles an entry for identical aliases by making the duplicates' uses
//   use the first one (`specializeForAliasing`), so passes that assume
//   distinct refs (kiln-functionalize) see one ref.
//
// A plain tensor argument whose memory overlaps a ref argument is refused:
// the program takes it as a value, which the writes through the ref would
// change under it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ALIASING_H
#define KILN_RUNTIME_ALIASING_H

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Interpreter/Tensor.h"
#include "kiln/Runtime/Guards.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace kiln::runtime {

/// How the arguments of one call share memory.
struct ArgAliasing {
  /// For each argument, the lowest-numbered argument of its group (itself
  /// when its memory overlaps no other argument's).
  llvm::SmallVector<unsigned, 8> leader;
  /// For each argument in a group: whether it is the same view as its
  /// leader (pointer, dtype, shape, strides), or only overlaps it.
  llvm::SmallVector<bool, 8> identical;

  /// True when some arguments share memory.
  bool any() const;
  /// True when `i` shares memory with another argument.
  bool aliased(unsigned i) const { return leader[i] != i || isLeader(i); }
  /// True when `i` leads a group of two or more arguments.
  bool isLeader(unsigned i) const;
  /// True when the group that `i` belongs to has a member that only
  /// partially overlaps the others.
  bool partialGroup(unsigned i) const;
  bool operator==(const ArgAliasing &o) const {
    return leader == o.leader && identical == o.identical;
  }
  bool operator!=(const ArgAliasing &o) const { return !(*this == o); }
};

/// Finds the arguments of a call whose memory overlaps. `isRef[i]` says
/// whether argument i is a `!kt.ref`; `names[i]` is its name for messages.
/// Fails, with `error` set, when a plain tensor argument overlaps a ref
/// argument, or when overlapping ref arguments differ in dtype or are not
/// aligned to whole elements of each other.
mlir::LogicalResult analyzeAliasing(llvm::ArrayRef<ArgView> args,
                                    llvm::ArrayRef<bool> isRef,
                                    llvm::ArrayRef<std::string> names,
                                    ArgAliasing &out, std::string &error);

/// Why `now` differs from `compiled`, in the form of a recompile reason
/// ("ref arguments 'a' and 'b' are the same tensor (the entry was compiled
/// for distinct tensors)"). Empty when they are equal.
std::string describeAliasingChange(const ArgAliasing &compiled,
                                   const ArgAliasing &now,
                                   llvm::ArrayRef<std::string> names);

/// The interpreter tensors a call of `program` runs on: a copy of each ref
/// argument (`isRef[i]`; an argument past the end of `isRef` counts as a
/// ref), except that the arguments of a group share one buffer (identical
/// members are the same tensor; partial members are ref views into a buffer
/// spanning the group's memory), so a write through one is seen by the
/// others, and nothing reaches the caller's memory before writeBackRefs.
/// A plain (value) argument that is contiguous is *borrowed*: its tensor
/// is the caller's memory, not a copy (`borrowed[i]` is set), since
/// programs never write their value arguments (a plain argument cannot
/// overlap a ref: analyzeAliasing refuses it); a strided one is copied.
/// Results that share storage with a borrowed argument must be copied
/// before they outlive the call (`detachFromBorrowed`). Fails, with
/// `error` naming the argument and the size ("argument #0 of @p: cannot
/// allocate ..."), when a copy cannot be allocated.
///
/// With `borrowRefs`, a ref argument whose view is row-major (size-1 dims
/// with any stride; non-empty) and that shares memory with no other
/// argument, or only with arguments that are the same view (the same
/// tensor passed twice), is borrowed too: its tensor is a ref over the
/// caller's memory, so the program's writes land there as they happen (no
/// copy in, and writeBackRefs skips it). A call that fails midway then
/// leaves what it wrote before the failure in the caller's memory, as an
/// eager in-place op sequence does. Partially overlapping refs and strided
/// refs are copied and written back as before.
mlir::FailureOr<llvm::SmallVector<interp::Tensor>>
bindArguments(llvm::ArrayRef<ArgView> args, const ArgAliasing &aliasing,
              llvm::ArrayRef<bool> isRef, llvm::StringRef program,
              llvm::SmallVectorImpl<bool> &borrowed, std::string &error,
              bool borrowRefs = false);

/// Whether bindArguments would borrow ref argument `view` (see there).
bool canBorrowRef(const ArgView &view);

/// Replaces each of `results` that shares storage with an argument tensor
/// bindArguments borrowed by a copy of it (a program that returns its
/// argument, or a reshape of it, in the interpreter): the caller may free
/// its memory after the call. Fails like `Tensor::create`.
mlir::LogicalResult
detachFromBorrowed(llvm::MutableArrayRef<interp::Tensor> results,
                   llvm::ArrayRef<interp::Tensor> args,
                   llvm::ArrayRef<bool> borrowed, std::string &error);

/// After a successful call: copies the final contents of every ref argument
/// (`isRef`) from `tensors` (as made by bindArguments) into the caller's
/// memory, strides respected; refs bindArguments borrowed (`borrowed`) are
/// already there and are skipped.
void writeBackRefs(llvm::ArrayRef<interp::Tensor> tensors,
                   llvm::ArrayRef<ArgView> args, llvm::ArrayRef<bool> isRef,
                   llvm::ArrayRef<bool> borrowed = {});

/// Compiles `program` (a specialized entry) for `aliasing`: every use of an
/// argument identical to its group's leader, except by kg.guard_* ops, uses
/// the leader instead (both must have the same type). Fails when two
/// partially overlapping ref arguments are passed to one graph (a compiled
/// graph cannot see the overlap).
mlir::LogicalResult specializeForAliasing(kg::ProgramOp program,
                                          const ArgAliasing &aliasing,
                                          std::string &error);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ALIASING_H
