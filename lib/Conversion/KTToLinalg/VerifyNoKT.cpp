//===- VerifyNoKT.cpp - The kiln-verify-no-kt contract check --------------===//
//
// Part of Kiln. After kiln-lower-to-linalg no kt op may remain (the codegen
// backend contract); every remaining one is reported.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

namespace kiln {
#define GEN_PASS_DEF_KILNVERIFYNOKTPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct VerifyNoKTPass
    : public kiln::impl::KilnVerifyNoKTPassBase<VerifyNoKTPass> {
  using Base::Base;
  void runOnOperation() override {
    bool bad = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<kiln::kt::KTDialect>(op->getDialect())) {
        op->emitOpError("was not lowered to linalg");
        bad = true;
      }
    });
    if (bad)
      signalPassFailure();
  }
};
} // namespace
