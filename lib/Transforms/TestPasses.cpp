//===- TestPasses.cpp - Test-only passes that plant bugs -------------------===//
//
// Part of Kiln. Passes that plant bugs, for the tests of the tools that find
// bugs (kiln-reduce's --crash and --accuracy modes, the runtime's
// check_accuracy): registered with Kiln's passes (as mlir-opt's -test-*
// passes), never part of a default pipeline; kiln-cpu's test-only option
// `test-miscompile=OP:WITH` runs the second first.
//
//   -kiln-test-crash-on{op=kt.sigmoid}    aborts when the module holds the op
//   -kiln-test-miscompile{op=kt.tanh with=kt.sigmoid}
//                                         replaces each such op by another
//                                         with the same operands, attributes
//                                         and result types (a wrong answer)
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace {
struct CrashOnPass
    : public PassWrapper<CrashOnPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CrashOnPass)
  CrashOnPass() = default;
  CrashOnPass(const CrashOnPass &other) : PassWrapper(other) {}
  StringRef getArgument() const final { return "kiln-test-crash-on"; }
  StringRef getDescription() const final {
    return "Test only: abort when the module holds an op named `op`";
  }
  Option<std::string> opName{*this, "op",
                             llvm::cl::desc("the op whose presence aborts")};
  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (op->getName().getStringRef() == opName) {
        llvm::errs() << "kiln-test-crash-on: planted crash at "
                     << op->getName() << "\n";
        std::abort();
      }
    });
  }
};

struct MiscompilePass
    : public PassWrapper<MiscompilePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MiscompilePass)
  MiscompilePass() = default;
  MiscompilePass(const MiscompilePass &other) : PassWrapper(other) {}
  MiscompilePass(StringRef op, StringRef with) {
    opName = op.str();
    withName = with.str();
  }
  StringRef getArgument() const final { return "kiln-test-miscompile"; }
  StringRef getDescription() const final {
    return "Test only: replace each `op` by a `with` op of the same operands, "
           "attributes and result types";
  }
  Option<std::string> opName{*this, "op",
                             llvm::cl::desc("the op to miscompile")};
  Option<std::string> withName{*this, "with",
                               llvm::cl::desc("the op put in its place")};
  void runOnOperation() override {
    SmallVector<Operation *> targets;
    getOperation().walk([&](Operation *op) {
      if (op->getName().getStringRef() == opName)
        targets.push_back(op);
    });
    for (Operation *op : targets) {
      OperationState state(op->getLoc(), withName);
      state.addOperands(op->getOperands());
      state.addTypes(op->getResultTypes());
      state.addAttributes(op->getAttrs());
      OpBuilder b(op);
      Operation *replacement = b.create(state);
      op->replaceAllUsesWith(replacement);
      op->erase();
    }
  }
};
} // namespace

void kiln::registerKilnTestPasses() {
  PassRegistration<CrashOnPass>();
  PassRegistration<MiscompilePass>();
}

std::unique_ptr<Pass> kiln::createKilnTestMiscompilePass(StringRef op,
                                                         StringRef with) {
  return std::make_unique<MiscompilePass>(op, with);
}
