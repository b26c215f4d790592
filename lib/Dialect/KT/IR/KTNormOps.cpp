//===- KTNormOps.cpp - kt Norm ops ---------------------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTNormOps.td. Every verifier rule lives in the result-type
// inference (which runs when the op is verified, with a location).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln::kt;

namespace kiln::kt {
namespace {

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}

/// Two dims that may be equal (equal, or one is `?`).
bool dimsAgree(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

/// The more precise of two agreeing dims.
int64_t mergeDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

LogicalResult checkElem(std::optional<Location> loc, StringRef name,
                        StringRef what, Type operand, Type expected) {
  Type e = cast<ShapedType>(operand).getElementType();
  if (e != expected)
    return emitKTError(loc, name, what, " has element type ", typeStr(e),
                       " but input has ", typeStr(expected),
                       " (insert kt.cast)");
  return success();
}

/// Checks that the optional per-channel operand `v` (if present) has shape
/// [c] and element type `elem`.
LogicalResult checkVector(std::optional<Location> loc, StringRef name,
                          StringRef what, Value v, int64_t c, Type elem) {
  if (!v)
    return success();
  auto t = cast<RankedTensorType>(v.getType());
  if (failed(checkElem(loc, name, what, t, elem)))
    return failure();
  if (t.getRank() != 1 || !dimsAgree(t.getDimSize(0), c))
    return emitKTError(loc, name, what, " must have shape [",
                       ShapedType::isDynamic(c) ? std::string("?")
                                                : std::to_string(c),
                       "] but has shape ", shapeToString(t.getShape()));
  return success();
}

template <typename Adaptor>
LogicalResult inferSoftmaxLike(std::optional<Location> loc, StringRef name,
                               Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getSelf().getType());
  if (failed(normalizeDim((int64_t)adaptor.getDim(), t.getRank(), loc, name)))
    return failure();
  types.push_back(t);
  return success();
}

LogicalResult inferLayerNorm(std::optional<Location> loc, StringRef name,
                             LayerNormOp::Adaptor adaptor,
                             SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  SmallVector<int64_t> ns = getI64Array(adaptor.getNormalizedShape());
  if (ns.empty())
    return emitKTError(loc, name, "normalized_shape must not be empty");
  if ((int64_t)ns.size() > t.getRank())
    return emitKTError(loc, name, "normalized_shape has ", ns.size(),
                       " dims but input has rank ", t.getRank());
  for (int64_t d : ns)
    if (d < 0)
      return emitKTError(loc, name, "normalized_shape entries must be >= 0, "
                                    "got ", d);
  int64_t off = t.getRank() - ns.size();
  for (auto [i, d] : llvm::enumerate(ns))
    if (!dimsAgree(t.getDimSize(off + i), d))
      return emitKTError(loc, name, "normalized_shape ", shapeToString(ns),
                         " does not match the trailing dims of input shape ",
                         shapeToString(t.getShape()));
  for (auto [what, v] : {std::pair<StringRef, Value>{"weight", adaptor.getWeight()},
                         {"bias", adaptor.getBias()}}) {
    if (!v)
      continue;
    auto vt = cast<RankedTensorType>(v.getType());
    if (failed(checkElem(loc, name, what, vt, t.getElementType())))
      return failure();
    bool ok = vt.getRank() == (int64_t)ns.size();
    for (int64_t i = 0; ok && i < vt.getRank(); ++i)
      ok = dimsAgree(vt.getDimSize(i), ns[i]);
    if (!ok)
      return emitKTError(loc, name, what, " shape ",
                         shapeToString(vt.getShape()),
                         " must equal normalized_shape ", shapeToString(ns));
  }
  types.push_back(t);
  return success();
}

LogicalResult inferBatchNorm(std::optional<Location> loc, StringRef name,
                             BatchNormOp::Adaptor adaptor,
                             SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  if (t.getRank() < 2)
    return emitKTError(loc, name, "input must have rank >= 2 ([N, C, ...]) "
                                  "but has rank ", t.getRank());
  int64_t c = t.getDimSize(1);
  Type e = t.getElementType();
  if (failed(checkVector(loc, name, "running_mean", adaptor.getRunningMean(),
                         c, e)) ||
      failed(checkVector(loc, name, "running_var", adaptor.getRunningVar(), c,
                         e)) ||
      failed(checkVector(loc, name, "weight", adaptor.getWeight(), c, e)) ||
      failed(checkVector(loc, name, "bias", adaptor.getBias(), c, e)))
    return failure();
  types.push_back(t);
  return success();
}

/// The element type of batch_norm_train's statistics for an input of
/// element type `e`: f64 for f64, else f32 (PyTorch's accumulate type).
Type batchNormStatType(Type e) {
  return e.isF64() ? e : Float32Type::get(e.getContext());
}

LogicalResult inferBatchNormTrain(std::optional<Location> loc, StringRef name,
                                  BatchNormTrainOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  if (t.getRank() < 2)
    return emitKTError(loc, name, "input must have rank >= 2 ([N, C, ...]) "
                                  "but has rank ", t.getRank());
  int64_t c = t.getDimSize(1);
  Type e = t.getElementType();
  if (failed(checkVector(loc, name, "weight", adaptor.getWeight(), c, e)) ||
      failed(checkVector(loc, name, "bias", adaptor.getBias(), c, e)))
    return failure();
  // A `?` C is refined by a static weight or bias.
  for (Value v : {adaptor.getWeight(), adaptor.getBias()})
    if (v)
      c = mergeDim(c, cast<RankedTensorType>(v.getType()).getDimSize(0));
  auto stat = RankedTensorType::get({c}, batchNormStatType(e));
  types.push_back(t);
  types.push_back(stat);
  types.push_back(stat);
  return success();
}

LogicalResult inferBatchNormBackward(std::optional<Location> loc,
                                     StringRef name,
                                     BatchNormBackwardOp::Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  auto gt = cast<RankedTensorType>(adaptor.getGradOutput().getType());
  if (t.getRank() < 2)
    return emitKTError(loc, name, "input must have rank >= 2 ([N, C, ...]) "
                                  "but has rank ", t.getRank());
  Type e = t.getElementType();
  if (failed(checkElem(loc, name, "grad_output", gt, e)))
    return failure();
  bool ok = gt.getRank() == t.getRank();
  for (int64_t i = 0; ok && i < t.getRank(); ++i)
    ok = dimsAgree(gt.getDimSize(i), t.getDimSize(i));
  if (!ok)
    return emitKTError(loc, name, "grad_output shape ",
                       shapeToString(gt.getShape()),
                       " must equal input shape ",
                       shapeToString(t.getShape()));
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i)
    shape.push_back(mergeDim(t.getDimSize(i), gt.getDimSize(i)));
  int64_t c = shape[1];
  Type se = batchNormStatType(e);
  for (auto [what, v] :
       {std::pair<StringRef, Value>{"save_mean", adaptor.getSaveMean()},
        {"save_invstd", adaptor.getSaveInvstd()}}) {
    auto vt = cast<RankedTensorType>(v.getType());
    if (vt.getElementType() != se)
      return emitKTError(loc, name, what, " has element type ",
                         typeStr(vt.getElementType()), " but must have ",
                         typeStr(se), " (the statistics type of a ",
                         typeStr(e), " input)");
    if (failed(checkVector(loc, name, what, v, c, se)))
      return failure();
  }
  if (failed(checkVector(loc, name, "weight", adaptor.getWeight(), c, e)) ||
      failed(checkVector(loc, name, "bias", adaptor.getBias(), c, e)))
    return failure();
  if (adaptor.getBias() && adaptor.getActivation() == NormActivation::none)
    return emitKTError(loc, name, "bias is read only by an activation's mask "
                                  "but activation is none");
  for (Value v : {adaptor.getSaveMean(), adaptor.getSaveInvstd(),
                  adaptor.getWeight(), adaptor.getBias()})
    if (v)
      c = mergeDim(c, cast<RankedTensorType>(v.getType()).getDimSize(0));
  shape[1] = c;
  types.push_back(RankedTensorType::get(shape, e));
  auto vec = RankedTensorType::get({c}, e);
  types.push_back(vec);
  types.push_back(vec);
  return success();
}

/// Shared by nll_loss and cross_entropy with class-index targets: checks the
/// target shape and returns the per-element loss shape (the target's shape,
/// refined by input's dims).
FailureOr<SmallVector<int64_t>>
checkClassTarget(std::optional<Location> loc, StringRef name,
                 RankedTensorType in, RankedTensorType tgt) {
  SmallVector<int64_t> expected(in.getShape());
  if (in.getRank() >= 2)
    expected.erase(expected.begin() + 1);
  else
    expected.clear();
  bool ok = tgt.getRank() == (int64_t)expected.size();
  for (size_t i = 0; ok && i < expected.size(); ++i)
    ok = dimsAgree(expected[i], tgt.getDimSize(i));
  if (!ok)
    return emitKTError(loc, name, "target shape ",
                       shapeToString(tgt.getShape()),
                       " does not match input shape ",
                       shapeToString(in.getShape()), " (expected ",
                       shapeToString(expected), ")");
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = mergeDim(expected[i], tgt.getDimSize(i));
  return expected;
}

template <typename Adaptor>
LogicalResult inferLossCommon(std::optional<Location> loc, StringRef name,
                              Adaptor adaptor, bool allowProbTarget,
                              SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  auto tgt = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (in.getRank() < 1)
    return emitKTError(loc, name, "input must have rank >= 1 but has rank 0");
  int64_t c = in.getDimSize(in.getRank() == 1 ? 0 : 1);
  SmallVector<int64_t> lossShape;
  if (isKTFloat(tgt.getElementType())) {
    if (!allowProbTarget)
      return emitKTError(loc, name, "target must hold integer class indices "
                                    "(i64 or i32) but has element type ",
                         typeStr(tgt.getElementType()));
    if (failed(checkElem(loc, name, "probability target", tgt,
                         in.getElementType())))
      return failure();
    bool ok = tgt.getRank() == in.getRank();
    for (int64_t i = 0; ok && i < in.getRank(); ++i)
      ok = dimsAgree(in.getDimSize(i), tgt.getDimSize(i));
    if (!ok)
      return emitKTError(loc, name, "probability target shape ",
                         shapeToString(tgt.getShape()),
                         " must equal input shape ",
                         shapeToString(in.getShape()));
    // I64Attr getters return uint64_t.
    int64_t ignoreIndex = (int64_t)adaptor.getIgnoreIndex();
    if (ignoreIndex >= 0)
      return emitKTError(loc, name, "ignore_index (", ignoreIndex,
                         ") is not supported for probability targets; it "
                         "must be negative");
    for (int64_t i = 0; i < in.getRank(); ++i)
      if (i != (in.getRank() == 1 ? 0 : 1))
        lossShape.push_back(mergeDim(in.getDimSize(i), tgt.getDimSize(i)));
  } else {
    FailureOr<SmallVector<int64_t>> s = checkClassTarget(loc, name, in, tgt);
    if (failed(s))
      return failure();
    lossShape = *s;
  }
  if (failed(checkVector(loc, name, "weight", adaptor.getWeight(), c,
                         in.getElementType())))
    return failure();
  if (adaptor.getReduction() != Reduction::none)
    lossShape.clear();
  types.push_back(RankedTensorType::get(lossShape, in.getElementType()));
  return success();
}

LogicalResult inferNllLoss(std::optional<Location> loc, StringRef name,
                           NllLossOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  return inferLossCommon(loc, name, adaptor, /*allowProbTarget=*/false, types);
}

LogicalResult inferCrossEntropy(std::optional<Location> loc, StringRef name,
                                CrossEntropyOp::Adaptor adaptor,
                                SmallVectorImpl<Type> &types) {
  double ls = adaptor.getLabelSmoothing().convertToDouble();
  if (!(ls >= 0.0 && ls <= 1.0))
    return emitKTError(loc, name, "label_smoothing must be in [0, 1] but is ",
                       ls);
  return inferLossCommon(loc, name, adaptor, /*allowProbTarget=*/true, types);
}

LogicalResult inferSDPA(std::optional<Location> loc, StringRef name,
                        ScaledDotProductAttentionOp::Adaptor adaptor,
                        SmallVectorImpl<Type> &types) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  Type e = q.getElementType();
  for (auto [what, t] : {std::pair<StringRef, RankedTensorType>{"query", q},
                         {"key", k},
                         {"value", v}})
    if (t.getRank() < 2)
      return emitKTError(loc, name, what, " must have rank >= 2 but has rank ",
                         t.getRank());
  if (failed(checkElem(loc, name, "key", k, e)) ||
      failed(checkElem(loc, name, "value", v, e)))
    return failure();
  int64_t L = q.getDimSize(q.getRank() - 2), E = q.getDimSize(q.getRank() - 1);
  int64_t S = k.getDimSize(k.getRank() - 2), Ek = k.getDimSize(k.getRank() - 1);
  int64_t Sv = v.getDimSize(v.getRank() - 2), Ev = v.getDimSize(v.getRank() - 1);
  if (!dimsAgree(E, Ek))
    return emitKTError(loc, name, "query and key embedding dims differ: ", E,
                       " vs ", Ek);
  if (!dimsAgree(S, Sv))
    return emitKTError(loc, name, "key and value sequence lengths differ: ",
                       S, " vs ", Sv);
  S = mergeDim(S, Sv);
  SmallVector<SmallVector<int64_t>> shapes;
  for (RankedTensorType t : {q, k, v}) {
    shapes.emplace_back(t.getShape().drop_back(2));
    shapes.back().append({1, 1});
  }
  Value mask = adaptor.getAttnMask();
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (!m.getElementType().isInteger(1) && m.getElementType() != e)
      return emitKTError(loc, name, "attn_mask must have element type i1 or ",
                         typeStr(e), " but has ",
                         typeStr(m.getElementType()));
    if (adaptor.getIsCausal())
      return emitKTError(loc, name,
                         "is_causal and attn_mask cannot both be given");
    SmallVector<int64_t> ms(m.getShape());
    while (ms.size() < 2)
      ms.insert(ms.begin(), 1);
    for (auto [d, want] : {std::pair<int64_t, int64_t>{ms[ms.size() - 2], L},
                           {ms[ms.size() - 1], S}})
      if (d != 1 && !dimsAgree(d, want))
        return emitKTError(loc, name, "attn_mask shape ",
                           shapeToString(m.getShape()),
                           " does not broadcast to [..., L, S] = [..., ",
                           ShapedType::isDynamic(L) ? std::string("?")
                                                    : std::to_string(L),
                           ", ",
                           ShapedType::isDynamic(S) ? std::string("?")
                                                    : std::to_string(S),
                           "]");
    ms[ms.size() - 2] = ms[ms.size() - 1] = 1;
    shapes.push_back(ms);
  }
  if (adaptor.getDropoutP().convertToDouble() != 0.0)
    return emitKTError(loc, name, "dropout_p must be 0 (dropout needs a seed: "
                                  "apply kt.dropout explicitly), got ",
                       adaptor.getDropoutP().convertToDouble());
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(shapes, loc, name);
  if (failed(batch))
    return failure();
  SmallVector<int64_t> out(*batch);
  out[out.size() - 2] = L;
  out[out.size() - 1] = Ev;
  types.push_back(RankedTensorType::get(out, e));
  return success();
}

} // namespace
} // namespace kiln::kt

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTNormOps.cpp.inc"
