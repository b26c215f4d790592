//===- OneDNNConv.cpp - Convolutions as oneDNN calls (after bufferization) ===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. A bufferized
// linalg.conv_2d_nchw_fchw / conv_2d_ngchw_gfchw marked
// kiln.conv_impl = "onednn" (kiln-cpu-conv-im2col) becomes a call of
// libkiln_onednn's kiln_onednn_conv2d_f32 (runtime/onednn/KilnOneDNN.cpp)
// on its operands' aligned pointers plus offsets, sizes and strides. The
// linalg conv accumulates into its init; when a zero linalg.fill of that
// buffer comes right before it (only side-effect-free ops in between), the
// fill is dropped and the call overwrites instead of accumulating.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

linalg::FillOp kiln::cpu::zeroFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getDpsInits()[0] != buffer)
        return nullptr;
      auto cst = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
      auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
      if (f && f.getValue().isZero())
        return fill;
      return nullptr;
    }
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

bool kiln::cpu::oneDNNAvailable() {
#ifdef KILN_HAVE_ONEDNN
  return true;
#else
  return false;
#endif
}

unsigned kiln::cpu::lowerConvsToOneDNN(ModuleOp module, unsigned threads) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    auto impl = op->getAttrOfType<StringAttr>(kConvImplAttr);
    if (impl && impl.getValue() == "onednn" && op.hasPureBufferSemantics() &&
        isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(
            op.getOperation()) &&
        getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
      ops.push_back(op);
  });
  if (ops.empty())
    return 0;
  MLIRContext *ctx = module.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> argTypes(3, ptrTy);
  argTypes.append(31, i64);
  auto fnType = FunctionType::get(ctx, argTypes, {});
  if (!module.lookupSymbol(kOneDNNConvSymbol)) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(mb, module.getLoc(), kOneDNNConvSymbol,
                                     fnType);
    decl.setPrivate();
  }
  for (linalg::LinalgOp op : ops) {
    bool grouped = isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
    DenseIntElementsAttr stridesAttr, dilationsAttr;
    if (auto c = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
      stridesAttr = c.getStrides();
      dilationsAttr = c.getDilations();
    } else {
      auto g = cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
      stridesAttr = g.getStrides();
      dilationsAttr = g.getDilations();
    }
    Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
          y = op.getDpsInits()[0];
    Location loc = op.getLoc();
    bool accumulate = true;
    if (linalg::FillOp fill = zeroFillBefore(op, y)) {
      fill->erase();
      accumulate = false;
    }
    OpBuilder b(op);
    Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
    Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
    auto toI64 = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, i64, v).getResult();
    };
    struct Desc {
      Value ptr;
      SmallVector<Value> sizes, strides; // i64, 5-D (a 1-group dim added)
    };
    // [lead..., rest...] with a group dim of size 1 / stride 0 inserted at
    // `groupDim` for the ungrouped form.
    auto desc = [&](Value m, unsigned groupDim) {
      auto md = memref::ExtractStridedMetadataOp::create(b, loc, m);
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
      Value off = arith::MulIOp::create(
          b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, 4));
      Value addr = toI64(arith::AddIOp::create(b, loc, base, off));
      Desc d;
      d.ptr = LLVM::IntToPtrOp::create(b, loc, ptrTy, addr);
      for (auto [sz, st] : llvm::zip(md.getSizes(), md.getStrides())) {
        d.sizes.push_back(toI64(sz));
        d.strides.push_back(toI64(st));
      }
      if (!grouped) {
        d.sizes.insert(d.sizes.begin() + groupDim, one);
        d.strides.insert(d.strides.begin() + groupDim, zero);
      }
      return d;
    };
    Desc dx = desc(x, 1), dw = desc(w, 0), dy = desc(y, 1);
    auto cst = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
    };
    auto sv = stridesAttr.getValues<int64_t>();
    auto dv = dilationsAttr.getValues<int64_t>();
    SmallVector<Value> args = {dx.ptr, dw.ptr, dy.ptr,
                               // n, g, c, h, w
                               dx.sizes[0], dx.sizes[1], dx.sizes[2],
                               dx.sizes[3], dx.sizes[4],
                               // f, kh, kw
                               dw.sizes[1], dw.sizes[3], dw.sizes[4],
                               // oh, ow
                               dy.sizes[3], dy.sizes[4], cst(sv[0]),
                               cst(sv[1]), cst(dv[0]), cst(dv[1])};
    args.append(dx.strides);
    args.append(dw.strides);
    args.append(dy.strides);
    args.push_back(cst(accumulate ? 1 : 0));
    args.push_back(cst(threads));
    auto call = func::CallOp::create(b, loc, kOneDNNConvSymbol, TypeRange{},
                                     args);
    call->setAttr(kConvImplAttr, StringAttr::get(ctx, "onednn"));
    op->erase();
  }
  return ops.size();
}
