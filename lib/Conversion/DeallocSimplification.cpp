//===- DeallocSimplification.cpp - bounded dealloc simplification ---------===//
//
// Part of Kiln. `kiln-dealloc-simplification`: upstream's
// buffer-deallocation-simplification, run on a function only while its
// `bufferization.dealloc` ops keep the pairwise alias queries cheap
// (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace kiln {
#define GEN_PASS_DEF_KILNDEALLOCSIMPLIFICATIONPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

uint64_t kiln::deallocSimplificationCost(func::FuncOp f) {
  uint64_t cost = 0;
  f.walk([&](bufferization::DeallocOp d) {
    uint64_t n = d.getMemrefs().size();
    cost += n * (n + d.getRetained().size());
  });
  return cost;
}

namespace {
struct DeallocSimplification
    : public kiln::impl::KilnDeallocSimplificationPassBase<
          DeallocSimplification> {
  using Base::Base;

  static void addSimplification(OpPassManager &pm) {
    pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager pm(func::FuncOp::getOperationName());
    addSimplification(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (maxCost != 0 && kiln::deallocSimplificationCost(f) > maxCost) {
      markAllAnalysesPreserved();
      return;
    }
    OpPassManager pm(func::FuncOp::getOperationName());
    addSimplification(pm);
    if (failed(runPipeline(pm, f)))
      signalPassFailure();
  }
};
} // namespace
