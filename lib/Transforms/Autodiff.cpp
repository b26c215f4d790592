//===- Autodiff.cpp - kiln-autodiff: joint forward+backward functions -----===//
//
// Part of Kiln. A thin driver over kiln::autodiff::buildJointFunction for
// every func.func marked `kg.differentiate`.
//
//===----------------------------------------------------------------------===//

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Autodiff/VJPInterface.h"
#include "kiln/Decompose/Decompose.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln {
#define GEN_PASS_DEF_KILNAUTODIFFPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct AutodiffPass : public kiln::impl::KilnAutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The rules are external models: attach them to whatever context runs
    // the pass, so that no tool has to remember to.
    autodiff::registerVJPInterfaces(registry);
    decompose::registerDecompositions(registry);
  }

  void runOnOperation() override {
    SmallVector<func::FuncOp> fns;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr(autodiff::kDifferentiateAttr))
        fns.push_back(fn);
    bool failedAny = false;
    for (func::FuncOp fn : fns) {
      // Attention as its math ops: the backward then reads the forward's
      // probabilities instead of recomputing q k^T and the softmax, and
      // kiln-partition weighs saving them against recomputing them.
      if (expandAttention &&
          failed(decompose::decomposeOpsIf(fn, [](Operation *op) {
            return isa<kt::ScaledDotProductAttentionOp>(op);
          }))) {
        failedAny = true;
        continue;
      }
      FailureOr<func::FuncOp> joint =
          autodiff::buildJointFunction(fn, autodiff::getRequiresGrad(fn));
      if (failed(joint)) {
        failedAny = true;
        continue;
      }
      if (foldNormActivation)
        autodiff::foldNormActivationMasks(*joint);
      fn->removeAttr(autodiff::kDifferentiateAttr);
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
