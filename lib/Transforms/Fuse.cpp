//===- Fuse.cpp - The kiln-fuse pass ---------------------------------------===//
//
// Part of Kiln. A thin driver over kiln::fusion::fuseBlock: one plan per
// func.func body, and the report.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Support/Logging.h"
#include "kiln/Transforms/Fusion.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct FusePass : public kiln::impl::KilnFusePassBase<FusePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxGroupSize < 1) {
      module.emitError("kiln-fuse: max-group-size must be at least 1, got ")
          << static_cast<unsigned>(maxGroupSize);
      return signalPassFailure();
    }
    if (assumedDimSize < 1) {
      module.emitError("kiln-fuse: assumed-dim-size must be at least 1, got ")
          << static_cast<int64_t>(assumedDimSize);
      return signalPassFailure();
    }
    fusion::FuseOptions options;
    options.maxGroupSize = maxGroupSize;
    options.assumedDimSize = assumedDimSize;
    options.contractions = contractions;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal() || !f.getBody().hasOneBlock())
        continue;
      fusion::FusionStats stats =
          fusion::fuseBlock(f.getBody().front(), options);
      if (report)
        fusion::printFusionReport(llvm::outs(), f.getName(), stats);
      if (logs::enabled(logs::Topic::Fusion)) {
        std::string text;
        llvm::raw_string_ostream os(text);
        fusion::printFusionReport(os, f.getName(), stats);
        if (logs::enabled(logs::Topic::Fusion, logs::Level::Verbose))
          for (const fusion::KernelInfo &k : stats.kernels)
            os << "  " << k.name << " = "
               << llvm::join(k.ops, " + ") << "\n";
        logs::log(logs::Topic::Fusion, text);
      }
    }
  }
};
} // namespace
