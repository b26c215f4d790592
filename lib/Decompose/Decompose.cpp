//===- Decompose.cpp - The decomposition driver and registration ----------===//
//
// Part of Kiln. Expands decomposable ops until only primitives (and kept
// ops) remain; per-op knowledge lives in the external models of the
// DecomposableOpInterface (one file per op family).
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Support/OpNames.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "kiln/Decompose/DecomposeInterface.cpp.inc"

using namespace mlir;

namespace kiln::decompose {

void registerDecompositions(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, kt::KTDialect *) {
    registerNormDecompositions(ctx);
    registerLossDecompositions(ctx);
    registerAttentionDecompositions(ctx);
    registerActivationDecompositions(ctx);
    registerReductionDecompositions(ctx);
    registerLinearDecompositions(ctx);
  });
}

SmallVector<StringRef> decomposableOpNames(MLIRContext *ctx) {
  SmallVector<StringRef> names;
  for (RegisteredOperationName info : ctx->getRegisteredOperations())
    if (info.hasInterface<DecomposableOpInterface>())
      names.push_back(info.getStringRef());
  llvm::sort(names);
  return names;
}

LogicalResult resolveKeepList(MLIRContext *ctx, Location loc,
                              ArrayRef<std::string> names,
                              DenseSet<OperationName> &keep) {
  bool ok = true;
  for (const std::string &name : names) {
    std::optional<RegisteredOperationName> info =
        lookupRegisteredOp(ctx, name);
    if (!info) {
      emitError(loc) << "kiln-decompose: 'keep' names '" << name
                     << "', which is not a registered op";
      ok = false;
      continue;
    }
    if (!info->hasInterface<DecomposableOpInterface>()) {
      InFlightDiagnostic d = emitError(loc);
      d << "kiln-decompose: 'keep' names '" << name
        << "', which has no decomposition (decomposable ops: ";
      llvm::interleaveComma(decomposableOpNames(ctx), d);
      d << ")";
      ok = false;
      continue;
    }
    keep.insert(OperationName(*info));
  }
  return success(ok);
}

/// Replaces `op` by its expansion (built at its location).
static LogicalResult expandOne(Operation *op) {
  OpBuilder b(op);
  FailureOr<SmallVector<Value>> values =
      cast<DecomposableOpInterface>(op).decompose(b);
  if (failed(values))
    return failure();
  if (values->size() != op->getNumResults())
    return op->emitError() << "decomposition returned " << values->size()
                           << " values for " << op->getNumResults()
                           << " results";
  for (auto [result, value] : llvm::zip(op->getResults(), *values)) {
    if (value.getType() == result.getType())
      continue;
    // The op's result type may be more static than what the primitives
    // infer (a refined `?`).
    if (!tensor::CastOp::areCastCompatible(value.getType(), result.getType()))
      return op->emitError()
             << "decomposition produced a value of type " << value.getType()
             << " for a result of type " << result.getType();
    value = tensor::CastOp::create(b, op->getLoc(), result.getType(), value);
  }
  op->replaceAllUsesWith(*values);
  op->erase();
  return success();
}

LogicalResult decomposeOps(Operation *root,
                           const DenseSet<OperationName> &keep) {
  // Each round expands the ops present at its start; expansions that emit
  // other composites (cross_entropy -> log_softmax, nll_loss) are expanded
  // by the next round. The chain is short; a bound catches a cycle.
  constexpr int kMaxRounds = 16;
  for (int round = 0; round < kMaxRounds; ++round) {
    SmallVector<Operation *> work;
    root->walk([&](Operation *op) {
      if (op != root && isa<DecomposableOpInterface>(op) &&
          !keep.contains(op->getName()))
        work.push_back(op);
    });
    if (work.empty())
      return success();
    for (Operation *op : work)
      if (failed(expandOne(op)))
        return failure();
  }
  return root->emitError() << "kiln-decompose: decompositions did not reach "
                              "primitives after "
                           << kMaxRounds << " rounds";
}

LogicalResult decomposeOpsIf(Operation *root,
                             function_ref<bool(Operation *)> expand) {
  SmallVector<Operation *> work;
  root->walk([&](Operation *op) {
    if (op != root && isa<DecomposableOpInterface>(op) && expand(op))
      work.push_back(op);
  });
  for (Operation *op : work)
    if (failed(expandOne(op)))
      return failure();
  return success();
}

LogicalResult checkCompositesDecomposable(MLIRContext *ctx, Location loc) {
  bool ok = true;
  for (RegisteredOperationName info : ctx->getRegisteredOperations()) {
    if (info.getDialectNamespace() != kt::KTDialect::getDialectNamespace())
      continue;
    // Ops without the OpKindInterface (the ref ops) have no kind. The kind
    // of an op without a kind trait is composite (kt::getOpKindFromTraits).
    if (!info.hasInterface<kt::OpKindInterface>())
      continue;
    bool composite = info.hasTrait<kt::CompositeOpTrait>() ||
                     !(info.hasTrait<kt::PointwiseOpTrait>() ||
                       info.hasTrait<kt::ReductionOpTrait>() ||
                       info.hasTrait<kt::ContractionOpTrait>() ||
                       info.hasTrait<kt::ShapeOpTrait>() ||
                       info.hasTrait<kt::CreationOpTrait>());
    if (composite && !info.hasInterface<DecomposableOpInterface>()) {
      emitError(loc) << "composite op '" << info.getStringRef()
                     << "' has no decomposition";
      ok = false;
    }
  }
  return success(ok);
}

} // namespace kiln::decompose
