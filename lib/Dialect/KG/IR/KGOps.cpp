//===- KGOps.cpp - The kg dialect -----------------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace kiln::kg;

#include "kiln/Dialect/KG/IR/KGDialect.cpp.inc"

void KGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/KG/IR/KGOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/KG/IR/KGOps.cpp.inc"

Operation *KGDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  // Folded kg.is_compiling: an i1 host scalar.
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

RankedTensorType kiln::kg::getGuardedTensorType(Type type) {
  if (auto t = dyn_cast<RankedTensorType>(type))
    return t;
  if (auto r = dyn_cast<kt::RefType>(type))
    return r.getTensorType();
  return {};
}

bool kiln::kg::isAllowedInGraph(Operation *op) {
  if (isa<YieldOp, IsCompilingOp>(op))
    return true;
  return !isa<KGDialect>(op->getDialect());
}

StringRef ShapeRelation::predSpelling(Pred p) {
  switch (p) {
  case Pred::EQ:
    return "==";
  case Pred::NE:
    return "!=";
  case Pred::LT:
    return "<";
  case Pred::LE:
    return "<=";
  case Pred::GT:
    return ">";
  case Pred::GE:
    return ">=";
  }
  llvm_unreachable("unknown predicate");
}

bool ShapeRelation::holds(int64_t a, int64_t b) const {
  switch (pred) {
  case Pred::EQ:
    return a == b;
  case Pred::NE:
    return a != b;
  case Pred::LT:
    return a < b;
  case Pred::LE:
    return a <= b;
  case Pred::GT:
    return a > b;
  case Pred::GE:
    return a >= b;
  }
  return false;
}

static std::optional<ShapeRelation::Term> parseTerm(StringRef s) {
  s = s.trim();
  if (s.empty())
    return std::nullopt;
  int64_t v;
  if (!s.getAsInteger(10, v))
    return ShapeRelation::Term(v);
  if (!(llvm::isAlpha(s[0]) || s[0] == '_'))
    return std::nullopt;
  for (char c : s)
    if (!(llvm::isAlnum(c) || c == '_'))
      return std::nullopt;
  return ShapeRelation::Term(s.str());
}

std::optional<ShapeRelation> kiln::kg::parseShapeRelation(StringRef text,
                                                          std::string &error) {
  using Pred = ShapeRelation::Pred;
  // Longest spellings first so "<=" is not read as "<".
  static const std::pair<StringRef, Pred> preds[] = {
      {"==", Pred::EQ}, {"!=", Pred::NE}, {"<=", Pred::LE},
      {">=", Pred::GE}, {"<", Pred::LT},  {">", Pred::GT}};
  for (auto [spelling, pred] : preds) {
    size_t pos = text.find(spelling);
    if (pos == StringRef::npos)
      continue;
    auto lhs = parseTerm(text.take_front(pos));
    auto rhs = parseTerm(text.drop_front(pos + spelling.size()));
    if (!lhs || !rhs) {
      error = "expected 'A op B' with A and B a symbolic dim or an integer";
      return std::nullopt;
    }
    return ShapeRelation{*lhs, *rhs, pred};
  }
  error = "expected one of == != < <= > >=";
  return std::nullopt;
}

/// Returns the argument index if `v` is an argument of the enclosing program.
static std::optional<unsigned> programArgIndex(Operation *op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto program = op->getParentOfType<ProgramOp>();
  if (!arg || !program || arg.getOwner() != &program.getBody().front())
    return std::nullopt;
  return arg.getArgNumber();
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

std::string ProgramOp::getArgSourceName(unsigned i) {
  if (auto name = getArgAttrOfType<StringAttr>(i, kArgNameAttr))
    return name.str();
  return "arg" + std::to_string(i);
}

void ProgramOp::getAsmBlockArgumentNames(Region &region,
                                         OpAsmSetValueNameFn setNameFn) {
  if (&region != &getBody() || region.empty())
    return;
  for (BlockArgument arg : region.front().getArguments())
    if (auto name = getArgAttrOfType<StringAttr>(arg.getArgNumber(), kArgNameAttr))
      setNameFn(arg, name.getValue());
}

ParseResult ProgramOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  StringAttr nameAttr;
  if (parser.parseSymbolName(nameAttr, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> args;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  // Keep each argument's SSA name as its source name.
  for (OpAsmParser::Argument &arg : args) {
    NamedAttrList attrs(arg.attrs);
    StringRef ssa = arg.ssaName.name.drop_front(); // drop '%'
    if (!attrs.get(kArgNameAttr) && !ssa.empty() && !llvm::isDigit(ssa.front()))
      attrs.set(kArgNameAttr, b.getStringAttr(ssa));
    arg.attrs = attrs.getDictionary(b.getContext());
  }
  SmallVector<Type> argTypes;
  for (OpAsmParser::Argument &arg : args)
    argTypes.push_back(arg.type);
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(b.getFunctionType(argTypes, resultTypes)));
  call_interface_impl::addArgAndResultAttrs(
      b, result, args, resultAttrs, getArgAttrsAttrName(result.name),
      getResAttrsAttrName(result.name));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  return parser.parseRegion(*body, args);
}

void ProgramOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << '(';
  Block &entry = getBody().front();
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    if (i)
      p << ", ";
    SmallVector<NamedAttribute> attrs;
    if (DictionaryAttr dict = getArgAttrDict(i))
      for (NamedAttribute a : dict)
        if (a.getName() != kArgNameAttr)
          attrs.push_back(a);
    p.printRegionArgument(arg, attrs);
  }
  p << ')';
  ArrayRef<Type> results = getResultTypes();
  if (!results.empty()) {
    p << " -> ";
    bool paren = results.size() > 1 || isa<FunctionType>(results.front());
    if (paren)
      p << '(';
    llvm::interleaveComma(results, p);
    if (paren)
      p << ')';
  }
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getFunctionTypeAttrName(), getArgAttrsAttrName(),
       getResAttrsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/true);
}

LogicalResult ProgramOp::verify() {
  if (getBody().front().getNumArguments() != getArgumentTypes().size())
    return emitOpError("has ") << getBody().front().getNumArguments()
                               << " block arguments but its type has "
                               << getArgumentTypes().size() << " inputs";
  for (auto [arg, type] :
       llvm::zip(getBody().front().getArguments(), getArgumentTypes()))
    if (arg.getType() != type)
      return emitOpError("block argument type ")
             << arg.getType() << " differs from the signature's " << type;
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  // Guards come first: no guard after any other op.
  Operation *firstNonGuard = nullptr;
  for (Operation &op : getBody().front()) {
    bool isGuard = isa<GuardTensorOp, GuardValueOp, GuardBackendOp,
                       GuardIdentityOp, GuardShapeRelationOp>(op);
    // Constants may precede guards: the folder (e.g. of kg.is_compiling)
    // materializes them at the start of the program body, and they have no
    // effect.
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (!isGuard && !firstNonGuard)
      firstNonGuard = &op;
    if (isGuard && firstNonGuard)
      return op.emitOpError("must come before every non-guard op of the "
                            "program (guards stand at program entry)")
                 .attachNote(firstNonGuard->getLoc())
             << "first non-guard op: '" << firstNonGuard->getName() << "'";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto program = (*this)->getParentOfType<ProgramOp>();
  ArrayRef<Type> expected = program.getResultTypes();
  if (getOperands().size() != expected.size())
    return emitOpError("returns ") << getOperands().size()
                                   << " values but the program has "
                                   << expected.size() << " results";
  for (auto [i, v] : llvm::enumerate(getOperands()))
    if (v.getType() != expected[i])
      return emitOpError("operand #")
             << i << " has type " << v.getType()
             << " but the program result type is " << expected[i];
  return success();
}

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

LogicalResult GraphOp::verify() {
  if (isOutlined())
    return success();
  Region &body = getBody();
  if (!body.hasOneBlock())
    return emitOpError("region must have exactly one block");
  Block &block = body.front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("region has ")
           << block.getNumArguments() << " arguments for "
           << getInputs().size() << " inputs";
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != getInputs()[i].getType())
      return emitOpError("region argument #")
             << i << " has type " << arg.getType() << " but input #" << i
             << " has type " << getInputs()[i].getType();
  // Not getTerminator(): it asserts when the last op is no terminator.
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError("region must end with kg.yield");
  if (yield.getOperands().getTypes() != getResultTypes())
    return emitOpError("kg.yield types (")
           << yield.getOperands().getTypes() << ") differ from result types ("
           << getResultTypes() << ")";
  WalkResult walk = body.walk([&](Operation *op) {
    if (isAllowedInGraph(op))
      return WalkResult::advance();
    // The message goes on the error; the note only points at the host op.
    InFlightDiagnostic diag = emitOpError("holds the host op '")
                              << op->getName()
                              << "'; host code belongs in a kg.break between "
                                 "graphs";
    diag.attachNote(op->getLoc()) << "host op here";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult GraphOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!isOutlined())
    return success();
  auto fn = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this,
                                                              getCalleeAttr());
  if (!fn)
    return emitOpError("outlined graph '")
           << getCallee() << "' is not a func.func in the module";
  FunctionType type = fn.getFunctionType();
  if (TypeRange(type.getInputs()) != TypeRange(getInputs().getTypes()) ||
      TypeRange(type.getResults()) != TypeRange(getResultTypes()))
    return emitOpError("graph function '")
           << getCallee() << "' has type " << type
           << " but the call is (" << getInputs().getTypes() << ") -> ("
           << getResultTypes() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// BreakOp
//===----------------------------------------------------------------------===//

LogicalResult BreakOp::verify() {
  if (getReason().empty())
    return emitOpError("needs a reason (why the capture broke here)");
  if ((*this)->getParentOfType<GraphOp>())
    return emitOpError("cannot be inside a kg.graph");
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getOperands().getTypes() != getResultTypes())
    return emitOpError("kg.yield types (")
           << yield.getOperands().getTypes() << ") differ from result types ("
           << getResultTypes() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// ToHostOp / FromHostOp
//===----------------------------------------------------------------------===//

static bool scalarMatches(Type tensorElem, Type scalar) {
  if (scalar.isIndex())
    return tensorElem.isInteger(64);
  return tensorElem == scalar;
}

LogicalResult ToHostOp::verify() {
  Type elem = getInput().getType().getElementType();
  if (!scalarMatches(elem, getType()))
    return emitOpError("result type ")
           << getType() << " does not match the tensor element type " << elem;
  return success();
}

LogicalResult FromHostOp::verify() {
  Type elem = getType().getElementType();
  if (!scalarMatches(elem, getInput().getType()))
    return emitOpError("input type ")
           << getInput().getType()
           << " does not match the result element type " << elem;
  return success();
}

//===----------------------------------------------------------------------===//
// IsCompilingOp
//===----------------------------------------------------------------------===//

OpFoldResult IsCompilingOp::fold(FoldAdaptor) {
  Operation *op = *this;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (isa<GraphOp>(p))
      return BoolAttr::get(getContext(), true);
    if (auto fn = dyn_cast<func::FuncOp>(p))
      return fn->hasAttr(kGraphFunctionAttr)
                 ? OpFoldResult(BoolAttr::get(getContext(), true))
                 : OpFoldResult();
    if (isa<ProgramOp>(p))
      return BoolAttr::get(getContext(), false);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

LogicalResult GuardTensorOp::verify() {
  if (!programArgIndex(*this, getInput()))
    return emitOpError("guards a value that is not an argument of the program");
  RankedTensorType type = getGuardedTensorType(getInput().getType());
  if (!type)
    return emitOpError("guards a value of type ")
           << getInput().getType() << "; expected a ranked tensor or a !kt.ref";
  if (getDtype() != type.getElementType())
    return emitOpError("dtype ") << getDtype()
                                 << " differs from the argument element type "
                                 << type.getElementType();
  ArrayAttr shape = getShape();
  if ((int64_t)shape.size() != type.getRank())
    return emitOpError("shape has ") << shape.size()
                                     << " entries for a tensor of rank "
                                     << type.getRank();
  for (auto [i, entry] : llvm::enumerate(shape)) {
    int64_t dim = type.getDimSize(i);
    if (auto v = dyn_cast<IntegerAttr>(entry)) {
      if (v.getInt() < 0)
        return emitOpError("shape entry ") << i << " is negative";
      if (!ShapedType::isDynamic(dim) && dim != v.getInt())
        return emitOpError("shape entry ")
               << i << " is " << v.getInt() << " but the argument dim is "
               << dim;
      continue;
    }
    auto sym = dyn_cast<StringAttr>(entry);
    if (!sym || sym.getValue().empty())
      return emitOpError("shape entry ")
             << i << " must be an integer or a symbolic dim name";
    if (!ShapedType::isDynamic(dim))
      return emitOpError("shape entry ")
             << i << " is symbolic ('" << sym.getValue()
             << "') but the argument dim is static (" << dim << ")";
  }
  if (auto strides = getStrides()) {
    if ((int64_t)strides->size() != type.getRank())
      return emitOpError("strides has ") << strides->size()
                                         << " entries for a tensor of rank "
                                         << type.getRank();
    for (Attribute s : *strides)
      if (cast<IntegerAttr>(s).getInt() < 0)
        return emitOpError("strides must be non-negative");
  }
  return success();
}

LogicalResult GuardValueOp::verify() {
  if (!programArgIndex(*this, getInput()))
    return emitOpError("guards a value that is not an argument of the program");
  Type vt = cast<TypedAttr>(getValue()).getType();
  if (vt != getInput().getType())
    return emitOpError("value type ")
           << vt << " differs from the argument type " << getInput().getType();
  return success();
}

LogicalResult GuardBackendOp::verify() {
  if (getBackend().empty())
    return emitOpError("needs a backend name");
  return success();
}

LogicalResult GuardIdentityOp::verify() {
  if (!programArgIndex(*this, getInput()))
    return emitOpError("guards a value that is not an argument of the program");
  return success();
}

LogicalResult GuardShapeRelationOp::verify() {
  std::string error;
  std::optional<ShapeRelation> rel = parseShapeRelation(getRelation(), error);
  if (!rel)
    return emitOpError("cannot parse '") << getRelation() << "': " << error;
  auto program = (*this)->getParentOfType<ProgramOp>();
  llvm::StringSet<> symbols;
  program.getBody().front().walk([&](GuardTensorOp g) {
    for (Attribute e : g.getShape())
      if (auto s = dyn_cast<StringAttr>(e))
        symbols.insert(s.getValue());
  });
  for (const ShapeRelation::Term *t : {&rel->lhs, &rel->rhs})
    if (auto *name = std::get_if<std::string>(t))
      if (!symbols.contains(*name))
        return emitOpError("symbolic dim '")
               << *name << "' is not defined by any kg.guard_tensor";
  return success();
}

//===----------------------------------------------------------------------===//
// GradOp
//===----------------------------------------------------------------------===//

GraphOp GradOp::getLossGraph() {
  return getLoss().getDefiningOp<GraphOp>();
}

LogicalResult GradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  // Operand 0 is the loss; the others are the wrt values, whose gradients
  // have their tensor types (a ref's gradient, its value's type).
  for (auto [i, v] : llvm::enumerate(operands.drop_front())) {
    RankedTensorType t = getGuardedTensorType(v.getType());
    if (!t)
      return emitOptionalError(loc, "'kg.grad' op wrt operand #", i,
                               " must be a float tensor or !kt.ref, got ",
                               v.getType());
    types.push_back(t);
  }
  return success();
}

LogicalResult GradOp::verify() {
  for (Operation *p = (*this)->getParentOp(); p; p = p->getParentOp())
    if (isa<GraphOp>(p))
      return emitOpError("is host code and cannot be inside a kg.graph");
  if (!(*this)->getParentOfType<ProgramOp>())
    return emitOpError("must be inside a kg.program");
  auto lossType = cast<RankedTensorType>(getLoss().getType());
  if (lossType.getRank() != 0 || !isa<FloatType>(lossType.getElementType()))
    return emitOpError("loss must be a rank-0 float tensor (a scalar loss), "
                       "got ")
           << lossType;
  if (getWrt().empty())
    return emitOpError("needs at least one value to differentiate with "
                       "respect to");
  if (getGrads().size() != getWrt().size())
    return emitOpError("has ") << getGrads().size() << " results for "
                               << getWrt().size() << " wrt values";
  GraphOp graph = getLossGraph();
  if (!graph)
    return emitOpError("loss is not computed by a kg.graph (kg.grad "
                       "differentiates through the graph that computes the "
                       "loss)");
  if (graph->getBlock() != (*this)->getBlock())
    return emitOpError("must be in the same block as the kg.graph computing "
                       "its loss")
               .attachNote(graph.getLoc())
           << "the loss's graph";
  for (auto [i, v] : llvm::enumerate(getWrt())) {
    RankedTensorType tensorType = getGuardedTensorType(v.getType());
    if (!tensorType || !isa<FloatType>(tensorType.getElementType()))
      return emitOpError("wrt operand #")
             << i << " must be a float tensor or !kt.ref, got "
             << v.getType();
    if (getGrads()[i].getType() != tensorType)
      return emitOpError("result #")
             << i << " has type " << getGrads()[i].getType()
             << " but the gradient of wrt operand #" << i << " has type "
             << tensorType;
    if (!llvm::is_contained(graph.getInputs(), v)) {
      InFlightDiagnostic diag =
          emitOpError("wrt operand #")
          << i
          << " is not an input of the graph computing the loss; kg.grad "
             "differentiates through that one graph";
      diag.attachNote(graph.getLoc())
          << "the loss's graph @" << graph.getCallee();
      return diag;
    }
  }
  return success();
}

/// Whether the value yielded at `resultIndex` by `block`'s terminator depends
/// on `block`'s argument `argIndex` (through any op, nested regions
/// included).
static bool reaches(Block &block, unsigned argIndex, unsigned resultIndex) {
  llvm::SmallPtrSet<Operation *, 32> reached;
  SmallVector<Value> work{block.getArgument(argIndex)};
  Operation *terminator = block.getTerminator();
  Value target = terminator->getOperand(resultIndex);
  if (target == block.getArgument(argIndex))
    return true;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top || top == terminator || !reached.insert(top).second)
        continue;
      for (Value r : top->getResults()) {
        if (r == target)
          return true;
        work.push_back(r);
      }
    }
  }
  return false;
}

LogicalResult GradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (getAllowUnused())
    return success();
  GraphOp graph = getLossGraph();
  if (!graph)
    return success(); // the verifier reports it
  Block *body = nullptr;
  if (graph.isOutlined()) {
    auto fn = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(
        graph, graph.getCalleeAttr());
    if (!fn || fn.isExternal())
      return success(); // the graph's verifier reports it
    body = &fn.getBody().front();
  } else {
    body = &graph.getBody().front();
  }
  unsigned lossIndex = cast<OpResult>(getLoss()).getResultNumber();
  // A value passed as several inputs reaches the loss when one of them does
  // (its gradient is the sum over them).
  for (auto [i, v] : llvm::enumerate(getWrt())) {
    bool passed = false, reached = false;
    for (auto [j, in] : llvm::enumerate(graph.getInputs()))
      if (in == v) {
        passed = true;
        reached = reached || reaches(*body, j, lossIndex);
      }
    if (!passed || reached)
      continue;
    InFlightDiagnostic diag =
        emitOpError("wrt operand #")
        << i << " does not reach the loss in graph @" << graph.getCallee()
        << " (set allow_unused to get zeros for it)";
    diag.attachNote(graph.getLoc()) << "the loss's graph";
    return diag;
  }
  return success();
}
