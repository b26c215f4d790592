//===- Autodiff.cpp - Joint forward + backward functions ------------------===//
//
// Part of Kiln. Reverse-mode differentiation of a straight-line graph
// function: an activity analysis (values that depend on a required argument
// and reach a float output), then one reverse sweep that asks each active op
// for its vector-Jacobian product (DifferentiableOpInterface) and sums the
// gradients of values used several times.
//
//===----------------------------------------------------------------------===//

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Autodiff/VJPInterface.h"

#include "VJPUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::autodiff;

SmallVector<bool> autodiff::getRequiresGrad(func::FuncOp fn) {
  SmallVector<bool> req;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    if (auto a = fn.getArgAttrOfType<BoolAttr>(i, kRequiresGradAttr))
      req.push_back(a.getValue());
    else
      req.push_back(isFloatValue(fn.getArgument(i)));
  }
  return req;
}

namespace {

/// Adds `g` to the gradient of `v` held in `grads` (kt.add when one exists).
void accumulate(OpBuilder &b, Location loc, DenseMap<Value, Value> &grads,
                Value v, Value g) {
  auto it = grads.find(v);
  if (it == grads.end()) {
    grads[v] = g;
    return;
  }
  it->second = kt::AddOp::create(b, loc, it->second, g).getResult();
}

/// `v` converted to `type` when the types differ only in static vs `?` dims
/// (tensor.cast), or when the element type differs only by a cast the rule
/// forgot (never expected).
Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v).getResult();
}

} // namespace

FailureOr<func::FuncOp>
autodiff::buildJointFunction(func::FuncOp fn, ArrayRef<bool> requiresGrad) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return fn.emitError("kiln-autodiff: expected a function with one block");
  if (requiresGrad.size() != fn.getNumArguments())
    return fn.emitError("kiln-autodiff: ")
           << requiresGrad.size() << " requires-grad flags for "
           << fn.getNumArguments() << " arguments";
  for (auto [i, arg] : llvm::enumerate(fn.getArguments()))
    if (requiresGrad[i] && !isFloatValue(arg))
      return fn.emitError("kiln-autodiff: argument #")
             << i << " of type " << arg.getType()
             << " requires grad but only float tensors can";

  MLIRContext *ctx = fn.getContext();
  Block &srcBody = fn.getBody().front();
  auto srcReturn = dyn_cast<func::ReturnOp>(srcBody.getTerminator());
  if (!srcReturn)
    return fn.emitError("kiln-autodiff: expected a func.return terminator");

  // The joint signature.
  FunctionType ft = fn.getFunctionType();
  SmallVector<Type> argTypes(ft.getInputs());
  SmallVector<unsigned> cotangentOf; // result index of each cotangent arg
  for (auto [i, t] : llvm::enumerate(ft.getResults()))
    if (auto st = dyn_cast<ShapedType>(t);
        st && kt::isKTFloat(st.getElementType()) &&
        // A result marked `kg.requires_grad = false` is not differentiable
        // (BatchNorm's running statistics): no cotangent, so nothing of
        // the backward goes through it.
        !(fn.getResultAttrOfType<BoolAttr>(i, "kg.requires_grad") &&
          !fn.getResultAttrOfType<BoolAttr>(i, "kg.requires_grad")
               .getValue())) {
      argTypes.push_back(t);
      cotangentOf.push_back(i);
    }
  SmallVector<Type> resultTypes(ft.getResults());
  for (auto [i, t] : llvm::enumerate(ft.getInputs()))
    if (requiresGrad[i])
      resultTypes.push_back(t);

  OpBuilder b(ctx);
  b.setInsertionPointAfter(fn);
  std::string name = (fn.getSymName() + "_joint").str();
  auto joint = func::FuncOp::create(
      b, fn.getLoc(), name, FunctionType::get(ctx, argTypes, resultTypes));
  joint.setVisibility(fn.getVisibility());
  joint->setAttr(
      kJointAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("num_primals",
                          b.getI64IntegerAttr(fn.getNumArguments())),
           b.getNamedAttr("num_outputs",
                          b.getI64IntegerAttr(fn.getNumResults())),
           b.getNamedAttr("source", FlatSymbolRefAttr::get(fn))}));
  // Keep the primal argument attributes (kg.requires_grad, ...).
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (DictionaryAttr d = fn.getArgAttrDict(i))
      joint.setArgAttrs(i, d);
  Block *body = joint.addEntryBlock();
  b.setInsertionPointToEnd(body);

  // Forward: clone the ops.
  IRMapping map;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    map.map(fn.getArgument(i), body->getArgument(i));
  for (Operation &op : srcBody.without_terminator())
    b.clone(op, map);
  auto mapped = [&](Value v) { return map.lookup(v); };

  // Activity analysis on the forward ops (of the joint function).
  DenseSet<Value> varied;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (requiresGrad[i])
      varied.insert(body->getArgument(i));
  for (Operation &op : *body) {
    // A gradient barrier (kg.stop_gradient): its results are constants.
    if (op.hasAttr(kStopGradientAttr))
      continue;
    bool in = llvm::any_of(op.getOperands(),
                           [&](Value v) { return varied.contains(v); });
    // Values defined in nested regions and captured also count.
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        in |= varied.contains(v);
    });
    if (!in)
      continue;
    for (Value r : op.getResults())
      if (isFloatValue(r))
        varied.insert(r);
  }
  DenseSet<Value> useful;
  for (unsigned k : cotangentOf)
    useful.insert(mapped(srcReturn.getOperand(k)));
  SmallVector<Operation *> ops;
  for (Operation &op : *body)
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(), [&](Value r) {
          return useful.contains(r) && varied.contains(r);
        }))
      continue;
    for (Value v : op->getOperands())
      if (varied.contains(v))
        useful.insert(v);
  }
  auto active = [&](Value v) {
    return varied.contains(v) && useful.contains(v);
  };

  // Backward: seed the output cotangents, then one reverse sweep.
  DenseMap<Value, Value> grads;
  unsigned nPrimals = fn.getNumArguments();
  for (auto [j, k] : llvm::enumerate(cotangentOf)) {
    Value out = mapped(srcReturn.getOperand(k));
    if (active(out))
      accumulate(b, srcReturn.getLoc(), grads, out,
                 body->getArgument(nPrimals + j));
  }
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(), active))
      continue;
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      Value g = active(r) ? grads.lookup(r) : Value();
      any |= bool(g);
      resultGrads.push_back(g);
    }
    if (!any)
      continue;
    auto iface = dyn_cast<DifferentiableOpInterface>(op);
    if (!iface) {
      op->emitError("kiln-autodiff: no vector-Jacobian rule for '")
          << op->getName() << "', whose result is needed for a gradient";
      joint.erase();
      return failure();
    }
    SmallVector<Value> operandGrads(op->getNumOperands());
    if (failed(iface.buildVJP(b, resultGrads, operandGrads))) {
      joint.erase();
      return failure();
    }
    for (auto [v, g] : llvm::zip(op->getOperands(), operandGrads))
      if (g && active(v))
        accumulate(b, op->getLoc(), grads, v,
                   castTo(b, op->getLoc(), g, v.getType()));
  }

  // Return outputs, then the gradients of the required arguments.
  SmallVector<Value> rets;
  for (Value v : srcReturn.getOperands())
    rets.push_back(mapped(v));
  for (unsigned i = 0; i < nPrimals; ++i) {
    if (!requiresGrad[i])
      continue;
    Value arg = body->getArgument(i);
    Value g = grads.lookup(arg);
    if (!g)
      g = buildZerosLike(b, fn.getLoc(), arg);
    rets.push_back(castTo(b, fn.getLoc(), g, arg.getType()));
  }
  func::ReturnOp::create(b, srcReturn.getLoc(), rets);

  // A rule builds the gradient of every operand; those of inactive operands
  // (e.g. `sum(g * s)` for the constant scale of `s * c`) are not
  // accumulated and stay unread. Erase them: kiln-partition counts every
  // backward read of a forward value, so a dead read of the attention
  // scores made the min-cut save the scores and recompute the softmax in
  // the backward instead of saving the probabilities the backward needs.
  Operation *firstBwd = ops.empty() ? &body->front() : ops.back()->getNextNode();
  SmallVector<Operation *> bwdOps;
  for (Operation *op = firstBwd; op && op != body->getTerminator();
       op = op->getNextNode())
    bwdOps.push_back(op);
  for (Operation *op : llvm::reverse(bwdOps))
    if (isOpTriviallyDead(op))
      op->erase();
  return joint;
}
