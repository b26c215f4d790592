//===- AOTAutograd.cpp - kiln-aot-autograd: kg.grad to graph calls --------===//
//
// Part of Kiln. AOTAutograd for captured training steps: each kg.grad (the
// gradients of a scalar loss with respect to inputs of the graph computing
// it) becomes graph calls. The loss's graph function is differentiated
// (kiln::autodiff::buildJointFunction) with the loss's cotangent seeded to 1,
// and then either
//
// * partition = none: the loss's graph becomes a call of the joint function
//   (outputs and gradients in one graph; the eager rung), or
// * partition = save-all | recompute-all | mincut: the joint is split by
//   kiln::partitionJoint into @<g>_fwd (outputs + saved values), called where
//   the loss's graph was, and @<g>_bwd (saved values -> gradients), called
//   where the kg.grad was (the aot_eager rung).
//
//===----------------------------------------------------------------------===//

#include "kiln/Autodiff/Autodiff.h"
#include "kiln/Autodiff/VJPInterface.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Transforms/Partition.h"
#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_KILNAOTAUTOGRADPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

LogicalResult kiln::verifyPartitionPolicy(StringRef policy, Location loc) {
  if (llvm::is_contained(kPartitionPolicies, policy))
    return success();
  InFlightDiagnostic diag = emitError(loc, "unknown partition policy '")
                            << policy << "' (expected one of:";
  for (StringRef p : kPartitionPolicies)
    diag << " " << p;
  return diag << ")";
}

/// Builds `@<callee>_joint(inputs...) -> (outputs..., gradients...)` for the
/// graph function `fn` called by `graph`: the outputs of `fn`, then one
/// gradient per `wrt` value (summed over the graph inputs it is passed as),
/// with the loss's cotangent a constant 1 built inside the function.
static FailureOr<func::FuncOp> buildSeededJoint(kg::GraphOp graph,
                                                func::FuncOp fn,
                                                kg::GradOp grad,
                                                ArrayRef<Value> wrt) {
  unsigned lossIndex = cast<OpResult>(grad.getLoss()).getResultNumber();
  unsigned numArgs = fn.getNumArguments();
  SmallVector<bool> requiresGrad(numArgs, false);
  for (auto [j, in] : llvm::enumerate(graph.getInputs()))
    requiresGrad[j] = llvm::is_contained(wrt, in);

  // Differentiate a copy whose only result is the loss, so that the other
  // outputs get no cotangent (PyTorch: grad_outputs None for them) and the
  // backward starts from the loss alone.
  OpBuilder b(fn);
  auto lossOnly = cast<func::FuncOp>(b.clone(*fn));
  Block &lossBody = lossOnly.getBody().front();
  auto lossReturn = cast<func::ReturnOp>(lossBody.getTerminator());
  Value loss = lossReturn.getOperand(lossIndex);
  lossReturn->setOperands(loss);
  lossOnly.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                                     loss.getType()));
  lossOnly.setSymName((fn.getSymName() + "_loss").str());
  FailureOr<func::FuncOp> joint =
      autodiff::buildJointFunction(lossOnly, requiresGrad);
  lossOnly.erase();
  if (failed(joint))
    return failure();
  // Named after the graph function (the copy's name was a temporary).
  SymbolTable symbols(fn->getParentOfType<ModuleOp>());
  if (failed(symbols.rename(*joint, (fn.getSymName() + "_joint").str()))) {
    return joint->emitError("kiln-aot-autograd: cannot name the joint of @")
           << fn.getSymName();
  }

  // The joint's forward ops are the graph function's, cloned in order
  // (buildJointFunction's contract): map the graph function's values onto
  // them to return every output of the graph, not only the loss.
  Block &body = joint->getBody().front();
  Block &src = fn.getBody().front();
  IRMapping map;
  for (unsigned i = 0; i < numArgs; ++i)
    map.map(src.getArgument(i), body.getArgument(i));
  Block::iterator it = body.begin();
  for (Operation &op : src.without_terminator()) {
    if (it == body.end() || it->getName() != op.getName() ||
        it->getNumResults() != op.getNumResults())
      return joint->emitError("kiln-aot-autograd: the joint of @")
             << fn.getSymName() << " does not start with its forward ops";
    map.map(op.getResults(), it->getResults());
    ++it;
  }
  Operation *firstBackward = &*it; // may be the terminator

  // Seed the loss's cotangent with 1 (torch.autograd.grad's default).
  BlockArgument cotangent = body.getArgument(numArgs);
  b.setInsertionPoint(firstBackward);
  Value one = autodiff::buildFullLike(
      b, grad.getLoc(),
      map.lookup(src.getTerminator()->getOperand(lossIndex)), 1.0);
  cotangent.replaceAllUsesWith(one);
  body.eraseArgument(numArgs);

  // Results: every output of the graph, then the gradients in wrt order.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> argGrad(numArgs);
  unsigned k = 1; // the joint returns (loss, gradients...)
  for (unsigned j = 0; j < numArgs; ++j)
    if (requiresGrad[j])
      argGrad[j] = ret.getOperand(k++);
  SmallVector<Value> results;
  for (Value v : src.getTerminator()->getOperands())
    results.push_back(map.lookup(v));
  b.setInsertionPoint(ret);
  for (Value w : wrt) {
    Value sum;
    for (auto [j, in] : llvm::enumerate(graph.getInputs())) {
      if (in != w)
        continue;
      sum = sum ? kt::AddOp::create(b, grad.getLoc(), sum.getType(), sum,
                                    argGrad[j])
                      .getResult()
                : argGrad[j];
    }
    results.push_back(sum);
  }
  ret->setOperands(results);
  joint->setType(FunctionType::get(fn.getContext(), body.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
  (*joint)->setAttr(kg::kGraphFunctionAttr, b.getUnitAttr());
  // Self-describing for kiln-partition: every argument is a primal (the
  // cotangent is built inside), the graph's outputs come first.
  (*joint)->setAttr(
      autodiff::kJointAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("num_primals", b.getI64IntegerAttr(numArgs)),
           b.getNamedAttr("num_outputs",
                          b.getI64IntegerAttr(fn.getNumResults())),
           b.getNamedAttr("source", FlatSymbolRefAttr::get(fn))}));
  joint->setPrivate();
  return joint;
}

/// Ref inputs of the loss's graph: the graph function must only read them
/// (kt.load, as after kiln-functionalize for an input it does not mutate).
/// The reads move to a new graph `@<g>_read(refs...) -> (values...)` called
/// just before, and the graph function takes the values instead, so that it
/// is a pure function of tensors that autodiff can differentiate. `wrt` is
/// updated to name the loaded values in place of the refs.
static LogicalResult hoistRefReads(kg::GraphOp graph, func::FuncOp fn,
                                   kg::GradOp grad, SmallVectorImpl<Value> &wrt,
                                   SymbolTable &symbols) {
  SmallVector<unsigned> refInputs;
  for (auto [j, in] : llvm::enumerate(graph.getInputs()))
    if (isa<kt::RefType>(in.getType()))
      refInputs.push_back(j);
  if (refInputs.empty())
    return success();
  Block &body = fn.getBody().front();
  for (unsigned j : refInputs)
    for (Operation *user : body.getArgument(j).getUsers())
      if (!isa<kt::LoadOp>(user) || user->getBlock() != &body) {
        InFlightDiagnostic diag =
            grad.emitOpError("the loss's graph @")
            << graph.getCallee() << " uses its ref input #" << j
            << " other than by kt.load; a ref it differentiates through must "
               "only be read (mutate parameters in another graph)";
        diag.attachNote(user->getLoc()) << "this use";
        return diag;
      }

  // The reads, as a graph of their own: one per distinct ref (a ref passed
  // as several inputs is read once, so that its gradient is the sum over
  // those inputs).
  MLIRContext *ctx = fn.getContext();
  OpBuilder b(fn);
  SmallVector<Type> refTypes, valueTypes;
  SmallVector<Value> refs;
  SmallVector<unsigned> readOf; // per refInputs entry: its read's index
  for (unsigned j : refInputs) {
    Value ref = graph.getInputs()[j];
    auto found = llvm::find(refs, ref);
    readOf.push_back(found - refs.begin());
    if (found != refs.end())
      continue;
    refs.push_back(ref);
    auto rt = cast<kt::RefType>(ref.getType());
    refTypes.push_back(rt);
    valueTypes.push_back(rt.getTensorType());
  }
  auto read = func::FuncOp::create(
      b, graph.getLoc(), (graph.getCallee() + "_read").str(),
      FunctionType::get(ctx, refTypes, valueTypes));
  read->setAttr(kg::kGraphFunctionAttr, b.getUnitAttr());
  read.setPrivate();
  symbols.insert(read); // unique name
  Block *readBody = read.addEntryBlock();
  b.setInsertionPointToEnd(readBody);
  SmallVector<Value> loaded;
  for (auto [k, arg] : llvm::enumerate(readBody->getArguments()))
    loaded.push_back(kt::LoadOp::create(b, graph.getLoc(), valueTypes[k], arg));
  func::ReturnOp::create(b, graph.getLoc(), loaded);

  b.setInsertionPoint(graph);
  auto readCall = kg::GraphOp::create(b, graph.getLoc(), valueTypes,
                                      read.getSymName(), refs);

  // The graph function takes the values.
  for (auto [n, j] : llvm::enumerate(refInputs)) {
    unsigned k = readOf[n];
    BlockArgument arg = body.getArgument(j);
    arg.setType(valueTypes[k]);
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      user->getResult(0).replaceAllUsesWith(arg);
      user->erase();
    }
    graph->setOperand(j, readCall.getResult(k));
  }
  for (Value &w : wrt)
    if (auto found = llvm::find(refs, w); found != refs.end())
      w = readCall.getResult(found - refs.begin());
  fn.setType(FunctionType::get(ctx, body.getArgumentTypes(),
                               fn.getResultTypes()));
  return success();
}

LogicalResult kiln::lowerGrad(kg::GradOp grad,
                              const AOTAutogradOptions &options) {
  if (failed(verifyPartitionPolicy(options.partition, grad.getLoc())))
    return failure();
  auto module = grad->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  kg::GraphOp graph = grad.getLossGraph();
  if (!graph.isOutlined() && failed(outlineGraph(graph, symbols)))
    return failure();
  auto fn = symbols.lookup<func::FuncOp>(graph.getCallee());
  if (!fn || fn.isExternal())
    return grad.emitOpError("the loss's graph @")
           << graph.getCallee() << " has no graph function body";
  for (Operation *user : graph->getUsers())
    if (user != grad && isa<kg::GradOp>(user))
      return user->emitOpError("differentiates a graph that another kg.grad "
                               "already differentiates; compute both "
                               "gradients in one kg.grad")
          .attachNote(grad.getLoc())
             << "the first kg.grad";

  // A graph function with ref inputs shared with other graph calls is
  // copied, so that hoisting its reads only changes this call's.
  bool hasRefInputs = llvm::any_of(graph.getInputs().getTypes(),
                                   llvm::IsaPred<kt::RefType>);
  if (hasRefInputs &&
      !llvm::hasSingleElement(*SymbolTable::getSymbolUses(fn, module))) {
    OpBuilder cb(fn);
    auto copy = cast<func::FuncOp>(cb.clone(*fn));
    copy.setPrivate();
    symbols.insert(copy);
    graph.setCallee(copy.getSymName());
    fn = copy;
  }
  SmallVector<Value> wrt(grad.getWrt());
  if (failed(hoistRefReads(graph, fn, grad, wrt, symbols)))
    return failure();
  FailureOr<func::FuncOp> joint = buildSeededJoint(graph, fn, grad, wrt);
  if (failed(joint))
    return failure();
  if (options.foldNormActivation)
    autodiff::foldNormActivationMasks(*joint);

  unsigned numOutputs = graph.getNumResults();
  OpBuilder b(graph);
  if (options.partition == "none") {
    // One call computes the outputs and the gradients; the joint is no
    // longer a partition input (and its `source` would keep @g alive).
    (*joint)->removeAttr(autodiff::kJointAttr);
    auto call = kg::GraphOp::create(
        b, graph.getLoc(), joint->getResultTypes(), joint->getSymName(),
        graph.getInputs());
    call->setDiscardableAttrs(graph->getDiscardableAttrDictionary());
    graph.replaceAllUsesWith(call.getResults().take_front(numOutputs));
    grad.replaceAllUsesWith(call.getResults().drop_front(numOutputs));
  } else {
    // The aot_eager rung: forward and backward graphs, split by
    // kiln-partition; the forward runs where the graph ran, the backward
    // where the kg.grad was.
    partition::PartitionOptions popts;
    popts.policy = *partition::parsePolicy(options.partition);
    popts.memoryBudget = options.memoryBudget;
    popts.passPrimals = options.passPrimals;
    Location jointLoc = joint->getLoc();
    FailureOr<partition::PartitionResult> parts =
        partition::partitionJoint(*joint, popts);
    if (failed(parts))
      return failure();
    if (options.report)
      emitRemark(jointLoc) << "kiln-aot-autograd: @" << graph.getCallee()
                           << ": " << partition::formatReport(*parts);
    func::FuncOp fwd = parts->fwd, bwd = parts->bwd;
    for (func::FuncOp f : {fwd, bwd}) {
      f->setAttr(kg::kGraphFunctionAttr, b.getUnitAttr());
      f.setPrivate();
    }
    auto fwdCall = kg::GraphOp::create(b, graph.getLoc(),
                                       fwd.getResultTypes(), fwd.getSymName(),
                                       graph.getInputs());
    fwdCall->setDiscardableAttrs(graph->getDiscardableAttrDictionary());
    graph.replaceAllUsesWith(fwdCall.getResults().take_front(numOutputs));
    // The backward's saved arguments: the graph inputs the forward lists
    // in kg.saved_primals (pass-primals: SSA values of the program, read
    // as they were when the forward ran), then the forward's saved results.
    SmallVector<Value> saved;
    if (auto primals = fwd->getAttrOfType<DenseI64ArrayAttr>(
            partition::kSavedPrimalsAttr))
      for (int64_t j : primals.asArrayRef())
        saved.push_back(graph.getInputs()[j]);
    llvm::append_range(saved, fwdCall.getResults().drop_front(numOutputs));
    b.setInsertionPoint(grad);
    auto bwdCall = kg::GraphOp::create(b, grad.getLoc(), bwd.getResultTypes(),
                                       bwd.getSymName(), saved);
    grad.replaceAllUsesWith(bwdCall.getResults());
  }
  grad.erase();
  graph.erase();
  if (fn.isPrivate() && SymbolTable::symbolKnownUseEmpty(fn, module))
    fn.erase();
  return success();
}

LogicalResult kiln::lowerGrads(ModuleOp module,
                               const AOTAutogradOptions &options) {
  if (failed(verifyPartitionPolicy(options.partition, module.getLoc())))
    return failure();
  if (!(options.memoryBudget >= 0.0 && options.memoryBudget <= 1.0))
    return emitError(module.getLoc(), "memory-budget must be in [0, 1], got ")
           << options.memoryBudget;
  if (options.passPrimals && options.partition == "none")
    return emitError(module.getLoc(),
                     "pass-primals needs a partition policy (save-all, "
                     "recompute-all or mincut): partition=none calls the "
                     "joint, which saves nothing");
  SmallVector<kg::GradOp> grads;
  module.walk([&](kg::GradOp g) { grads.push_back(g); });
  for (kg::GradOp g : grads)
    if (failed(lowerGrad(g, options)))
      return failure();
  return success();
}

namespace {
struct AOTAutogradPass
    : public kiln::impl::KilnAOTAutogradPassBase<AOTAutogradPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    autodiff::registerVJPInterfaces(registry);
  }

  void runOnOperation() override {
    AOTAutogradOptions options;
    options.partition = partition;
    options.memoryBudget = memoryBudget;
    options.report = report;
    options.foldNormActivation = foldNormActivation;
    options.passPrimals = passPrimals;
    if (failed(lowerGrads(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
