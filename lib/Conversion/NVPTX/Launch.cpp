//===- Launch.cpp - gpu.launch helpers of the kiln-nvptx passes -----------===//
//
// Part of Kiln. See Launch.h.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

std::string kiln::nvptx::kernelName(Operation *at) {
  auto fn = dyn_cast<func::FuncOp>(at);
  if (!fn)
    fn = at->getParentOfType<func::FuncOp>();
  std::string name = fn ? fn.getSymName().str() : "kernel";
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '$')
      c = '_';
  return name + "_kernel";
}

gpu::LaunchOp kiln::nvptx::createLaunch(OpBuilder &b, Location loc,
                                        Value grid, Value block,
                                        OpBuilder &inner) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  std::string name = kernelName(b.getInsertionBlock()->getParentOp());
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one);
  launch.setFunctionAttr(FlatSymbolRefAttr::get(b.getContext(), name));
  launch.setModuleAttr(FlatSymbolRefAttr::get(b.getContext(), name));
  Block &body = launch.getBody().front();
  if (body.empty() || !body.back().hasTrait<OpTrait::IsTerminator>()) {
    OpBuilder tb = OpBuilder::atBlockEnd(&body);
    gpu::TerminatorOp::create(tb, loc);
  }
  inner.setInsertionPoint(body.getTerminator());
  return launch;
}

bool kiln::nvptx::onHostLevel(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (isa<func::FuncOp>(p))
      return true;
    if (!isa<scf::IfOp>(p))
      return false;
  }
  return false;
}
