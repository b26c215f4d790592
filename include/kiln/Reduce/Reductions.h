//===- Reductions.h - Kiln's reductions for kiln-reduce ---------*- C++ -*-===//
//
// Part of Kiln. The program transformations of the minifier (kiln-reduce,
// docs/debugging.md "The minifier"). Each one rewrites a function into a
// smaller program of the same kind; none of them keeps the semantics (the
// test decides whether the problem stays). They return failure when the
// rewrite does not apply or the result cannot be typed; the caller verifies.
//
// * MLIR's reduce machinery: `registerReductionPatternInterfaces` gives the
//   kt dialect a `DialectReductionPatternInterface` whose patterns
//   (`populateKTReductionPatterns`) MLIR's `reduction-tree` pass applies.
// * Values: replace a value by a splat constant or by an argument.
// * Types: give the arguments new types (smaller static dims, a dim
//   dropped, a dynamic dim made static, a narrower dtype) and re-infer the
//   body's result types through InferTypeOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_REDUCE_REDUCTIONS_H
#define KILN_REDUCE_REDUCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Reducer/Tester.h"

#include <string>
#include <vector>

namespace kiln::reduce {

/// Registers the kt dialect's DialectReductionPatternInterface (MLIR's
/// reduction-tree pass collects its patterns from the dialects).
void registerReductionPatternInterfaces(mlir::DialectRegistry &registry);

/// The kt reduction patterns: a side-effect-free kt op with one result is
/// replaced by an operand of the result's type (benefit 2), else by a zeros
/// splat `kt.constant` of a static result type (benefit 1). With `tester`,
/// a rewrite applies only where the module stays interesting (tried on a
/// copy first).
void populateKTReductionPatterns(mlir::RewritePatternSet &patterns,
                                 const mlir::Tester *tester = nullptr);

/// A `kt.constant` splat of `type` (static shape, int or float elements)
/// holding `value`, or null when the type does not allow one.
mlir::Value createSplatConstant(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Type type, double value);

/// Erases the side-effect-free ops of `fn`'s body whose results are unused.
void eraseDeadOps(mlir::func::FuncOp fn);

/// Erases `fn`'s arguments that nothing uses (and their attributes).
void eraseUnusedArguments(mlir::func::FuncOp fn);

/// Number of ops in `module` (the module and functions not counted).
unsigned countOps(mlir::ModuleOp module);

/// Gives `fn`'s arguments `argTypes` (one per argument) and re-infers the
/// result types of the ops of its body in order (ops implementing
/// InferTypeOpInterface; other ops keep theirs) and the function's result
/// types. Failure when an op's types cannot be inferred (the module may
/// then be half rewritten: call it on a copy).
mlir::LogicalResult retypeArguments(mlir::func::FuncOp fn,
                                    llvm::ArrayRef<mlir::Type> argTypes);

/// One candidate of the type reductions: new argument types and what it is.
struct TypeCandidate {
  std::string what;
  std::vector<mlir::Type> argTypes;
};

/// The type reductions of `fn`'s arguments, in the order kiln-reduce tries
/// them (biggest step first; deterministic): every static dim to 1; each
/// distinct dim size s > 1 to 1, else to ceil(s/2) (same size, same new
/// size: dims that must match keep matching); each dim of each argument to
/// 1, else halved; every dynamic dim to 1, then each; each dim dropped;
/// f64 -> f32 and f32 -> f16 for all float arguments. Candidates equal to
/// the current types are left out.
std::vector<TypeCandidate> typeCandidates(mlir::func::FuncOp fn);

/// Size of `fn`'s arguments: total static elements times bits (a dynamic
/// dim counts as 8): every accepted type candidate makes it smaller.
uint64_t argumentBits(mlir::func::FuncOp fn);

} // namespace kiln::reduce

#endif // KILN_REDUCE_REDUCTIONS_H
