//===- Specialize.cpp - Specializing programs for their inputs ------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Specialize.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

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

/// The least specific type of two: equal dims kept, differing dims `?`.
static Type joinTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
  if (!ta || !tb || ta.getRank() != tb.getRank() ||
      ta.getElementType() != tb.getElementType())
    return Type();
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(ta.getShape(), tb.getShape()))
    shape.push_back(x == y ? x : ShapedType::kDynamic);
  return RankedTensorType::get(shape, ta.getElementType());
}

static void setBlockArgTypes(Block &block, TypeRange types) {
  for (auto [arg, t] : llvm::zip(block.getArguments(), types))
    arg.setType(t);
}

/// Refines a function (graph function or callee) for new argument types.
static LogicalResult refineFunction(func::FuncOp fn, TypeRange argTypes) {
  if (fn.isExternal())
    return fn.emitError("cannot specialize external function");
  setBlockArgTypes(fn.front(), argTypes);
  if (failed(refineTypes(fn.getBody())))
    return failure();
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), argTypes, ret.getOperandTypes()));
  return success();
}

static LogicalResult refineCallee(Operation *call, FlatSymbolRefAttr callee,
                                  TypeRange argTypes) {
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, callee);
  if (!fn)
    return call->emitError("unknown callee ") << callee;
  if (TypeRange(fn.getArgumentTypes()) == argTypes)
    return success();
  if (failed(refineFunction(fn, argTypes)))
    return failure();
  for (auto [r, t] : llvm::zip(call->getResults(), fn.getResultTypes()))
    r.setType(t);
  return success();
}

static LogicalResult refineOp(Operation &op) {
  if (auto graph = dyn_cast<kg::GraphOp>(op)) {
    if (graph.isOutlined())
      return refineCallee(&op, graph.getCalleeAttr(),
                          graph.getInputs().getTypes());
    Block &body = graph.getBody().front();
    setBlockArgTypes(body, graph.getInputs().getTypes());
    if (failed(refineTypes(graph.getBody())))
      return failure();
    for (auto [r, v] : llvm::zip(graph.getResults(),
                                 body.getTerminator()->getOperands()))
      r.setType(v.getType());
    return success();
  }
  if (auto brk = dyn_cast<kg::BreakOp>(op)) {
    if (failed(refineTypes(brk.getBody())))
      return failure();
    for (auto [r, v] : llvm::zip(
             brk.getResults(), brk.getBody().front().getTerminator()->getOperands()))
      r.setType(v.getType());
    return success();
  }
  if (auto call = dyn_cast<func::CallOp>(op))
    return refineCallee(&op, call.getCalleeAttr(), call.getOperandTypes());
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (failed(refineTypes(ifOp.getThenRegion())) ||
        failed(refineTypes(ifOp.getElseRegion())))
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
    // Iterate to a fixed point: loop-carried types only get less specific.
    SmallVector<Type> carried(forOp.getInitArgs().getTypes());
    for (int iter = 0; iter < 4; ++iter) {
      for (auto [arg, t] : llvm::zip(forOp.getRegionIterArgs(), carried))
        arg.setType(t);
      if (failed(refineTypes(forOp.getRegion())))
        return failure();
      bool changed = false;
      for (auto [i, v] : llvm::enumerate(forOp.getYieldedValues())) {
        Type t = joinTypes(carried[i], v.getType());
        if (!t)
          return forOp.emitError("loop-carried value #")
                 << i << " changes type incompatibly";
        changed |= t != carried[i];
        carried[i] = t;
      }
      if (!changed)
        break;
    }
    for (auto [r, t] : llvm::zip(forOp.getResults(), carried))
      r.setType(t);
    return success();
  }
  // Ref ops whose result type is their operand's (they implement no type
  // inference): a ref argument that became dynamic changes them too.
  if (auto load = dyn_cast<kt::LoadOp>(op)) {
    load.getResult().setType(
        cast<kt::RefType>(load.getRef().getType()).getTensorType());
    return success();
  }
  if (auto alloc = dyn_cast<kt::AllocRefOp>(op)) {
    alloc.getResult().setType(kt::RefType::get(
        cast<RankedTensorType>(alloc.getValue().getType())));
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

LogicalResult refineTypes(Region &region) {
  for (Block &block : region)
    for (Operation &op : block)
      if (failed(refineOp(op)))
        return failure();
  return success();
}

LogicalResult refineProgramTypes(kg::ProgramOp program) {
  if (failed(refineTypes(program.getBody())))
    return failure();
  auto ret = cast<kg::ReturnOp>(program.getBody().back().getTerminator());
  program.setFunctionType(FunctionType::get(program.getContext(),
                                            program.getArgumentTypes(),
                                            ret.getOperandTypes()));
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
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diags);
      if (!diags.empty())
        os << "; ";
      os << d.getLocation() << ": " << d.str();
      return success();
    });
    if (failed(refineProgramTypes(program)) ||
        failed(verify(program->getParentOfType<ModuleOp>()))) {
      error = "cannot specialize @" + program.getSymName().str() +
              " for these inputs: " + diags;
      return failure();
    }
  }
  return success();
}

} // namespace kiln::runtime
