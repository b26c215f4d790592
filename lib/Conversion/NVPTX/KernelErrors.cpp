//===- KernelErrors.cpp - Run-time checks inside GPU kernels --------------===//
//
// Part of Kiln. See kiln/Conversion/NVPTX/NVPTXCodegen.h
// (kernelErrorsToRecord).
//
// The lowering's run-time checks (an index out of range, an integer
// division by zero) call kiln_cpu_runtime_error(id, v0..v7) where they fail
// and go on with a safe value. A kernel cannot call the host, so inside
// kernels the call becomes a write of an error record in device memory:
// slot 0 counts the failures (an atomic add), and the thread that finds it 0
// writes the id and the values into slots 1..9, so the record
// is the first failure's, whole. The host function zeroes the record on
// entry and, before each return, copies it back and calls
// kiln_cpu_runtime_error with it when slot 0 is set: the call then fails with
// the same message as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"
#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace {

constexpr int64_t kSlots = 2 + kiln::kRuntimeErrorValues; // flag, id, values

/// Stores `values` into record[first...] at `b`.
void storeSlots(OpBuilder &b, Location loc, Value record, int64_t first,
                ValueRange values) {
  for (auto [i, v] : llvm::enumerate(values)) {
    Value idx = arith::ConstantIndexOp::create(b, loc, first + (int64_t)i);
    memref::StoreOp::create(b, loc, v, record, idx);
  }
}

/// The call inside a kernel -> claim slot 0, then write id and values.
void recordInKernel(func::CallOp call, Value record) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  Type i64 = b.getI64Type();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIntOp::create(b, loc, i64, 1);
  // An atomic add, not a compare-and-swap region (generic_atomic_rmw):
  // the deallocation pipeline refuses region ops it cannot analyze. The
  // thread that sees 0 is the first.
  Value old = memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                          c1, record, ValueRange{zero});
  Value c0 = arith::ConstantIntOp::create(b, loc, i64, 0);
  Value won =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, old, c0);
  auto ifOp = scf::IfOp::create(b, loc, won, /*withElseRegion=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  storeSlots(tb, loc, record, 1, call.getOperands());
  call.erase();
}

} // namespace

unsigned kiln::nvptx::kernelErrorsToRecord(func::FuncOp fn) {
  SmallVector<func::CallOp> calls;
  fn.walk([&](func::CallOp call) {
    if (call.getCallee() == kiln::kRuntimeErrorFn &&
        call->getParentOfType<gpu::LaunchOp>() &&
        call.getNumOperands() == kSlots - 1)
      calls.push_back(call);
  });
  if (calls.empty() || fn.isExternal())
    return 0;
  Location loc = fn.getLoc();
  Type i64 = IntegerType::get(fn.getContext(), 64);
  auto type = MemRefType::get({kSlots}, i64);
  // Entry: the record (a device buffer once allocations move to the GPU),
  // zeroed by a one-thread kernel.
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  Value record = memref::AllocOp::create(b, loc, type);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  OpBuilder kb(fn.getContext());
  createLaunch(b, loc, one, one, kb);
  Value zero64 = arith::ConstantIntOp::create(kb, loc, i64, 0);
  storeSlots(kb, loc, record, 0, SmallVector<Value>(kSlots, zero64));
  for (func::CallOp call : calls)
    recordInKernel(call, record);
  // Exits: the record back on the host; a set flag is the host's error
  // call, with the first failure's id and values.
  fn.walk([&](func::ReturnOp ret) {
    OpBuilder rb(ret);
    auto host = memref::AllocaOp::create(rb, loc, type);
    gpu::MemcpyOp::create(rb, loc, Type(), ValueRange(), host, record);
    Value c0 = arith::ConstantIndexOp::create(rb, loc, 0);
    Value flag = memref::LoadOp::create(rb, loc, host, c0);
    Value z = arith::ConstantIntOp::create(rb, loc, i64, 0);
    Value set =
        arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::ne, flag, z);
    auto ifOp = scf::IfOp::create(rb, loc, set, /*withElseRegion=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    SmallVector<Value> args;
    for (int64_t i = 1; i < kSlots; ++i)
      args.push_back(memref::LoadOp::create(
          tb, loc, host, ValueRange{arith::ConstantIndexOp::create(tb, loc, i)}));
    func::CallOp::create(tb, loc, kiln::kRuntimeErrorFn, TypeRange(), args);
  });
  return calls.size();
}
