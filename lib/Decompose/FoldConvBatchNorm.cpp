//===- FoldConvBatchNorm.cpp - Inference batch_norm into its conv2d -------===//
//
// Part of Kiln. `kt.batch_norm` (inference form: running statistics) whose
// input is a `kt.conv2d` read by nothing else becomes part of that conv:
//
//   s  = weight * rsqrt(running_var + eps)            (weight absent: 1)
//   w' = conv.weight * s[O, 1, 1, 1]
//   b' = (conv.bias - running_mean) * s + bias        (absent: 0)
//   batch_norm(conv2d(x, w, b)) == conv2d(x, w', b')
//
// The statistics and affine parameters are program values (parameters and
// buffers reach a graph as refs, loaded once per call), so the fold is a
// small per-call computation over the weights (O * C/g * kH * kW elements)
// instead of a pass over the activations; constants fold at compile time.
//
//===----------------------------------------------------------------------===//

#include "DecomposeUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace kiln::decompose {

namespace {
/// The conv2d that `bn` can absorb, or null: `bn`'s input is a rank-4
/// (batched, so the channel dim of both ops is dim 1) f32/f64 conv2d result
/// that nothing else reads, with no more weight elements than output
/// elements.
kt::Conv2dOp foldableConv(kt::BatchNormOp bn) {
  auto conv = bn.getInput().getDefiningOp<kt::Conv2dOp>();
  if (!conv || !conv->getResult(0).hasOneUse())
    return nullptr;
  if (Emitter::rankOf(conv.getResult()) != 4)
    return nullptr;
  Type et = Emitter::elementTypeOf(conv.getResult());
  if (!et.isF32() && !et.isF64())
    return nullptr;
  for (Value v : bn->getOperands())
    if (Emitter::elementTypeOf(v) != et)
      return nullptr;
  // The fold reads and writes the weights on every call (parameters are
  // inputs); the normalization it removes is at most a read and a write of
  // the conv's output, and nothing at all when it is fused with the next
  // pointwise op (resnet's BatchNorm + ReLU). Only where the weights are no
  // larger than the output (a `?` dim counted as 1): resnet18's 3x3
  // 512->512 conv at batch 8, 7x7, has 12x more weights than outputs and
  // folding all its convs measured slower (docs/codegen.md).
  auto numel = [](Value v) {
    int64_t n = 1;
    for (int64_t d : Emitter::shapeOf(v))
      n *= ShapedType::isDynamic(d) ? 1 : d;
    return n;
  };
  if (numel(conv.getWeight()) > numel(conv.getResult()))
    return nullptr;
  return conv;
}
} // namespace

unsigned foldConvBatchNorm(Operation *root) {
  SmallVector<kt::BatchNormOp> bns;
  root->walk([&](kt::BatchNormOp bn) {
    if (foldableConv(bn))
      bns.push_back(bn);
  });
  for (kt::BatchNormOp bn : bns) {
    kt::Conv2dOp conv = foldableConv(bn);
    // Every operand of both ops dominates `bn`: build there.
    OpBuilder b(bn);
    Emitter e(b, bn.getLoc());
    Value var = bn.getRunningVar();
    Value s = e.rsqrt(
        e.add(var, e.scalarLike(bn.getEps().convertToDouble(), var)));
    if (Value w = bn.getWeight())
      s = e.mul(w, s);
    Value sw = s;
    for (int i = 0; i < 3; ++i)
      sw = e.unsqueeze(sw, -1);
    Value weight = e.mul(conv.getWeight(), sw);
    Value centered = conv.getBias()
                         ? e.sub(conv.getBias(), bn.getRunningMean())
                         : e.neg(bn.getRunningMean());
    Value bias = e.mul(centered, s);
    if (Value beta = bn.getBias())
      bias = e.add(bias, beta);
    OperationState state(conv.getLoc(), conv->getName());
    state.addOperands({conv.getInput(), weight, bias});
    state.addTypes(bn.getResult().getType());
    state.addAttributes(conv->getAttrs());
    Operation *folded = b.create(state);
    bn.getResult().replaceAllUsesWith(folded->getResult(0));
    bn->erase();
    conv->erase();
  }
  return bns.size();
}

} // namespace kiln::decompose
