//===- ElementwiseFusion.cpp - Producer-consumer fusion of pointwise ops --===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. Upstream's linalg
// elementwise fusion (producer generic folded into its consumer generic's
// body) with Kiln's control: the producer must be a cheap all-parallel
// generic (pointwise, broadcasts included) whose results are only read by
// linalg generics, so that after fusion it is dead and nothing is computed
// twice into memory. Its body is recomputed in each consumer; for
// memory-bound chains this trades a few flops for a full pass over memory.
// A producer that a consumer reads broadcast (a lower-dimensional result,
// e.g. a row statistic) is not fused: that would recompute it per element.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

void kiln::cpu::fuseElementwise(func::FuncOp fn, unsigned maxBodyOps) {
  linalg::ControlFusionFn control = [maxBodyOps](OpOperand *operand) {
    auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
    auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
    if (!producer || !consumer)
      return false;
    // Stored once on purpose (softmax's exp(x - max), kMaterializeAttr), or
    // updating such a value in place (its normalization).
    if (isMaterialized(producer) || updatesMaterialized(producer))
      return false;
    // A product going to BLAS keeps its multiply-add body.
    if (consumer->hasAttr(kMatmulImplAttr))
      return false;
    // A producer the consumer reads broadcast (e.g. a row's 1/sum or
    // 1/sqrt(var + eps)) would be recomputed for every element of the
    // broadcast dims; materializing it costs a small tensor instead.
    if (!consumer.getMatchingIndexingMap(operand).isPermutation())
      return false;
    if (producer.getNumParallelLoops() != producer.getNumLoops() ||
        producer->getNumResults() != 1)
      return false;
    if (producer.getBody()->getOperations().size() > maxBodyOps)
      return false;
    // Every user a generic (each will fuse it in turn), and the producer
    // reads no tensor.extract (gathers) to stay simple to vectorize.
    for (Operation *user : producer->getResult(0).getUsers())
      if (!isa<linalg::GenericOp>(user))
        return false;
    bool extracts = false;
    producer.getBody()->walk([&](Operation *op) {
      if (op->getName().getStringRef() == "tensor.extract")
        extracts = true;
    });
    if (extracts)
      return false;
    // Only when the consumer does not exceed the size limit either.
    return consumer.getBody()->getOperations().size() +
               producer.getBody()->getOperations().size() <=
           4 * maxBodyOps;
  };
  RewritePatternSet patterns(fn.getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, control);
  (void)applyPatternsGreedily(fn, std::move(patterns));
}
