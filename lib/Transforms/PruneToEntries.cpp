//===- PruneToEntries.cpp - Keep the entries and what they reference ------===//
//
// Part of Kiln. See kiln/Transforms/Transforms.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

LogicalResult kiln::pruneToEntries(ModuleOp module,
                                   ArrayRef<std::string> entries,
                                   std::string &error) {
  llvm::StringSet<> keep;
  SmallVector<func::FuncOp> worklist;
  for (const std::string &entry : entries) {
    auto fn = module.lookupSymbol<func::FuncOp>(entry);
    if (!fn || fn.isExternal()) {
      error = "no function named '" + entry + "' with a body";
      return failure();
    }
    if (keep.insert(entry).second)
      worklist.push_back(fn);
  }
  while (!worklist.empty()) {
    func::FuncOp fn = worklist.pop_back_val();
    fn.walk([&](Operation *op) {
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](SymbolRefAttr ref) {
          StringRef callee = ref.getRootReference().getValue();
          auto f = module.lookupSymbol<func::FuncOp>(callee);
          if (f && keep.insert(callee).second)
            worklist.push_back(f);
        });
    });
  }
  for (Operation &op : llvm::make_early_inc_range(module.getOps())) {
    auto fn = dyn_cast<func::FuncOp>(op);
    if (!fn || !keep.contains(fn.getName()))
      op.erase();
  }
  return success();
}
