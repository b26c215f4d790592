//===- AllocSites.cpp - Name the op of each allocation of compiled code ----===//
//
// Part of Kiln. See kiln::cpu::markAllocationSites (CPUCodegen.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

unsigned kiln::cpu::markAllocationSites(ModuleOp module) {
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp op) { allocs.push_back(op); });
  if (allocs.empty())
    return 0;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  if (!module.lookupSymbol(kAllocSiteFn)) {
    b.setInsertionPointToStart(module.getBody());
    auto fn = func::FuncOp::create(
        b, module.getLoc(), kAllocSiteFn,
        FunctionType::get(ctx, {b.getI64Type()}, {}));
    fn.setPrivate();
  }
  for (memref::AllocOp op : allocs) {
    // The buffer as the user knows it: a tensor of the same shape.
    MemRefType type = op.getType();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "cannot allocate {0:bytes} for "
       << RankedTensorType::get(type.getShape(), type.getElementType())
       << " in compiled code: out of memory";
    int64_t id = addRuntimeErrorTemplate(module, op.getLoc(), text);
    b.setInsertionPoint(op);
    Value site = arith::ConstantOp::create(b, op.getLoc(),
                                           b.getI64IntegerAttr(id));
    func::CallOp::create(b, op.getLoc(), kAllocSiteFn, TypeRange{},
                         ValueRange{site});
  }
  return allocs.size();
}
