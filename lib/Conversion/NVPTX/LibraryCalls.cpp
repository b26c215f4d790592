//===- LibraryCalls.cpp - Products as cuBLAS calls in kiln-nvptx ----------===//
//
// Part of Kiln. See kiln/Conversion/NVPTX/NVPTXCodegen.h (matmulsToCublas).
//
// A bufferized linalg.matmul / linalg.batch_matmul (default indexing maps,
// f32 or f64 throughout, row-major contiguous operands) at the host level
// becomes a call of the runtime's `kiln_cuda_gemm` (runtime/cuda), which
// runs cuBLAS: C += A B, as the linalg op (its init, zeros or a broadcast
// bias, is filled by the kernel before). The call is in the IR, so the
// choice is visible, and `matmul=kernel` keeps the generated kernels.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace {

constexpr StringLiteral kGemm = "kiln_cuda_gemm";

/// A row-major memref with identity layout (offset 0, packed strides).
bool rowMajor(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getLayout().isIdentity();
}

/// Whether `op` is a plain matmul / batch_matmul cuBLAS can run.
bool matchGemm(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return false;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation());
      mm && mm.hasUserDefinedMaps())
    return false;
  if (auto bm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
      bm && bm.hasUserDefinedMaps())
    return false;
  Type elem;
  for (OpOperand &o : op->getOpOperands()) {
    if (!rowMajor(o.get()))
      return false;
    Type t = cast<MemRefType>(o.get().getType()).getElementType();
    if (elem && t != elem)
      return false;
    elem = t;
  }
  return elem.isF32() || elem.isF64();
}

/// The declaration of kiln_cuda_gemm(dtype, batch, m, n, k, a, b, c) in
/// `module` (pointers as index: the aligned addresses).
func::FuncOp gemmDecl(ModuleOp module) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(kGemm))
    return fn;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type i32 = b.getI32Type(), idx = b.getIndexType();
  auto type = b.getFunctionType({i32, idx, idx, idx, idx, idx, idx, idx}, {});
  auto fn = func::FuncOp::create(b, module.getLoc(), kGemm, type);
  fn.setPrivate();
  return fn;
}

void rewriteGemm(linalg::LinalgOp op, func::FuncOp decl) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  bool batched = isa<linalg::BatchMatmulOp>(op);
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  auto dim = [&](Value v, int64_t d) -> Value {
    return memref::DimOp::create(b, loc, v, d);
  };
  int64_t r = batched ? 1 : 0;
  Value batch = batched ? dim(a, 0) : arith::ConstantIndexOp::create(b, loc, 1);
  Value m = dim(a, r), k = dim(a, r + 1), n = dim(bm, r + 1);
  auto ptr = [&](Value v) -> Value {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
  };
  Type elem = cast<MemRefType>(c.getType()).getElementType();
  Value dtype = arith::ConstantIntOp::create(b, loc, elem.isF64() ? 1 : 0, 32);
  auto call = func::CallOp::create(
      b, loc, decl,
      ValueRange{dtype, batch, m, n, k, ptr(a), ptr(bm), ptr(c)});
  call->setAttr("kiln.matmul_impl", b.getStringAttr("cublas"));
  op->erase();
}

} // namespace

unsigned kiln::nvptx::matmulsToCublas(ModuleOp module) {
  SmallVector<linalg::LinalgOp> found;
  module.walk([&](linalg::LinalgOp op) {
    if (kiln::nvptx::onHostLevel(op) && matchGemm(op))
      found.push_back(op);
  });
  if (found.empty())
    return 0;
  func::FuncOp decl = gemmDecl(module);
  for (linalg::LinalgOp op : found)
    rewriteGemm(op, decl);
  return found.size();
}
