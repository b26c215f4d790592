//===- Interpreter.cpp - The reference interpreter ------------------------===//
//
// Part of Kiln. The evaluator: walks blocks, binds values, runs control flow
// (func.call, scf.if/for/while) itself, and every other op through its
// InterpretableOpInterface model. After each op the result values are checked
// against the result types, so a kernel bug or a `?` that resolved to the
// wrong size is caught at the op that produced it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Interpreter/Interpreter.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;

#include "kiln/Interpreter/InterpreterInterface.cpp.inc"

namespace kiln::interp {

bool matchesType(DType dtype, ArrayRef<int64_t> valueShape, Type type,
                 std::string &why) {
  llvm::raw_string_ostream os(why);
  Type elem = type;
  ArrayRef<int64_t> shape;
  if (auto tt = dyn_cast<RankedTensorType>(type)) {
    elem = tt.getElementType();
    shape = tt.getShape();
  } else if (auto rt = dyn_cast<kt::RefType>(type)) {
    // A ref is checked like its tensor type (Tensor::isRef tells them apart).
    elem = rt.getElementType();
    shape = rt.getShape();
  } else if (isa<ShapedType>(type)) {
    os << "unsupported type " << type;
    return false;
  }
  std::optional<DType> dt = dtypeFromType(elem);
  if (!dt) {
    os << "unsupported type " << type;
    return false;
  }
  bool ok = *dt == dtype && shape.size() == valueShape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i)
    ok = ShapedType::isDynamic(shape[i]) || shape[i] == valueShape[i];
  if (!ok) {
    os << "expected " << type << ", got " << dtypeName(dtype)
       << " tensor of shape ";
    if (valueShape.empty())
      os << "[] (rank 0)";
    for (size_t i = 0; i < valueShape.size(); ++i)
      os << (i ? "x" : "") << valueShape[i];
  }
  return ok;
}

bool matchesType(const Tensor &value, Type type, std::string &why) {
  return matchesType(value.dtype(), value.shape(), type, why);
}

Tensor Interpreter::lookup(Value v) const { return values.lookup(v); }

FailureOr<SmallVector<Tensor>> Interpreter::call(StringRef name,
                                                 ArrayRef<Tensor> args) {
  auto fn = module.lookupSymbol<FunctionOpInterface>(name);
  if (!fn) {
    emitError(module.getLoc()) << "no function named '" << name << "'";
    return failure();
  }
  return call(fn, args);
}

FailureOr<SmallVector<Tensor>> Interpreter::call(FunctionOpInterface fn,
                                                 ArrayRef<Tensor> args) {
  if (fn.isExternal()) {
    fn.emitError() << "cannot interpret external function '" << fn.getName()
                   << "'";
    return failure();
  }
  if (args.size() != fn.getNumArguments()) {
    fn.emitError() << "expects " << fn.getNumArguments() << " arguments, got "
                   << args.size();
    return failure();
  }
  SmallVector<Tensor> boundArgs(args);
  for (auto [i, arg] : llvm::enumerate(boundArgs)) {
    std::string why;
    if (!matchesType(arg, fn.getArgumentTypes()[i], why)) {
      fn.emitError() << "argument #" << i << ": " << why;
      return failure();
    }
    // A tensor passed for a ref argument becomes a ref over its buffer, so
    // the caller sees the function's writes (mutated inputs).
    if (isa<kt::RefType>(fn.getArgumentTypes()[i]))
      arg = Tensor::makeRef(arg);
  }
  // A tensor argument is a value: when the caller passed the buffer of a ref
  // argument for it, it gets a copy, so that writes through the ref do not
  // change it during the call.
  for (auto [i, arg] : llvm::enumerate(boundArgs)) {
    if (arg.isRef() || isa<kt::RefType>(fn.getArgumentTypes()[i]))
      continue;
    for (auto [j, other] : llvm::enumerate(boundArgs))
      if (other.isRef() && isa<kt::RefType>(fn.getArgumentTypes()[j]) &&
          arg.sharesStorage(other)) {
        llvm::Expected<Tensor> copy = arg.clone();
        if (!copy) {
          fn.emitError() << "argument #" << i << ": "
                         << llvm::toString(copy.takeError());
          return failure();
        }
        arg = std::move(*copy);
        break;
      }
  }
  if (++callDepth > 256) {
    --callDepth;
    fn.emitError() << "call depth exceeds 256 (unbounded recursion?)";
    return failure();
  }
  FailureOr<SmallVector<Tensor>> results =
      runBlock(fn.getFunctionBody().front(), boundArgs);
  --callDepth;
  if (failed(results))
    return failure();
  for (auto [i, r] : llvm::enumerate(*results)) {
    std::string why;
    if (!matchesType(r, fn.getResultTypes()[i], why)) {
      fn.emitError() << "result #" << i << ": " << why;
      return failure();
    }
  }
  return results;
}

FailureOr<SmallVector<Tensor>> Interpreter::runBlock(Block &block,
                                                     ArrayRef<Tensor> args) {
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    values[arg] = value;
  for (Operation &op : block.without_terminator())
    if (failed(runOp(op)))
      return failure();
  SmallVector<Tensor> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(lookup(v));
  return results;
}

static bool truthy(const Tensor &t) { return t.numel() == 1 && t.getB(0); }

LogicalResult Interpreter::runOp(Operation &op) {
  SmallVector<Tensor> operands;
  for (Value v : op.getOperands()) {
    Tensor t = lookup(v);
    if (t.isNull())
      return op.emitError("operand has no value (unsupported control flow?)");
    operands.push_back(t);
  }

  SmallVector<Tensor> results;
  auto handler = handlers.find(op.getName().getStringRef());
  if (handler != handlers.end()) {
    if (failed(handler->second(op, operands, results, *this)))
      return failure();
  } else if (auto callOp = dyn_cast<func::CallOp>(op)) {
    auto callee = module.lookupSymbol<func::FuncOp>(callOp.getCallee());
    if (!callee)
      return op.emitError("unknown callee");
    FailureOr<SmallVector<Tensor>> r = call(callee, operands);
    if (failed(r))
      return failure();
    results = std::move(*r);
  } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    Region &region = truthy(operands[0]) ? ifOp.getThenRegion()
                                         : ifOp.getElseRegion();
    if (!region.empty()) {
      FailureOr<SmallVector<Tensor>> r = runBlock(region.front(), {});
      if (failed(r))
        return failure();
      results = std::move(*r);
    }
  } else if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    int64_t lb = operands[0].getI(0), ub = operands[1].getI(0),
            step = operands[2].getI(0);
    if (step <= 0)
      return op.emitError("scf.for step must be positive, got ") << step;
    SmallVector<Tensor> iter(operands.begin() + 3, operands.end());
    DType ivType = dtypeFromType(forOp.getInductionVar().getType())
                       .value_or(DType::I64);
    for (int64_t iv = lb; iv < ub; iv += step) {
      SmallVector<Tensor> args{Tensor::scalarInt(ivType, iv)};
      args.append(iter);
      FailureOr<SmallVector<Tensor>> r = runBlock(*forOp.getBody(), args);
      if (failed(r))
        return failure();
      iter = std::move(*r);
    }
    results = std::move(iter);
  } else if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
    SmallVector<Tensor> state = operands;
    while (true) {
      FailureOr<SmallVector<Tensor>> before =
          runBlock(whileOp.getBefore().front(), state);
      if (failed(before))
        return failure();
      auto cond = cast<scf::ConditionOp>(
          whileOp.getBefore().front().getTerminator());
      Tensor c = lookup(cond.getCondition());
      SmallVector<Tensor> forwarded(before->begin() + 1, before->end());
      if (!truthy(c)) {
        results = std::move(forwarded);
        break;
      }
      FailureOr<SmallVector<Tensor>> after =
          runBlock(whileOp.getAfter().front(), forwarded);
      if (failed(after))
        return failure();
      state = std::move(*after);
    }
  } else if (auto iface = dyn_cast<InterpretableOpInterface>(op)) {
    if (failed(iface.interpret(operands, results)))
      return failure();
  } else {
    return op.emitError("the interpreter has no rule for '")
           << op.getName() << "'";
  }

  if (results.size() != op.getNumResults())
    return op.emitError("interpreter produced ")
           << results.size() << " results, expected " << op.getNumResults();
  for (auto [i, r] : llvm::enumerate(op.getResults())) {
    std::string why;
    if (!matchesType(results[i], r.getType(), why))
      return op.emitError("result #") << i << " at run time: " << why;
    values[r] = results[i];
  }
  return success();
}

} // namespace kiln::interp
