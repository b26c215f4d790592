//===- MatmulImpl.cpp - Matmul implementation choice and OpenBLAS calls ---===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. Matmuls have two
// implementations: generated code (TileAndVectorize.cpp) and a call to
// OpenBLAS's cblas_sgemm / cblas_dgemm. `kiln.matmul_impl` on the linalg op
// records the choice; lowerMatmulsToBLAS replaces the "openblas" ones after
// bufferization, passing the memrefs' aligned pointer + offset, row strides
// (lda/ldb/ldc) and transpose flags. f32 products of at least
// kOneDNNSgemmMin multiply-adds call oneDNN's sgemm through libkiln_onednn
// instead where the build has it (kiln_onednn_sgemm: the same arguments
// plus the thread count; `sgemm=openblas` keeps cblas_sgemm;
// docs/codegen.md, "Which BLAS").
//
// Any linalg contraction that is one (batched) GEMM goes to BLAS, not only
// plain linalg.matmul: operands stored transposed ([K, M] or [N, K], e.g. the
// weight of kt.linear or K in attention's Q K^T) become CblasTrans, a
// linalg.transpose feeding the product is folded into the flags instead of
// copied, and an operand without the batch dim (a weight shared by the batch)
// gets batch stride 0. A contraction accumulates into C (beta = 1); when C
// starts as a fill of zeros the fill is dropped and beta = 0
// (`kiln.matmul_zero_init`).
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

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

/// Whether an M x N x K product (static sizes, >= 0) has at least `bound`
/// multiply-adds, without overflow (bound <= 2^31: once M, N, K and M * N
/// are each under it, M * N * K < 2^62).
static bool productAtLeast(int64_t m, int64_t n, int64_t k, int64_t bound) {
  return m >= bound || n >= bound || k >= bound || m * n >= bound ||
         m * n * k >= bound;
}

StringRef kiln::cpu::chooseMatmulImpl(int64_t batch, int64_t m, int64_t n,
                                      int64_t k, unsigned elemBits,
                                      unsigned threads) {
  // Measured on the development machine (2 shared cores, AVX-512) with
  // `kiln-run --repeat=50..200 --matmul=openblas|generated --cpu-threads=2`
  // (median kernel times, docs/codegen.md): generated code matches OpenBLAS
  // only on tiny products (8x8x8, 16x16x16, 4x4x1000: both ~1 us); once the
  // generated tiles are spread over threads it pays the fork/join (64x64x8:
  // 76 us vs 1 us) and on a thin product it transposes and streams the
  // weight (a classifier, 8x1280 by 1000x1280: 3.5 ms vs 0.41 ms; 1x512 by
  // 1000x512: 1.4 ms vs 0.08 ms). So OpenBLAS unless M * N * K (per batch
  // element) is under kTinyProduct; a dynamic size counts as large. (The
  // rule was "M, N and K all >= 24", from square products only: every
  // classifier at batch < 24 and every product with a dim < 24 was
  // generated.)
  constexpr int64_t kTinyProduct = 8192;
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n) ||
      ShapedType::isDynamic(k))
    return "openblas";
  if (m <= 0 || n <= 0 || k <= 0)
    return "generated"; // empty: nothing to call
  if (productAtLeast(m, n, k, kTinyProduct))
    return "openblas";
  return "generated";
}

std::optional<kiln::cpu::GemmForm> kiln::cpu::matchGemm(Operation *operation) {
  auto op = dyn_cast<linalg::LinalgOp>(operation);
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  Type elem = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()) != elem)
      return std::nullopt;
  if (!elem.isF32() && !elem.isF64())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto dimsOf = [](AffineMap map) -> std::optional<SmallVector<unsigned>> {
    SmallVector<unsigned> dims;
    for (AffineExpr e : map.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        return std::nullopt;
      dims.push_back(d.getPosition());
    }
    return dims;
  };
  auto a = dimsOf(maps[0]), b = dimsOf(maps[1]), c = dimsOf(maps[2]);
  if (!a || !b || !c || (c->size() != 2 && c->size() != 3))
    return std::nullopt;
  unsigned rank = c->size();
  if (op.getNumLoops() != rank + 1 || op.getNumReductionLoops() != 1)
    return std::nullopt;
  unsigned mD = (*c)[rank - 2], nD = (*c)[rank - 1];
  std::optional<unsigned> bD;
  if (rank == 3)
    bD = (*c)[0];
  unsigned kD = 0;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      kD = i;
  GemmForm form;
  // An operand is [batch?, x, y] with {x, y} = {row, col} in either order.
  auto side = [&](ArrayRef<unsigned> dims, unsigned row, unsigned col,
                  bool &trans, bool &batched) {
    ArrayRef<unsigned> tail = dims;
    batched = false;
    if (dims.size() == 3) {
      if (!bD || dims[0] != *bD)
        return false;
      batched = true;
      tail = dims.drop_front();
    } else if (dims.size() != 2) {
      return false;
    }
    if (tail[0] == row && tail[1] == col)
      trans = false;
    else if (tail[0] == col && tail[1] == row)
      trans = true;
    else
      return false;
    return true;
  };
  if (!side(*a, mD, kD, form.transA, form.batchedA) ||
      !side(*b, kD, nD, form.transB, form.batchedB))
    return std::nullopt;
  form.batched = rank == 3;
  return form;
}

/// Whether `v` comes from a linalg.transpose swapping its last two dims (the
/// leading ones in place); then `src` is its input. A transpose seen
/// through a tensor.collapse_shape of its leading dims only (a 4-D
/// product's batch dims, collapsed for linalg.batch_matmul: attention's
/// `P^T dO` of [B, H, T, T]) counts too: `src` is then the same collapse of
/// the transpose's input, built before `v`'s collapse.
static bool isTrailingTranspose(OpBuilder &b, Value v, Value &src) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (collapse) {
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    int64_t n = groups.size();
    int64_t srcRank = collapse.getSrcType().getRank();
    // The last two groups are the last two dims, alone.
    if (n < 2 || groups[n - 1].size() != 1 || groups[n - 2].size() != 1 ||
        groups[n - 1][0] != srcRank - 1 || groups[n - 2][0] != srcRank - 2)
      return false;
    v = collapse.getSrc();
  }
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t)
    return false;
  ArrayRef<int64_t> perm = t.getPermutation();
  int64_t r = perm.size();
  if (r < 2 || perm[r - 1] != r - 2 || perm[r - 2] != r - 1)
    return false;
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return false;
  src = t.getInput();
  if (collapse) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(collapse);
    src = tensor::CollapseShapeOp::create(
        b, collapse.getLoc(), src, collapse.getReassociationIndices());
  }
  return true;
}

/// `op` as a linalg.generic reading the transposes' inputs with swapped maps
/// (and the fill's destination when `zeroInit`); `op` itself when nothing
/// changes.
static Operation *foldIntoContraction(OpBuilder &b, linalg::LinalgOp op,
                                      bool zeroInit) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  for (auto [i, operand] : llvm::enumerate(op.getDpsInputOperands())) {
    Value src;
    if (isTrailingTranspose(b, operand->get(), src)) {
      AffineMap m = maps[i];
      unsigned r = m.getNumResults();
      SmallVector<AffineExpr> res(m.getResults());
      std::swap(res[r - 1], res[r - 2]);
      maps[i] = AffineMap::get(m.getNumDims(), 0, res, op.getContext());
      inputs.push_back(src);
      changed = true;
    } else {
      inputs.push_back(operand->get());
    }
  }
  Value init = op.getDpsInits()[0];
  if (zeroInit)
    init = init.getDefiningOp<linalg::FillOp>().getOutputs()[0];
  if (!changed) {
    op.getDpsInitsMutable()[0].assign(init);
    return op;
  }
  b.setInsertionPoint(op);
  auto generic = linalg::GenericOp::create(
      b, op.getLoc(), op->getResultTypes(), inputs, ValueRange{init}, maps,
      op.getIteratorTypesArray());
  IRMapping mapping;
  op->getRegion(0).cloneInto(&generic.getRegion(), mapping);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    generic->setAttr(attr.getName(), attr.getValue());
  op->replaceAllUsesWith(generic->getResults());
  op->erase();
  return generic;
}

/// Whether the init of `op` is a linalg.fill of +0.0 on tensors.
static bool hasZeroFillInit(linalg::LinalgOp op) {
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !op.hasPureTensorSemantics())
    return false;
  auto cst = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : nullptr;
  return f && f.getValue().isPosZero();
}

void kiln::cpu::selectMatmulImpl(ModuleOp module, StringRef impl,
                                 unsigned threads) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && matchGemm(op))
      ops.push_back(op);
  });
  OpBuilder b(module.getContext());
  for (linalg::LinalgOp op : ops) {
    unsigned bits =
        getElementTypeOrSelf(op.getDpsInits()[0].getType()).getIntOrFloatBitWidth();
    StringRef choice = impl;
    if (impl == "auto") {
      SmallVector<int64_t> r = op.getStaticLoopRanges();
      GemmForm form = *matchGemm(op);
      auto cMap = op.getIndexingMapsArray()[2];
      auto dim = [&](unsigned resultPos) {
        return r[cast<AffineDimExpr>(cMap.getResult(resultPos)).getPosition()];
      };
      unsigned rank = cMap.getNumResults();
      int64_t k = 1;
      for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
        if (it == utils::IteratorType::reduction)
          k = r[i];
      choice = chooseMatmulImpl(form.batched ? dim(0) : 1, dim(rank - 2),
                                dim(rank - 1), k, bits, threads);
    }
    // Generated code handles plain matmuls as tiles; other contractions
    // that stay generated keep the generic tiling path (no attribute).
    if (choice != "openblas" && !isPlainMatmul(op))
      continue;
    Operation *target = op;
    if (choice == "openblas") {
      bool zeroInit = hasZeroFillInit(op);
      target = foldIntoContraction(b, op, zeroInit);
      if (zeroInit)
        target->setAttr(kMatmulZeroInitAttr, UnitAttr::get(module.getContext()));
    }
    target->setAttr(kMatmulImplAttr,
                    StringAttr::get(module.getContext(), choice));
  }
}

namespace {
/// A memref operand's [rows, cols] storage: row-major (inner stride 1) or
/// column-major (row stride 1, then it reads as the transpose).
enum class Layout { RowMajor, ColMajor, None };
Layout layoutOf(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) || strides.size() < 2)
    return Layout::None;
  if (strides.back() == 1)
    return Layout::RowMajor;
  if (strides[strides.size() - 2] == 1)
    return Layout::ColMajor;
  return Layout::None;
}
} // namespace

void kiln::cpu::lowerMatmulsToBLAS(ModuleOp module, StringRef sgemm,
                                   unsigned threads) {
  bool oneDNNSgemm =
      sgemm == "onednn" || (sgemm == "auto" && oneDNNAvailable());
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
    std::optional<GemmForm> form = matchGemm(op);
    Layout la = layoutOf(at), lb = layoutOf(bt), lc = layoutOf(ct);
    bool zeroInit = op->hasAttr(kMatmulZeroInitAttr);
    if (!form || la == Layout::None || lb == Layout::None ||
        lc != Layout::RowMajor) {
      // Not a cblas layout: scalar loops (convert-linalg-to-loops), after
      // the zero fill that was folded away.
      if (zeroInit) {
        OpBuilder fb(op);
        Type e = ct.getElementType();
        Value zero = arith::ConstantOp::create(fb, op.getLoc(), e,
                                               FloatAttr::get(e, 0.0));
        linalg::FillOp::create(fb, op.getLoc(), ValueRange{zero},
                               ValueRange{c});
        op->removeAttr(kMatmulZeroInitAttr);
      }
      op->setAttr(kMatmulImplAttr, StringAttr::get(ctx, "generated"));
      continue;
    }
    Type elem = ct.getElementType();
    bool f32 = elem.isF32();
    // Which library: cblas only, oneDNN only, or chosen per call by the
    // product's size (`?` sizes). oneDNN's sgemm pays ~30 us per call on
    // mid-sized products (its threads: 64x64x64 35 us vs OpenBLAS's 5 us,
    // 128^3 42 vs 21 us, 192^3 a tie; bench/blas_bench.py), so with
    // sgemm=auto products under kOneDNNSgemmMin multiply-adds (per batch
    // element) stay on OpenBLAS.
    enum class Lib { BLAS, OneDNN, BySize } lib = Lib::BLAS;
    const unsigned rcS = ct.getRank(), raS = at.getRank();
    const int64_t mS = ct.getDimSize(rcS - 2), nS = ct.getDimSize(rcS - 1),
                  kS = at.getDimSize(form->transA ? raS - 2 : raS - 1);
    if (f32 && oneDNNSgemm) {
      if (sgemm == "onednn")
        lib = Lib::OneDNN;
      else if (ShapedType::isDynamic(mS) || ShapedType::isDynamic(nS) ||
               ShapedType::isDynamic(kS))
        lib = Lib::BySize;
      else if (productAtLeast(mS, nS, kS, kOneDNNSgemmMin))
        lib = Lib::OneDNN;
    }
    StringRef blasName = f32 ? "cblas_sgemm" : "cblas_dgemm";
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    SmallVector<Type> argTypes = {i32,   i32, i32,   i32, i32,   i32,  elem,
                                  ptrTy, i32, ptrTy, i32, elem, ptrTy, i32};
    auto declare = [&](StringRef name, ArrayRef<Type> types) {
      if (module.lookupSymbol(name))
        return;
      auto decl = func::FuncOp::create(mb, op.getLoc(), name,
                                       FunctionType::get(ctx, types, {}));
      decl.setPrivate();
    };
    if (lib != Lib::OneDNN)
      declare(blasName, argTypes);
    if (lib != Lib::BLAS) {
      SmallVector<Type> t(argTypes);
      t.push_back(IntegerType::get(ctx, 64)); // threads
      declare(kOneDNNSgemmSymbol, t);
    }

    OpBuilder bld(op);
    Location loc = op.getLoc();
    int64_t esz = elem.getIntOrFloatBitWidth() / 8;
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
    unsigned rc = ct.getRank();
    Value mDim = dc.sizes[rc - 2], nDim = dc.sizes[rc - 1];
    // A is [.., M, K] (or [.., K, M] when transposed).
    unsigned ra = at.getRank();
    Value kDim = form->transA ? da.sizes[ra - 2] : da.sizes[ra - 1];
    auto toI32 = [&](Value v) {
      return arith::IndexCastOp::create(bld, loc, i32, v).getResult();
    };
    // Leading dimension of a [rows, cols] storage: the row stride, at least
    // the row length and 1 (cblas checks it even for empty operands).
    auto ld = [&](const Desc &d, Layout l) {
      unsigned r = d.sizes.size();
      Value stride = l == Layout::RowMajor ? d.strides[r - 2] : d.strides[r - 1];
      Value cols = l == Layout::RowMajor ? d.sizes[r - 1] : d.sizes[r - 2];
      Value s = arith::MaxSIOp::create(bld, loc, stride, cols);
      return toI32(arith::MaxSIOp::create(bld, loc, s, one));
    };
    Value lda = ld(da, la), ldb = ld(db, lb), ldc = ld(dc, lc);
    // A column-major operand is the row-major transpose.
    bool transA = form->transA != (la == Layout::ColMajor);
    bool transB = form->transB != (lb == Layout::ColMajor);
    // Skip empty products (cblas rejects some of their leading dims); an
    // empty K still has to clear C when the fill was folded away.
    auto sgt0 = [&](Value v) {
      return arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::sgt, v,
                                   zero);
    };
    Value nonEmpty = arith::AndIOp::create(
        bld, loc, arith::AndIOp::create(bld, loc, sgt0(mDim), sgt0(nDim)),
        sgt0(kDim));
    if (zeroInit) {
      Value emptyK = arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::eq,
                                           kDim, zero);
      auto clear = scf::IfOp::create(bld, loc, emptyK, /*withElse=*/false);
      OpBuilder cb = OpBuilder::atBlockBegin(&clear.getThenRegion().front());
      Value z = arith::ConstantOp::create(cb, loc, elem, FloatAttr::get(elem, 0.0));
      linalg::FillOp::create(cb, loc, ValueRange{z}, ValueRange{c});
    }
    auto ifOp = scf::IfOp::create(bld, loc, nonEmpty, /*withElse=*/false);
    bld.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value batch = form->batched ? dc.sizes[0] : one;
    auto loop = scf::ForOp::create(bld, loc, zero, batch, one);
    bld.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVar();
    auto ptrOf = [&](const Desc &d, bool batched) {
      Value off = d.offset;
      if (batched)
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
    Value beta = arith::ConstantOp::create(
        bld, loc, elem, FloatAttr::get(elem, zeroInit ? 0.0 : 1.0));
    constexpr int32_t kRowMajor = 101, kNoTrans = 111, kTrans = 112;
    SmallVector<Value> args = {
        cst32(kRowMajor), cst32(transA ? kTrans : kNoTrans),
        cst32(transB ? kTrans : kNoTrans), toI32(mDim), toI32(nDim),
        toI32(kDim), alpha, ptrOf(da, form->batchedA), lda,
        ptrOf(db, form->batchedB), ldb, beta,
        ptrOf(dc, form->batched), ldc};
    auto callOneDNN = [&](OpBuilder &cb) {
      SmallVector<Value> withThreads(args);
      withThreads.push_back(
          arith::ConstantIntOp::create(cb, loc, cb.getI64Type(), threads));
      func::CallOp::create(cb, loc, kOneDNNSgemmSymbol, TypeRange{},
                           withThreads);
    };
    if (lib == Lib::BLAS) {
      func::CallOp::create(bld, loc, blasName, TypeRange{}, args);
    } else if (lib == Lib::OneDNN) {
      callOneDNN(bld);
    } else {
      // M * N * K >= kOneDNNSgemmMin without overflow: M * N (each < 2^31)
      // and K first.
      Value minV = arith::ConstantIndexOp::create(bld, loc, kOneDNNSgemmMin);
      auto ge = [&](Value v) {
        return arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::sge, v,
                                     minV)
            .getResult();
      };
      Value mn = arith::MulIOp::create(bld, loc, mDim, nDim);
      Value big = arith::OrIOp::create(
          bld, loc, arith::OrIOp::create(bld, loc, ge(mn), ge(kDim)),
          ge(arith::MulIOp::create(bld, loc, mn, kDim)));
      auto choose = scf::IfOp::create(bld, loc, big, /*withElse=*/true);
      OpBuilder tb = OpBuilder::atBlockBegin(&choose.getThenRegion().front());
      callOneDNN(tb);
      OpBuilder eb = OpBuilder::atBlockBegin(&choose.getElseRegion().front());
      func::CallOp::create(eb, loc, blasName, TypeRange{}, args);
    }
    op->erase();
  }
}
