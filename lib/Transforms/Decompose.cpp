//===- Decompose.cpp - kiln-decompose: composite ops to primitives --------===//
//
// Part of Kiln. A thin driver over kiln::decompose::decomposeOps; the
// decompositions are external models of DecomposableOpInterface
// (lib/Decompose, one file per op family).
//
//===----------------------------------------------------------------------===//

#include "kiln/Decompose/Decompose.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln {
#define GEN_PASS_DEF_KILNDECOMPOSEPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct DecomposePass : public kiln::impl::KilnDecomposePassBase<DecomposePass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The decompositions are external models: attach them to whatever
    // context runs the pass.
    decompose::registerDecompositions(registry);
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *ctx = &getContext();
    llvm::DenseSet<OperationName> keepSet;
    SmallVector<std::string> names(keep.begin(), keep.end());
    bool ok = succeeded(
        decompose::resolveKeepList(ctx, root->getLoc(), names, keepSet));
    if (checkComplete)
      ok &= succeeded(
          decompose::checkCompositesDecomposable(ctx, root->getLoc()));
    if (!ok || failed(decompose::decomposeOps(root, keepSet)))
      signalPassFailure();
  }
};
} // namespace
