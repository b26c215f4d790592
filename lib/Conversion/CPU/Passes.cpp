//===- Passes.cpp - Thin drivers of the fast-CPU passes -------------------===//
//
// Part of Kiln. kiln-select-matmul, kiln-cpu-conv-im2col, kiln-cpu-pool-windows,
// kiln-cpu-pad-to-copy, kiln-cpu-verify-supported,
// kiln-cpu-rename-reserved-symbols, kiln-cpu-restore-interface-names,
// kiln-cpu-splats-to-fills, kiln-cpu-outline-kernels,
// kiln-cpu-tile-vectorize,
// kiln-matmul-to-blas and kiln-cpu-lower-vectors: each a thin driver over
// kiln/Conversion/CPU/CPUCodegen.h or upstream pattern sets.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Support/BoundedRewrite.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSELECTMATMULPASS
#define GEN_PASS_DEF_KILNCPUCONVIM2COLPASS
#define GEN_PASS_DEF_KILNCPUPADTOCOPYPASS
#define GEN_PASS_DEF_KILNCPUPOOLWINDOWSPASS
#define GEN_PASS_DEF_KILNCPUCONVCHANNELSLASTPASS
#define GEN_PASS_DEF_KILNCPUTILEVECTORIZEPASS
#define GEN_PASS_DEF_KILNCPUFUSEELEMENTWISEPASS
#define GEN_PASS_DEF_KILNMATMULTOBLASPASS
#define GEN_PASS_DEF_KILNCPUCONVTOONEDNNPASS
#define GEN_PASS_DEF_KILNCPULOWERVECTORSPASS
#define GEN_PASS_DEF_KILNINLINEALLOCASCOPESPASS
#define GEN_PASS_DEF_KILNCOPYSTRIDEDCALLOPERANDSPASS
#define GEN_PASS_DEF_KILNCPUVERIFYSUPPORTEDPASS
#define GEN_PASS_DEF_KILNCPURENAMERESERVEDSYMBOLSPASS
#define GEN_PASS_DEF_KILNCPURESTOREINTERFACENAMESPASS
#define GEN_PASS_DEF_KILNCPUSPLATSTOFILLSPASS
#define GEN_PASS_DEF_KILNCPUPRIVATECONVINITSPASS
#define GEN_PASS_DEF_KILNCPUEARLYDEALLOCPASS
#define GEN_PASS_DEF_KILNCPUALLOCSITESPASS
#define GEN_PASS_DEF_KILNCPUOUTLINEKERNELSPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct SelectMatmul
    : public kiln::impl::KilnSelectMatmulPassBase<SelectMatmul> {
  using Base::Base;
  void runOnOperation() override {
    if (impl != "auto" && impl != "openblas" && impl != "generated") {
      getOperation().emitError()
          << "kiln-select-matmul: impl must be auto, openblas or generated, "
             "not '"
          << impl << "'";
      return signalPassFailure();
    }
    kiln::cpu::selectMatmulImpl(getOperation(), impl,
                                threads ? threads : kiln::cpu::hostCores());
  }
};

struct ConvIm2col : public kiln::impl::KilnCPUConvIm2colPassBase<ConvIm2col> {
  using Base::Base;
  void runOnOperation() override {
    if (impl != "auto" && impl != "im2col" && impl != "direct" &&
        impl != "onednn") {
      getOperation().emitError() << "kiln-cpu-conv-im2col: impl must be "
                                    "auto, im2col, direct or onednn, not '"
                                 << impl << "'";
      return signalPassFailure();
    }
    if (impl == "onednn" && !kiln::cpu::oneDNNAvailable()) {
      getOperation().emitError()
          << "kiln-cpu-conv-im2col: impl=onednn needs oneDNN, which this "
             "build of Kiln does not have (install libdnnl-dev and "
             "reconfigure)";
      return signalPassFailure();
    }
    kiln::cpu::selectConvImpl(getOperation(), impl,
                              threads ? threads : kiln::cpu::hostCores(),
                              onednn);
  }
};

struct PadToCopy : public kiln::impl::KilnCPUPadToCopyPassBase<PadToCopy> {
  using Base::Base;
  void runOnOperation() override {
    (void)kiln::cpu::padsAsFillAndCopy(getOperation());
  }
};

struct ConvChannelsLast
    : public kiln::impl::KilnCPUConvChannelsLastPassBase<ConvChannelsLast> {
  using Base::Base;
  void runOnOperation() override {
    (void)kiln::cpu::convsToChannelsLast(getOperation());
  }
};

struct PoolWindows
    : public kiln::impl::KilnCPUPoolWindowsPassBase<PoolWindows> {
  using Base::Base;
  void runOnOperation() override {
    (void)kiln::cpu::poolsAsWindowSlices(getOperation());
  }
};

struct FuseElementwise
    : public kiln::impl::KilnCPUFuseElementwisePassBase<FuseElementwise> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::fuseElementwise(getOperation(), maxBodyOps);
  }
};

struct TileVectorize
    : public kiln::impl::KilnCPUTileVectorizePassBase<TileVectorize> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::TileVectorizeOptions o;
    o.threads = threads ? threads : kiln::cpu::hostCores();
    o.vectorBits = vectorBits ? vectorBits : kiln::cpu::hostVectorBits();
    kiln::cpu::tileAndVectorize(getOperation(), o);
  }
};

struct MatmulToBLAS
    : public kiln::impl::KilnMatmulToBLASPassBase<MatmulToBLAS> {
  using Base::Base;
  void runOnOperation() override {
    if (sgemm != "auto" && sgemm != "openblas" && sgemm != "onednn") {
      emitError(getOperation().getLoc())
          << "kiln-matmul-to-blas: sgemm must be auto, openblas or onednn, "
             "not '"
          << sgemm << "'";
      return signalPassFailure();
    }
    if (sgemm == "onednn" && !kiln::cpu::oneDNNAvailable()) {
      emitError(getOperation().getLoc())
          << "kiln-matmul-to-blas: sgemm=onednn needs libkiln_onednn, which "
             "this build does not have (Debian libdnnl-dev)";
      return signalPassFailure();
    }
    kiln::cpu::lowerMatmulsToBLAS(getOperation(), sgemm, threads);
  }
};

struct ConvToOneDNN
    : public kiln::impl::KilnCPUConvToOneDNNPassBase<ConvToOneDNN> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::lowerConvsToOneDNN(getOperation(), threads);
    kiln::cpu::lowerTransposedConvsToOneDNN(getOperation(), threads);
    // A conv carrying a folded clamp computes conv + clamp: lowered as a
    // plain conv it would drop the clamp, so one left over is an error.
    WalkResult left = getOperation().walk([](Operation *op) {
      StringRef attr;
      if (op->hasAttr(kiln::cpu::kConvClampAttr))
        attr = kiln::cpu::kConvClampAttr;
      else if (op->hasAttr(kiln::cpu::kConvInputClampAttr))
        attr = kiln::cpu::kConvInputClampAttr;
      if (attr.empty() || isa<func::CallOp>(op))
        return WalkResult::advance();
      op->emitError() << "kiln-cpu-conv-to-onednn: internal error: a "
                         "convolution with a folded clamp ("
                      << attr
                      << ") could not become a oneDNN call (it must be a "
                         "bufferized f32 conv)";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

struct LowerVectors
    : public kiln::impl::KilnCPULowerVectorsPassBase<LowerVectors> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<bool> avx512Exp = kiln::cpu::resolveFastExp(fastExp);
    if (failed(avx512Exp)) {
      fn.emitError() << "kiln-cpu-lower-vectors: fast-exp must be auto, "
                        "true, avx512, false or off, not '"
                     << fastExp << "'";
      return signalPassFailure();
    }
    // Bounded rewriting: a pattern set that does not converge leaves the IR
    // as it is (still correct) instead of looping, with a warning
    // (kiln/Support/BoundedRewrite.h) so that such a compile-time defect is
    // seen.
    int64_t numOps = 0;
    fn.walk([&](Operation *) { ++numOps; });
    GreedyRewriteConfig config;
    config.setMaxIterations(10);
    config.setMaxNumRewrites(10000 + 64 * numOps);
    auto applyPatternsGreedily = [&](Operation *op,
                                     FrozenRewritePatternSet &&patterns) {
      (void)kiln::applyPatternsBounded(op, std::move(patterns), config,
                                       "vector lowering");
      return success();
    };
    // Accumulators (matmul C tiles, partial reductions) stay in registers
    // across their loops.
    {
      // vector.mask { transfer / reduction } -> the masked op forms.
      RewritePatternSet patterns(ctx);
      vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      vector::populateVectorTransferDropUnitDimsPatterns(patterns);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
    linalg::hoistRedundantVectorTransfers(fn);
    {
      // Vectors of i1 in memory are bytes. After the hoisting, which would
      // take the byte views of one buffer for different buffers.
      RewritePatternSet patterns(ctx);
      kiln::cpu::populateByteBoolTransferPatterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::EltWise);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
    if (approximateMath && *avx512Exp) {
      // f32 exp: 14 ops ending in vscalefps, before MLIR's patterns take it.
      RewritePatternSet patterns(ctx);
      kiln::cpu::populateFastExpAVX512Patterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
    if (approximateMath) {
      // erf and tanh are odd and their results have the sign of their
      // argument, -0.0 included; the polynomial approximations below give
      // erf(-0.0) = +0.0. copysign(f(x), x) keeps the sign (one bitwise op
      // per vector) for the f32 ops about to be approximated.
      SmallVector<Operation *> odd;
      fn.walk([&](Operation *op) {
        if (isa<math::ErfOp, math::TanhOp>(op) &&
            getElementTypeOrSelf(op->getResult(0).getType()).isF32())
          odd.push_back(op);
      });
      for (Operation *op : odd) {
        OpBuilder b(op->getContext());
        b.setInsertionPointAfter(op);
        Value r = op->getResult(0);
        auto sign = math::CopySignOp::create(b, op->getLoc(), r, op->getOperand(0));
        r.replaceAllUsesExcept(sign, sign);
      }
      RewritePatternSet patterns(ctx);
      auto which = [](StringRef name) {
        name.consume_front("math.");
        return name == "exp" || name == "tanh" || name == "erf";
      };
      populateMathPolynomialApproximationPatterns(patterns, which);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
    // Exact math ops with an LLVM intrinsic (one instruction on x86) become
    // that intrinsic now: convert-math-to-libm would unroll vectors of them
    // into scalar libm calls.
    {
      LLVMTypeConverter converter(ctx);
      RewritePatternSet patterns(ctx);
      populateMathToLLVMConversionPatterns(converter, patterns);
      ConversionTarget target(*ctx);
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      target.addIllegalOp<math::FmaOp, math::FloorOp, math::CeilOp,
                          math::TruncOp, math::RoundEvenOp, math::SqrtOp,
                          math::AbsFOp, math::CopySignOp>();
      if (failed(applyPartialConversion(fn, target, std::move(patterns))))
        return signalPassFailure();
    }
  }
};

struct VerifySupported
    : public kiln::impl::KilnCPUVerifySupportedPassBase<VerifySupported> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(kiln::cpu::verifySupported(getOperation())))
      signalPassFailure();
  }
};

struct RenameReservedSymbols
    : public kiln::impl::KilnCPURenameReservedSymbolsPassBase<
          RenameReservedSymbols> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::renameReservedSymbols(getOperation());
  }
};

struct RestoreInterfaceNames
    : public kiln::impl::KilnCPURestoreInterfaceNamesPassBase<
          RestoreInterfaceNames> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::restoreInterfaceNames(getOperation());
  }
};

struct PrivateConvInits
    : public kiln::impl::KilnCPUPrivateConvInitsPassBase<PrivateConvInits> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::privatizeConvInits(getOperation());
  }
};

struct SplatsToFills
    : public kiln::impl::KilnCPUSplatsToFillsPassBase<SplatsToFills> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::splatConstantsAsFills(getOperation());
  }
};

struct AllocSites
    : public kiln::impl::KilnCPUAllocSitesPassBase<AllocSites> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::markAllocationSites(getOperation());
  }
};

struct CopyStridedCallOperands
    : public kiln::impl::KilnCopyStridedCallOperandsPassBase<
          CopyStridedCallOperands> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::copyStridedCallOperands(getOperation());
  }
};

struct EarlyDealloc
    : public kiln::impl::KilnCPUEarlyDeallocPassBase<EarlyDealloc> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::deallocCallResultsEarly(getOperation());
  }
};

struct OutlineKernels
    : public kiln::impl::KilnCPUOutlineKernelsPassBase<OutlineKernels> {
  using Base::Base;
  void runOnOperation() override {
    kiln::cpu::OutlineStats s = kiln::cpu::outlineKernels(getOperation());
    if (stats)
      llvm::outs() << "kiln-cpu-outline-kernels: " << s.kernels
                   << " kernels, " << s.reused << " reused, " << s.calls
                   << " calls\n";
  }
};

struct InlineAllocaScopes
    : public kiln::impl::KilnInlineAllocaScopesPassBase<InlineAllocaScopes> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      bool hasAlloca = false;
      scope.getBodyRegion().walk([&](Operation *op) {
        if (isa<memref::AllocaOp>(op) &&
            op->getParentOfType<memref::AllocaScopeOp>() == scope)
          hasAlloca = true;
      });
      if (!hasAlloca)
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      Operation *ret = body.getTerminator();
      SmallVector<Value> results(ret->getOperands());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(&body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};

} // namespace
