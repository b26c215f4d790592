//===- FoldConvBatchNorm.cpp - kiln-fold-conv-batch-norm ------------------===//
//
// Part of Kiln. A thin driver over kiln::decompose::foldConvBatchNorm
// (lib/Decompose/FoldConvBatchNorm.cpp).
//
//===----------------------------------------------------------------------===//

#include "kiln/Decompose/Decompose.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Transforms/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDCONVBATCHNORMPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

namespace {
struct FoldConvBatchNormPass
    : public kiln::impl::KilnFoldConvBatchNormPassBase<FoldConvBatchNormPass> {
  void runOnOperation() override {
    kiln::decompose::foldConvBatchNorm(getOperation());
  }
};
} // namespace
