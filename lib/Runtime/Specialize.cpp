//===- Specialize.cpp - Specializing programs for their inputs ------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Specialize.h"
#include "kiln/Support/ThreadDiagnostics.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::runtime {

/// The least specific type of two: equal dims kept, differing dims `?`
/// (tensors and refs of one rank and element type); null if they do not
/// join.
static Type joinTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto ta = kg::getGuardedTensorType(a), tb = kg::getGuardedTensorType(b);
  if (!ta || !tb || isa<kt::RefType>(a) != isa<kt::RefType>(b) ||
      ta.getRank() != tb.getRank() ||
      ta.getElementType() != tb.getElementType())
    return Type();
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(ta.getShape(), tb.getShape()))
    shape.push_back(x == y ? x : ShapedType::kDynamic);
  if (isa<kt::RefType>(a))
    return kt::RefType::get(a.getContext(), shape, ta.getElementType());
  return RankedTensorType::get(shape, ta.getElementType());
}

/// `type` with every dim `?` (tensors and refs; other types unchanged).
static Type dynamicDims(Type type) {
  RankedTensorType t = kg::getGuardedTensorType(type);
  if (!t)
    return type;
  SmallVector<int64_t> shape(t.getRank(), ShapedType::kDynamic);
  if (isa<kt::RefType>(type))
    return kt::RefType::get(type.getContext(), shape, t.getElementType());
  return RankedTensorType::get(shape, t.getElementType());
}

static void setBlockArgTypes(Block &block, TypeRange types) {
  for (auto [arg, t] : llvm::zip(block.getArguments(), types))
    arg.setType(t);
}

/// Joins `types` into `carried` (loop-carried types of `loop`); sets
/// `changed` if an entry became less specific. Fails with an error at
/// `loop` if a pair does not join.
static LogicalResult joinInto(Operation *loop, SmallVectorImpl<Type> &carried,
                              TypeRange types, bool &changed) {
  for (auto [i, t] : llvm::enumerate(types)) {
    Type j = joinTypes(carried[i], t);
    if (!j)
      return loop->emitError("loop-carried value #")
             << i << " changes type incompatibly: " << carried[i] << " vs "
             << t;
    changed |= j != carried[i];
    carried[i] = j;
  }
  return success();
}

TypeRefiner::TypeRefiner(kg::ProgramOp program) {
  // Host callbacks' results are whatever the embedder's function returns:
  // remember the types the loaded program calls them with, to tell which
  // calls specialization changes.
  program.walk([&](kg::HostCallOp call) {
    hostCallOperandTypes[call] = llvm::to_vector(call.getOperandTypes());
  });
}

LogicalResult TypeRefiner::refineFunction(func::FuncOp fn,
                                          TypeRange argTypes) {
  if (fn.isExternal())
    return fn.emitError("cannot specialize external function");
  setBlockArgTypes(fn.front(), argTypes);
  fn.setFunctionType(FunctionType::get(fn.getContext(), argTypes,
                                       fn.getResultTypes()));
  if (failed(refine(fn.getBody())))
    return failure();
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), argTypes, ret.getOperandTypes()));
  return success();
}

FailureOr<func::FuncOp>
TypeRefiner::specializeCallee(Operation *call, FlatSymbolRefAttr callee,
                              TypeRange argTypes) {
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, callee);
  if (!fn)
    return call->emitError("unknown callee ") << callee;
  func::FuncOp origin = originOf.lookup(fn);
  if (!origin)
    origin = fn;
  SmallVector<func::FuncOp> &vs = variants[origin.getOperation()];
  for (func::FuncOp v : vs)
    if (TypeRange(v.getArgumentTypes()) == argTypes)
      return v;
  func::FuncOp target = fn;
  if (!vs.empty()) {
    // Called with other types than an earlier call: a copy for these, so
    // each call keeps a function of its own types.
    auto module = origin->getParentOfType<ModuleOp>();
    if (!module)
      return call->emitError("callee ")
             << callee << " is called with two signatures but is not in a "
                          "module";
    target = origin.clone();
    SymbolTable(module).insert(target, std::next(origin->getIterator()));
    originOf[target.getOperation()] = origin;
  }
  vs.push_back(target);
  if (TypeRange(target.getArgumentTypes()) != argTypes &&
      failed(refineFunction(target, argTypes)))
    return failure();
  return target;
}

/// Retargets `call` (a kg.graph or func.call) at `fn` and takes its result
/// types.
static void setCallee(Operation *call, func::FuncOp fn) {
  auto ref = FlatSymbolRefAttr::get(fn.getSymNameAttr());
  if (auto graph = dyn_cast<kg::GraphOp>(call))
    graph.setCalleeAttr(ref);
  else
    cast<func::CallOp>(call).setCalleeAttr(ref);
  for (auto [r, t] : llvm::zip(call->getResults(), fn.getResultTypes()))
    r.setType(t);
}

LogicalResult TypeRefiner::refineOp(Operation &op) {
  if (auto graph = dyn_cast<kg::GraphOp>(op)) {
    if (graph.isOutlined()) {
      FailureOr<func::FuncOp> fn = specializeCallee(
          &op, graph.getCalleeAttr(), graph.getInputs().getTypes());
      if (failed(fn))
        return failure();
      setCallee(&op, *fn);
      return success();
    }
    Block &body = graph.getBody().front();
    setBlockArgTypes(body, graph.getInputs().getTypes());
    if (failed(refine(graph.getBody())))
      return failure();
    for (auto [r, v] : llvm::zip(graph.getResults(),
                                 body.getTerminator()->getOperands()))
      r.setType(v.getType());
    return success();
  }
  if (auto brk = dyn_cast<kg::BreakOp>(op)) {
    if (failed(refine(brk.getBody())))
      return failure();
    for (auto [r, v] : llvm::zip(
             brk.getResults(), brk.getBody().front().getTerminator()->getOperands()))
      r.setType(v.getType());
    return success();
  }
  if (auto hostCall = dyn_cast<kg::HostCallOp>(op)) {
    // A callback's results cannot be inferred. Called with the types of the
    // loaded program, it keeps the declared result types; called with other
    // types (new sizes, `?` dims), its results keep their rank and element
    // type and get `?` dims (the interpreter checks each result against its
    // type when the call returns).
    auto it = hostCallOperandTypes.find(&op);
    if (it != hostCallOperandTypes.end() &&
        TypeRange(it->second) == hostCall.getOperandTypes())
      return success();
    for (OpResult r : op.getResults())
      r.setType(dynamicDims(r.getType()));
    return success();
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    FailureOr<func::FuncOp> fn =
        specializeCallee(&op, call.getCalleeAttr(), call.getOperandTypes());
    if (failed(fn))
      return failure();
    setCallee(&op, *fn);
    return success();
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (failed(refine(ifOp.getThenRegion())) ||
        failed(refine(ifOp.getElseRegion())))
      return failure();
    if (ifOp.getNumResults() == 0)
      return success();
    auto thenYield = ifOp.thenYield(), elseYield = ifOp.elseYield();
    for (auto [i, r] : llvm::enumerate(ifOp.getResults())) {
      Type t = joinTypes(thenYield.getOperand(i).getType(),
                         elseYield.getOperand(i).getType());
      if (!t)
        return ifOp.emitError("branches yield incompatible types for result #")
               << i;
      r.setType(t);
    }
    return success();
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    // Iterate to a fixed point: loop-carried types only get less specific
    // (each round turns at least one dim into `?`), so this ends.
    SmallVector<Type> carried(forOp.getInitArgs().getTypes());
    for (bool changed = true; changed;) {
      changed = false;
      for (auto [arg, t] : llvm::zip(forOp.getRegionIterArgs(), carried))
        arg.setType(t);
      if (failed(refine(forOp.getRegion())) ||
          failed(joinInto(forOp, carried,
                          TypeRange(forOp.getYieldedValues()), changed)))
        return failure();
    }
    for (auto [r, t] : llvm::zip(forOp.getResults(), carried))
      r.setType(t);
    return success();
  }
  if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
    // The same fixed point over the `before` region's arguments; the
    // `after` region takes what scf.condition forwards, as do the results.
    SmallVector<Type> carried(whileOp.getInits().getTypes());
    SmallVector<Type> forwarded;
    for (bool changed = true; changed;) {
      changed = false;
      setBlockArgTypes(whileOp.getBefore().front(), carried);
      if (failed(refine(whileOp.getBefore())))
        return failure();
      forwarded = llvm::to_vector(
          whileOp.getConditionOp().getArgs().getTypes());
      setBlockArgTypes(whileOp.getAfter().front(), forwarded);
      if (failed(refine(whileOp.getAfter())) ||
          failed(joinInto(whileOp, carried,
                          whileOp.getYieldOp().getResults().getTypes(),
                          changed)))
        return failure();
    }
    for (auto [r, t] : llvm::zip(whileOp.getResults(), forwarded))
      r.setType(t);
    return success();
  }
  if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(
            op.getContext(), op.getLoc(), op.getOperands(),
            op.getAttrDictionary(), op.getPropertiesStorage(), op.getRegions(),
            types)))
      return failure();
    for (auto [r, t] : llvm::zip(op.getResults(), types))
      r.setType(t);
    return success();
  }
  return success();
}

LogicalResult TypeRefiner::refine(Region &region) {
  for (Block &block : region)
    for (Operation &op : block)
      if (failed(refineOp(op)))
        return failure();
  return success();
}

LogicalResult TypeRefiner::refineProgram(kg::ProgramOp program) {
  if (failed(refine(program.getBody())))
    return failure();
  auto ret = cast<kg::ReturnOp>(program.getBody().back().getTerminator());
  program.setFunctionType(FunctionType::get(program.getContext(),
                                            program.getArgumentTypes(),
                                            ret.getOperandTypes()));
  if (auto module = program->getParentOfType<ModuleOp>())
    for (auto &[origin, versions] : variants)
      for (func::FuncOp fn : versions)
        if (SymbolTable::symbolKnownUseEmpty(fn, module))
          fn.erase();
  variants.clear();
  originOf.clear();
  return success();
}

LogicalResult specializeProgram(kg::ProgramOp program, ArrayRef<ArgView> args,
                                ArrayRef<SmallVector<bool>> dynamicDims,
                                StringRef backend, std::string &error) {
  MLIRContext *ctx = program.getContext();
  Block &entry = program.getBody().front();
  if (args.size() != entry.getNumArguments()) {
    error = "@" + program.getSymName().str() + " takes " +
            std::to_string(entry.getNumArguments()) + " arguments, got " +
            std::to_string(args.size());
    return failure();
  }
  // What refinement must know of the program as loaded.
  TypeRefiner refiner(program);
  OpBuilder b(ctx);
  b.setInsertionPointToStart(&entry);

  // Symbol names already used, so fresh ones do not collide.
  llvm::StringSet<> used;
  llvm::DenseMap<unsigned, kg::GuardTensorOp> tensorGuards;
  for (auto g : entry.getOps<kg::GuardTensorOp>()) {
    tensorGuards[cast<BlockArgument>(g.getInput()).getArgNumber()] = g;
    for (Attribute e : g.getShape())
      if (auto s = dyn_cast<StringAttr>(e))
        used.insert(s.getValue());
  }
  unsigned nextSym = 0;
  auto freshSymbol = [&]() {
    std::string s;
    do
      s = "s" + std::to_string(nextSym++);
    while (used.contains(s));
    used.insert(s);
    return s;
  };

  SmallVector<Type> argTypes;
  // Symbols of the old guards whose dims became static, with their sizes
  // (substituted into kg.guard_shape_relation below).
  llvm::StringMap<int64_t> staticSymbols;
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    const ArgView &view = args[i];
    std::string name = program.getArgSourceName(i);
    if (!view.isTensor) {
      Type t = arg.getType();
      if (isa<ShapedType>(t)) {
        error = "argument '" + name + "' is a scalar but @" +
                program.getSymName().str() + " takes a tensor there";
        return failure();
      }
      std::optional<interp::DType> dt = interp::dtypeFromType(t);
      if (!dt || *dt != view.dtype) {
        error = "argument '" + name + "' is a " +
                interp::dtypeName(view.dtype).str() +
                " scalar, which @" + program.getSymName().str() +
                " does not take";
        return failure();
      }
      argTypes.push_back(t);
      continue;
    }
    // A ref argument (a mutable tensor) is specialized like a tensor and
    // stays a ref.
    bool isRef = isa<kt::RefType>(arg.getType());
    RankedTensorType oldType = kg::getGuardedTensorType(arg.getType());
    if (!oldType) {
      error = "argument '" + name + "' is a tensor but @" +
              program.getSymName().str() + " takes a scalar there";
      return failure();
    }
    SmallVector<int64_t> shape;
    SmallVector<Attribute> guardShape;
    kg::GuardTensorOp old = tensorGuards.lookup(i);
    for (auto [d, size] : llvm::enumerate(view.shape)) {
      bool dynamic = i < dynamicDims.size() && d < dynamicDims[i].size() &&
                     dynamicDims[i][d];
      if (!dynamic) {
        if (old && d < old.getShape().size())
          if (auto sym = dyn_cast<StringAttr>(old.getShape()[d]))
            staticSymbols.try_emplace(sym.getValue(), size);
        shape.push_back(size);
        guardShape.push_back(b.getI64IntegerAttr(size));
        continue;
      }
      shape.push_back(ShapedType::kDynamic);
      StringAttr sym;
      if (old && d < old.getShape().size())
        sym = dyn_cast<StringAttr>(old.getShape()[d]);
      guardShape.push_back(sym ? sym : b.getStringAttr(freshSymbol()));
    }
    Type elem = interp::dtypeToType(view.dtype, ctx);
    Type newType = RankedTensorType::get(shape, elem);
    if (isRef)
      newType = kt::RefType::get(ctx, shape, elem);
    arg.setType(newType);
    argTypes.push_back(newType);

    ArrayAttr strides;
    if (old && old.getStrides()) {
      SmallVector<int64_t> s;
      for (unsigned d = 0; d < view.shape.size(); ++d)
        s.push_back(view.stride(d));
      strides = b.getI64ArrayAttr(s);
    }
    Location loc = old ? old.getLoc() : program.getLoc();
    // Replace an existing guard in place; new guards go first.
    if (old)
      b.setInsertionPoint(old);
    else
      b.setInsertionPointToStart(&entry);
    auto guard = kg::GuardTensorOp::create(
        b, loc, arg, TypeAttr::get(elem), b.getArrayAttr(guardShape), strides,
        b.getStringAttr(view.device), b.getBoolAttr(view.requiresGrad));
    (void)guard;
    if (old)
      old.erase();
  }
  // Shape relations over symbols that are no longer symbolic: substitute the
  // static sizes; a relation left without symbols is dropped (the static
  // size guards decide, and type inference checks the program for them).
  llvm::StringSet<> defined;
  for (auto g : entry.getOps<kg::GuardTensorOp>())
    for (Attribute e : g.getShape())
      if (auto s = dyn_cast<StringAttr>(e))
        defined.insert(s.getValue());
  for (auto rel :
       llvm::make_early_inc_range(entry.getOps<kg::GuardShapeRelationOp>())) {
    std::string parseError;
    std::optional<kg::ShapeRelation> r =
        kg::parseShapeRelation(rel.getRelation(), parseError);
    if (!r)
      continue; // the verifier reports it
    bool symbolic = false;
    auto substitute = [&](kg::ShapeRelation::Term &t) {
      auto *name = std::get_if<std::string>(&t);
      if (!name)
        return;
      if (!defined.contains(*name)) {
        auto it = staticSymbols.find(*name);
        if (it != staticSymbols.end()) {
          t = it->second;
          return;
        }
      }
      symbolic = true;
    };
    substitute(r->lhs);
    substitute(r->rhs);
    if (!symbolic) {
      rel.erase();
      continue;
    }
    auto spell = [](const kg::ShapeRelation::Term &t) {
      if (auto *name = std::get_if<std::string>(&t))
        return *name;
      return std::to_string(std::get<int64_t>(t));
    };
    rel.setRelation(spell(r->lhs) + " " +
                    kg::ShapeRelation::predSpelling(r->pred).str() + " " +
                    spell(r->rhs));
  }

  // Scalar value guards take the call's value.
  for (auto g : llvm::make_early_inc_range(entry.getOps<kg::GuardValueOp>())) {
    const ArgView &view = args[cast<BlockArgument>(g.getInput()).getArgNumber()];
    Type t = g.getInput().getType();
    TypedAttr value;
    if (isa<FloatType>(t))
      value = b.getFloatAttr(t, view.floatValue);
    else
      value = b.getIntegerAttr(t, view.intValue);
    g.setValueAttr(value);
  }
  // One backend guard.
  for (auto g : llvm::make_early_inc_range(entry.getOps<kg::GuardBackendOp>()))
    g.erase();
  b.setInsertionPointToStart(&entry);
  kg::GuardBackendOp::create(b, program.getLoc(), b.getStringAttr(backend));

  program.setFunctionType(
      FunctionType::get(ctx, argTypes, program.getResultTypes()));

  // Collect diagnostics of refinement and verification into `error`.
  std::string diags;
  {
    // This thread's diagnostics only (other threads may be running calls
    // of the session; kiln/Support/ThreadDiagnostics.h).
    kiln::ThreadDiagnosticHandler handler(
        ctx,
        [&](Diagnostic &d) {
          llvm::raw_string_ostream os(diags);
          if (!diags.empty())
            os << "; ";
          os << d.getLocation() << ": " << d.str();
        },
        /*takeUnowned=*/true);
    if (failed(refiner.refineProgram(program)) ||
        failed(verify(program->getParentOfType<ModuleOp>()))) {
      error = "cannot specialize @" + program.getSymName().str() +
              " for these inputs: " + diags;
      return failure();
    }
  }
  return success();
}

} // namespace kiln::runtime
