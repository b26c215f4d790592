//===- Functionalize.h - Remove refs, views and in-place ops ----*- C++ -*-===//
//
// Part of Kiln. The library behind kiln-functionalize and
// kiln-verify-functional (docs/functionalization.md): AOTAutograd's
// functionalization of mutation and aliasing.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_FUNCTIONALIZE_H
#define KILN_TRANSFORMS_FUNCTIONALIZE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace kiln {

/// Rewrites the ops of `block` (the body of a function or a kg.graph region,
/// ending in its terminator) into value semantics: loads, views, stores and
/// in-place ops on refs become value ops on the current value of each base
/// buffer; writes through views become scatters on the base (kt.slice_scatter,
/// kt.select_scatter, the inverse reshape/transpose/permute/squeeze/
/// unsqueeze). Each ref argument that is used is read once by a leading
/// `kt.load`, and each one that is written gets one trailing `kt.store` of its
/// final value before the terminator (the input-mutation epilogue). On an
/// unsupported construct, emits an error at the op and fails (the block may
/// then be partly rewritten).
mlir::LogicalResult functionalizeBlock(mlir::Block &block);

/// A kg.graph that passes one ref value as several inputs aliases its
/// body's ref arguments, which functionalizeBlock reads and writes back as
/// distinct buffers: make the body (the inline region, or the graph function,
/// copied first when another call site uses it) use the first of those
/// arguments for all of them. Fails with an error at the graph when the
/// arguments' types differ.
mlir::LogicalResult mergeRepeatedRefOperands(mlir::ModuleOp module);

/// Functionalizes every func.func body and every kg.graph region in `module`
/// (after mergeRepeatedRefOperands). Distinct ref arguments of one body are
/// assumed not to alias: the runtime compiles an entry for arguments that
/// share memory (see docs/runtime.md).
mlir::LogicalResult functionalize(mlir::ModuleOp module);

/// Checks the functional contract on every func.func body and kg.graph region
/// in `root`: no ref value remains except block arguments of the body, each
/// used only by at most one `kt.load` at the start of the body and at most one
/// `kt.store` right before the terminator. Emits one error per offending op
/// (or argument) and fails if there was one.
mlir::LogicalResult verifyFunctional(mlir::Operation *root);

/// The value form of a function `fn` with ref arguments: its body
/// functionalized (functionalizeBlock; already functional bodies, in the
/// form verifyFunctional accepts, stay as they are), then a new func.func `name`, inserted
/// after `fn`, whose ref arguments are tensors (the values the loads read)
/// and whose results are fn's followed by the value stored into each written
/// ref argument, in argument order; `storedArgs` gets those argument numbers.
/// Backends that take no refs (the CPU backend) compile it and write the
/// extra results back into the refs. Fails with an error at the op that
/// cannot be functionalized (`fn` is unchanged).
mlir::FailureOr<mlir::func::FuncOp>
buildValueForm(mlir::func::FuncOp fn, llvm::StringRef name,
               llvm::SmallVectorImpl<unsigned> &storedArgs);

} // namespace kiln

#endif // KILN_TRANSFORMS_FUNCTIONALIZE_H
