//===- MatmulImpl.cpp - Matmul implementation choice and OpenBLAS calls ---===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. Matmuls have two
// implementations: generated code (TileAndVectorize.cpp) and a call to
// OpenBLAS's cblas_sgemm / cblas_dgemm. `kiln.matmul_impl` on the linalg op
// records the choice; lowerMatmulsToBLAS replaces the "openblas" ones after
// bufferization, passing the row-major memrefs' aligned pointer + offset and
// row strides (lda/ldb/ldc). linalg.matmul accumulates into C, so beta = 1.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

bool kiln::cpu::isPlainMatmul(Operation *op) {
  MLIRContext *ctx = op->getContext();
  if (auto mm = dyn_cast<linalg::MatmulOp>(op))
    return mm.getIndexingMapsArray() ==
           linalg::MatmulOp::getDefaultIndexingMaps(ctx);
  if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op))
    return bmm.getIndexingMapsArray() ==
           linalg::BatchMatmulOp::getDefaultIndexingMaps(ctx);
  return false;
}

StringRef kiln::cpu::chooseMatmulImpl(int64_t batch, int64_t m, int64_t n,
                                      int64_t k, unsigned elemBits,
                                      unsigned threads) {
  // Measured on the development machine (2 shared cores, AVX-512) with
  // `kiln-run --repeat=21 --matmul=openblas|generated --cpu-threads=2` on
  // square f32 products (median kernel times, docs/codegen.md): n=16 1 us vs
  // 2 us, n=32 3 us vs 95 us, n=64 8 us vs 112 us, n=128 53 us vs 62 us,
  // n=1024 0.07 s vs 0.30 s. Generated code only matches OpenBLAS below
  // ~24 (where the call and OpenBLAS's dispatch cost as much as the work); a
  // dynamic size counts as large.
  auto big = [](int64_t d) { return ShapedType::isDynamic(d) || d >= 24; };
  if (big(m) && big(n) && big(k))
    return "openblas";
  return "generated";
}

void kiln::cpu::selectMatmulImpl(ModuleOp module, StringRef impl,
                                 unsigned threads) {
  module.walk([&](linalg::LinalgOp op) {
    if (!isPlainMatmul(op))
      return;
    SmallVector<Type> elems;
    for (Value v : op->getOperands())
      elems.push_back(getElementTypeOrSelf(v.getType()));
    if (!llvm::all_equal(elems) || !(elems[0].isF32() || elems[0].isF64()))
      return;
    StringRef choice = impl;
    if (impl == "auto") {
      SmallVector<int64_t> r = op.getStaticLoopRanges();
      int64_t batch = r.size() == 4 ? r[0] : 1;
      unsigned b = r.size() - 3;
      choice = chooseMatmulImpl(batch, r[b], r[b + 1], r[b + 2],
                                elems[0].getIntOrFloatBitWidth(), threads);
    }
    op->setAttr(kMatmulImplAttr, StringAttr::get(op->getContext(), choice));
  });
}

namespace {
/// Row-major with unit inner stride (what cblas takes).
bool unitInnerStride(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) || strides.empty())
    return false;
  return strides.back() == 1;
}
} // namespace

void kiln::cpu::lowerMatmulsToBLAS(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    auto impl = op->getAttrOfType<StringAttr>(kMatmulImplAttr);
    if (impl && impl.getValue() == "openblas" && op.hasPureBufferSemantics())
      ops.push_back(op);
  });
  MLIRContext *ctx = module.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  for (linalg::LinalgOp op : ops) {
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
          c = op.getDpsInits()[0];
    auto at = cast<MemRefType>(a.getType()), bt = cast<MemRefType>(b.getType()),
         ct = cast<MemRefType>(c.getType());
    if (!unitInnerStride(at) || !unitInnerStride(bt) || !unitInnerStride(ct)) {
      // Not a cblas layout: scalar loops (convert-linalg-to-loops).
      op->setAttr(kMatmulImplAttr, StringAttr::get(ctx, "generated"));
      continue;
    }
    Type elem = ct.getElementType();
    bool f32 = elem.isF32();
    StringRef name = f32 ? "cblas_sgemm" : "cblas_dgemm";
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    auto fnType = FunctionType::get(
        ctx,
        {i32, i32, i32, i32, i32, i32, elem, ptrTy, i32, ptrTy, i32, elem,
         ptrTy, i32},
        {});
    if (!module.lookupSymbol(name)) {
      auto decl = func::FuncOp::create(mb, op.getLoc(), name, fnType);
      decl.setPrivate();
    }

    OpBuilder bld(op);
    Location loc = op.getLoc();
    int64_t esz = elem.getIntOrFloatBitWidth() / 8;
    unsigned rank = ct.getRank();
    unsigned bd = rank - 2; // index of the row dim
    // (aligned pointer as index, offset, sizes, strides) of each operand.
    struct Desc {
      Value base, offset;
      SmallVector<Value> sizes, strides;
    };
    auto desc = [&](Value m) {
      auto md = memref::ExtractStridedMetadataOp::create(bld, loc, m);
      Desc d;
      d.base = memref::ExtractAlignedPointerAsIndexOp::create(bld, loc, m);
      d.offset = md.getOffset();
      d.sizes.assign(md.getSizes().begin(), md.getSizes().end());
      d.strides.assign(md.getStrides().begin(), md.getStrides().end());
      return d;
    };
    Desc da = desc(a), db = desc(b), dc = desc(c);
    Value eszV = arith::ConstantIndexOp::create(bld, loc, esz);
    Value one = arith::ConstantIndexOp::create(bld, loc, 1);
    Value zero = arith::ConstantIndexOp::create(bld, loc, 0);
    Value mDim = dc.sizes[bd], nDim = dc.sizes[bd + 1], kDim = da.sizes[bd + 1];
    auto toI32 = [&](Value v) {
      return arith::IndexCastOp::create(bld, loc, i32, v).getResult();
    };
    auto ld = [&](const Desc &d, Value cols) {
      Value s = arith::MaxSIOp::create(bld, loc, d.strides[bd], cols);
      return toI32(arith::MaxSIOp::create(bld, loc, s, one));
    };
    Value lda = ld(da, kDim), ldb = ld(db, nDim), ldc = ld(dc, nDim);
    // Skip empty products (cblas rejects some of their leading dims).
    Value nonEmpty = arith::AndIOp::create(
        bld, loc,
        arith::AndIOp::create(
            bld, loc,
            arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::sgt, mDim,
                                  zero),
            arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::sgt, nDim,
                                  zero)),
        arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::sgt, kDim, zero));
    auto ifOp = scf::IfOp::create(bld, loc, nonEmpty, /*withElse=*/false);
    bld.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value batch = rank == 3 ? dc.sizes[0] : one;
    auto loop = scf::ForOp::create(bld, loc, zero, batch, one);
    bld.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVar();
    auto ptrOf = [&](const Desc &d) {
      Value off = d.offset;
      if (rank == 3)
        off = arith::AddIOp::create(
            bld, loc, off, arith::MulIOp::create(bld, loc, iv, d.strides[0]));
      Value addr = arith::AddIOp::create(
          bld, loc, d.base, arith::MulIOp::create(bld, loc, off, eszV));
      Value i64 = arith::IndexCastOp::create(bld, loc, bld.getI64Type(), addr);
      return LLVM::IntToPtrOp::create(bld, loc, ptrTy, i64).getResult();
    };
    auto cst32 = [&](int32_t v) {
      return arith::ConstantIntOp::create(bld, loc, i32, v).getResult();
    };
    Value alpha = arith::ConstantOp::create(bld, loc, elem,
                                            FloatAttr::get(elem, 1.0));
    Value beta = alpha;
    func::CallOp::create(bld, loc, name, TypeRange{},
                         ValueRange{cst32(101), cst32(111), cst32(111),
                                    toI32(mDim), toI32(nDim), toI32(kDim),
                                    alpha, ptrOf(da), lda, ptrOf(db), ldb,
                                    beta, ptrOf(dc), ldc});
    op->erase();
  }
}
