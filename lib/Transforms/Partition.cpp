//===- Partition.cpp - kiln-partition: joint -> forward + backward --------===//
//
// Part of Kiln. A thin driver over kiln::partition::partitionJoint for every
// func.func carrying `kg.joint`; reports what each partition saved.
//
//===----------------------------------------------------------------------===//

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Transforms/Partition.h"
#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "kiln/Support/Logging.h"
#include "llvm/Support/Format.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPARTITIONPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::partition;

namespace {
struct PartitionPass : public kiln::impl::KilnPartitionPassBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> joints;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr(autodiff::kJointAttr))
        joints.push_back(fn);

    std::optional<Policy> p = parsePolicy(policy);
    PartitionOptions opts;
    opts.memoryBudget = memoryBudget;
    opts.dynamicDimSize = dynamicDimSize;
    opts.keepJoint = keepJoint;
    opts.cse = cse;
    opts.verifyOptimal = verifyOptimal;
    opts.verifyOptimalMaxNodes = verifyOptimalMaxNodes;
    opts.passPrimals = passPrimals;
    bool failedAny = false;
    if (!p) {
      // Errors at each joint, so that they carry a location.
      for (func::FuncOp fn : joints)
        fn.emitError("kiln-partition: unknown policy '")
            << policy << "' (expected mincut, save-all or recompute-all)";
      if (joints.empty())
        getOperation().emitError("kiln-partition: unknown policy '")
            << policy << "' (expected mincut, save-all or recompute-all)";
      return signalPassFailure();
    }
    opts.policy = *p;

    std::string table;
    llvm::raw_string_ostream os(table);
    for (func::FuncOp fn : joints) {
      std::string name = fn.getSymName().str();
      Location loc = fn.getLoc();
      FailureOr<PartitionResult> r = partitionJoint(fn, opts);
      if (failed(r)) {
        failedAny = true;
        continue;
      }
      if (report)
        emitRemark(loc) << "kiln-partition: @" << name << ": "
                        << formatReport(*r);
      if (logs::enabled(logs::Topic::Partition)) {
        logs::log(logs::Topic::Partition,
                  "@" + name + " at " + formatLocationStack(loc).front() +
                      ": " + formatReport(*r));
      }
      if (verifyOptimal) {
        if (r->bruteForceValue)
          emitRemark(loc) << "kiln-partition: @" << name << ": cut value "
                          << *r->cutValue
                          << " equals the exhaustive optimum over "
                          << r->numFreeNodes << " free nodes";
        else if (r->cutValue)
          emitRemark(loc) << "kiln-partition: @" << name
                          << ": not verified (" << r->numFreeNodes
                          << " free nodes > "
                          << unsigned(verifyOptimalMaxNodes) << ")";
      }
      if (printReport) {
        std::string ops;
        llvm::raw_string_ostream ro(ops);
        llvm::interleave(r->recomputedOps, ro, ",");
        os << llvm::format("%-24s %-14s %6.3f %6u %6u %14lld %14lld %5u %s\n",
                           name.c_str(),
                           stringifyPolicy(r->policy).str().c_str(),
                           r->memoryBudget, r->numSaved, r->numSavedPrimals,
                           (long long)r->savedBytes,
                           (long long)r->savedActivationBytes,
                           (unsigned)r->recomputedOps.size(),
                           ops.empty() ? "-" : ops.c_str());
      }
    }
    if (printReport) {
      llvm::errs() << llvm::format(
          "%-24s %-14s %6s %6s %6s %14s %14s %5s %s\n", "joint", "policy",
          "budget", "saved", "primal", "saved-bytes", "activation-bytes",
          "recomp", "recomputed-ops");
      llvm::errs() << table;
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
