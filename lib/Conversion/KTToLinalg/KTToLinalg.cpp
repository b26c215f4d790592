//===- KTToLinalg.cpp - The kiln-lower-to-linalg pass ---------------------===//
//
// Part of Kiln. A thin driver: a dialect conversion with the patterns of
// populateKTToLinalgPatterns. Graph inputs are values (never donated), so the
// arguments of converted functions are marked `bufferization.writable =
// false`: bufferization then never writes into a caller's buffer.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTFusionOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_KILNLOWERTOLINALGPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

bool kiln::isMaterialized(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumRegions() != 1 || op->getRegion(0).empty())
    return false;
  for (Operation &inner : op->getRegion(0).front())
    if (inner.hasAttr(kMaterializeAttr))
      return true;
  return false;
}

bool kiln::updatesMaterialized(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return false;
  for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
    Operation *def = init.get().getDefiningOp();
    if (def && isMaterialized(def) &&
        linalgOp.payloadUsesValueFromOperand(&init))
      return true;
  }
  return false;
}

void kiln::populateKTToLinalgPatterns(RewritePatternSet &patterns,
                                      const KTToLinalgOptions &options) {
  populateKTElementwiseToLinalgPatterns(patterns);
  populateKTReductionToLinalgPatterns(patterns);
  populateKTNNToLinalgPatterns(patterns, options);
  populateKTShapeToLinalgPatterns(patterns);
  lowering::populateKTIndexToLinalgPatterns(patterns);
  lowering::populateKTNormToLinalgPatterns(patterns, options);
  lowering::populateKTRandomToLinalgPatterns(patterns);
  lowering::populateKTConvolutionToLinalgPatterns(patterns);
  lowering::populateKTLossToLinalgPatterns(patterns, options);
}

void kiln::configureKTToLinalgTarget(ConversionTarget &target,
                                     bool allowPartial) {
  target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                         arith::ArithDialect, math::MathDialect,
                         scf::SCFDialect>();
  // Run-time checks declare and call the error function and record their
  // messages on the module (RuntimeChecks.h).
  target.addLegalDialect<func::FuncDialect>();
  target.addLegalOp<ModuleOp>();
  if (!allowPartial)
    target.addIllegalDialect<kt::KTDialect>();
  // Fusion groups keep their structure: their bodies are lowered in place
  // and kiln-form-kernels removes them.
  target.addLegalOp<kt::FusionOp, kt::YieldOp>();
}

/// The most static type compatible with both `declared` and `inferred`
/// (ranked tensors of one rank): each dim static in either is static.
static RankedTensorType meet(RankedTensorType declared,
                             RankedTensorType inferred) {
  SmallVector<int64_t> shape(declared.getShape());
  for (auto [d, i] : llvm::zip(shape, inferred.getShape()))
    if (ShapedType::isDynamic(d))
      d = i;
  return declared.clone(shape);
}

unsigned kiln::refineKTResultTypes(Operation *root) {
  unsigned n = 0;
  root->walk([&](Operation *op) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    if (!infer || !isa<kt::KTDialect>(op->getDialect()))
      return;
    SmallVector<Type> inferred;
    if (failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getAttrDictionary(), op->getPropertiesStorage(),
            op->getRegions(), inferred)) ||
        inferred.size() != op->getNumResults())
      return;
    OpBuilder b = OpBuilder::atBlockBegin(op->getBlock());
    b.setInsertionPointAfter(op);
    for (auto [r, t] : llvm::zip(op->getResults(), inferred)) {
      auto declared = dyn_cast<RankedTensorType>(r.getType());
      auto inf = dyn_cast<RankedTensorType>(t);
      if (!declared || !inf || declared.getRank() != inf.getRank())
        continue;
      RankedTensorType refined = meet(declared, inf);
      if (refined == declared)
        continue;
      r.setType(refined);
      auto cast = tensor::CastOp::create(b, op->getLoc(), declared, r);
      r.replaceAllUsesExcept(cast, cast);
      ++n;
    }
  });
  return n;
}

/// The signless integer of the width of an unsigned (`ui8`) one.
static std::optional<Type> signlessOf(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  if (!it || it.isSignless())
    return std::nullopt;
  return IntegerType::get(t.getContext(), it.getWidth());
}

LogicalResult kiln::eraseIntegerSignedness(Operation *root) {
  // Unsigned values may only remain where no kt op still reads them (a
  // partial lowering that leaves kt ops on ui8 would lose their semantics).
  WalkResult walk = root->walk([&](Operation *op) {
    if (!isa<kt::KTDialect>(op->getDialect()) || isa<kt::FusionOp, kt::YieldOp>(op))
      return WalkResult::advance();
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                           op->getResultTypes()))
      if (auto st = dyn_cast<ShapedType>(t);
          st && signlessOf(st.getElementType())) {
        op->emitOpError("on ") << t
                               << " cannot stay in kt while the rest is "
                                  "lowered: lower it too (no allow-partial)";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  AttrTypeReplacer replacer;
  replacer.addReplacement([](IntegerType t) -> std::optional<Type> {
    return signlessOf(t);
  });
  replacer.addReplacement(
      [&](DenseIntOrFPElementsAttr a)
          -> std::optional<std::pair<Attribute, WalkResult>> {
        std::optional<Type> s = signlessOf(a.getElementType());
        if (!s)
          return std::nullopt;
        return std::make_pair(Attribute(a.bitcast(*s)), WalkResult::skip());
      });
  replacer.addReplacement(
      [&](IntegerAttr a) -> std::optional<std::pair<Attribute, WalkResult>> {
        std::optional<Type> s = signlessOf(a.getType());
        if (!s)
          return std::nullopt;
        return std::make_pair(Attribute(IntegerAttr::get(*s, a.getValue())),
                              WalkResult::skip());
      });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  // Function types live in a TypeAttr the replacer has updated; block
  // arguments (function entry blocks included) were replaced with them.
  return success();
}

LogicalResult kiln::lowerKTToLinalg(Operation *root, bool allowPartial,
                                    const KTToLinalgOptions &options) {
  MLIRContext *ctx = root->getContext();
  // Functions holding kt ops: their arguments become read-only buffers.
  SmallVector<func::FuncOp> funcs;
  root->walk([&](func::FuncOp f) {
    bool hasKT = false;
    f.walk([&](Operation *op) {
      if (isa<kt::KTDialect>(op->getDialect()))
        hasKT = true;
    });
    if (hasKT)
      funcs.push_back(f);
  });
  // The patterns build each op's inferred type (a declared `?` where
  // inference knows the size would make their expand_shapes and inits
  // invalid); users keep the declared type through a tensor.cast.
  refineKTResultTypes(root);
  ConversionTarget target(*ctx);
  configureKTToLinalgTarget(target, allowPartial);
  RewritePatternSet patterns(ctx);
  populateKTToLinalgPatterns(patterns, options);
  if (failed(applyPartialConversion(root, target, std::move(patterns))))
    return failure();
  // The patterns read ui8 to pick unsigned arith ops; arith, linalg and LLVM
  // take signless integers only.
  if (failed(eraseIntegerSignedness(root)))
    return failure();
  StringAttr writable = StringAttr::get(
      ctx, bufferization::BufferizationDialect::kWritableAttrName);
  for (func::FuncOp f : funcs)
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (isa<TensorType>(f.getArgumentTypes()[i]) &&
          !f.getArgAttr(i, writable))
        f.setArgAttr(i, writable, BoolAttr::get(ctx, false));
  return success();
}

namespace {
struct LowerToLinalgPass
    : public kiln::impl::KilnLowerToLinalgPassBase<LowerToLinalgPass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.insert<bufferization::BufferizationDialect>();
  }
  void runOnOperation() override {
    KTToLinalgOptions options;
    options.softmaxStoresExp = softmaxStoresExp;
    options.onlineRowStats = onlineRowStats;
    options.rowMoments = rowMoments;
    if (failed(lowerKTToLinalg(getOperation(), allowPartial, options)))
      signalPassFailure();
  }
};
} // namespace
